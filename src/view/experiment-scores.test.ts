/**
 * Scores read from a hand-built notebook of the current store, whose every
 * number is known: the gate's evidence (a topped-up incumbent: 2 candidate
 * repeats against 4), a shadow the gate did not consult, a graduation between
 * rounds, a duplicate skipped before evaluation, a candidate whose evaluation
 * failed in the infrastructure, and a version activated by hand that no
 * decision measured. Composites no decision recorded are carried from the
 * nearest decision that measured that version on the same membership, else
 * computed from `example_results` over the repeats every member has.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import type { CorpusMove } from '../corpus/lifecycle.ts';
import { writeMoves } from '../corpus/lifecycle-store.ts';
import { activateVersion } from '../storage/activation.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { putVersion, setRegistryVersion } from '../storage/registry.ts';
import { loadExperimentDetail } from './experiment-detail.ts';
import { loadEvaluationIndex, loadExperimentScores } from './experiment-scores.ts';
import { compositeFromResults, type ResultOutcome } from './stored-results.ts';
import { loadStudyOverview } from './study-overview.ts';
import { loadVersionsPage } from './study-pages.ts';
import { notebookVersion } from './view-server.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const FINGERPRINT = 'fp-test';
const at = (second: number): string =>
  `2026-01-01T00:${String(Math.floor(second / 60)).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}.000Z`;
const clock = (second: number) => () => new Date(at(second));
const ZERO = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

interface Row {
  hash: string;
  id: string;
  repeats: number;
  composite: number | null;
  usage?: { inputTokens: number; outputTokens: number; costUsd: number };
  second?: number;
  missed?: string[];
}

async function storeResults(db: StudyDatabase, rows: readonly Row[]): Promise<void> {
  for (const row of rows) {
    for (let repeat = 0; repeat < row.repeats; repeat += 1) {
      const valid = row.composite !== null;
      const record = valid
        ? {
            valid: true,
            composite: row.composite,
            components: {},
            skipped: [],
            metrics: {},
            diagnostics: {
              missedEntities: row.missed ?? [],
              spuriousEntities: [],
              wrongRoles: [],
              missingBehaviors: [],
              extraBehaviors: [],
              missedRelations: [],
              missingProjections: [],
            },
            exampleId: row.id,
            repeat,
          }
        : { valid: false, invalidReason: 'unparsable', message: 'not JSON', exampleId: row.id, repeat };
      await db
        .insertInto('example_results')
        .values({
          fingerprint: FINGERPRINT,
          artifact_hash: row.hash,
          example_id: row.id,
          repeat,
          valid: valid ? 1 : 0,
          composite: row.composite,
          score: JSON.stringify(record),
          usage: JSON.stringify(row.usage ?? ZERO),
          latency_ms: 1,
          created_at: at(row.second ?? 1),
        })
        .execute();
    }
  }
}

function comparison(
  incumbent: number | null,
  candidate: number | null,
  evaluated: number,
  ids: string[],
  before: number[],
  after: number[],
  leftOut: string[] = [],
) {
  return { incumbent, candidate, evaluated, examples: { ids, incumbent: before, candidate: after, leftOut } };
}

async function recordExperiment(
  db: StudyDatabase,
  row: {
    id: number;
    round: number;
    base: number;
    hash: string;
    decision: string;
    reason: string;
    accepted?: number;
    second: number;
    evidence: unknown;
  },
): Promise<void> {
  await db
    .insertInto('experiments')
    .values({
      id: row.id,
      run_id: 1,
      round: row.round,
      proposer: 'test',
      base_version_id: row.base,
      candidate_hash: row.hash,
      delta: `change ${row.id}`,
      rationale: '',
      decision: row.decision,
      reason: row.reason,
      evidence: JSON.stringify(row.evidence),
      accepted_version_id: row.accepted ?? null,
      fingerprint: FINGERPRINT,
      seed: 1,
      created_at: at(row.second),
      change: null,
    })
    .execute();
}

let db: StudyDatabase;
const h1 = contentHash('seed\n');
const h2 = contentHash('two\n');
const h3 = contentHash('three\n');

beforeEach(async () => {
  db = await openDatabase(':memory:');
  await db
    .insertInto('runs')
    .values({ started_at: at(0), ended_at: at(200), stop_reason: 'max_experiments', report: null })
    .execute();
  const seed = await putVersion(db, 'seed\n', 'seed', null, null, clock(0));
  await setRegistryVersion(db, seed.id, 'seed', 'seed', clock(0));
  await setRegistryVersion(db, seed.id, 'seed', 'active', clock(0));
  const placements: CorpusMove[] = [
    ...['o1', 'o2', 'o3'].map((id) => ({
      exampleId: id,
      kind: 'initial' as const,
      from: null,
      to: 'optimization' as const,
      reason: 'file',
    })),
    ...['a1', 'a2'].map((id) => ({
      exampleId: id,
      kind: 'initial' as const,
      from: null,
      to: 'anchor' as const,
      reason: 'file',
    })),
    ...['s1', 's2'].map((id) => ({
      exampleId: id,
      kind: 'initial' as const,
      from: null,
      to: 'shadow' as const,
      reason: 'file',
    })),
  ];
  await writeMoves(openNotebook(db), placements, null, at(0));

  // Experiment 1 (round 1): v1 → v2 accepted; the gate compared every partition, 2 repeats a side.
  await recordExperiment(db, {
    id: 1,
    round: 1,
    base: seed.id,
    hash: h2,
    decision: 'accepted',
    reason: 'accepted',
    second: 10,
    evidence: {
      checks: [
        { name: 'margin', passed: true, statistic: 0.083333, threshold: 0, detail: '', data: { repeats: 2 } },
        { name: 'significance', passed: true, statistic: 0.04, threshold: 0.05, detail: '', data: { pValue: 0.04 } },
        { name: 'shadow', passed: true, statistic: 0.01, threshold: 0.05, detail: '', data: {} },
      ],
      shadowConsulted: true,
      scores: {
        optimization: comparison(0.5, 1.75 / 3, 6, ['o1', 'o2', 'o3'], [0.5, 0.5, 0.5], [0.75, 0.5, 0.5]),
        anchor: comparison(0.5, 0.5, 4, ['a1'], [0.5], [0.5], ['a2']),
        shadow: comparison(0.25, 0.5, 4, ['s1', 's2'], [0.25, 0.25], [0.5, 0.5]),
        usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.01 },
        repeats: { candidate: 2, incumbent: 2 },
      },
    },
  });
  const two = await putVersion(db, 'two\n', 'accepted', seed.id, 1, clock(10));
  await db.updateTable('experiments').set({ accepted_version_id: two.id }).where('id', '=', 1).execute();
  await setRegistryVersion(db, two.id, 'experiment 1 accepted', 'active', clock(10));

  // Experiment 2 (round 2): refused before the shadow; the incumbent topped up to 4 repeats.
  await recordExperiment(db, {
    id: 2,
    round: 2,
    base: two.id,
    hash: 'c2',
    decision: 'refused',
    reason: 'not_significant',
    second: 20,
    evidence: {
      checks: [
        { name: 'margin', passed: true, statistic: 0.016667, threshold: 0, detail: '', data: { repeats: '2+4' } },
        {
          name: 'significance',
          passed: false,
          statistic: 0.4,
          threshold: 0.05,
          detail: '',
          data: { pValue: 0.3, welch: { pValue: 0.4 } },
        },
      ],
      shadowConsulted: false,
      scores: {
        optimization: comparison(1.75 / 3, 0.6, 6, ['o1', 'o2', 'o3'], [0.75, 0.5, 0.5], [0.8, 0.5, 0.5]),
        anchor: comparison(0.52, 0.5, 4, ['a1', 'a2'], [0.54, 0.5], [0.5, 0.5]), // v2 on anchor with 4 repeats
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        repeats: { candidate: 2, incumbent: 4 },
      },
    },
  });
  // Between rounds: s1 graduates into optimization.
  await writeMoves(
    openNotebook(db),
    [{ exampleId: 's1', kind: 'graduated', from: 'shadow', to: 'optimization', reason: 'served' }],
    2,
    at(30),
  );
  // Experiment 3 (round 3): a duplicate skipped before evaluation. Experiment 4: its evaluation failed in the infrastructure.
  await recordExperiment(db, {
    id: 3,
    round: 3,
    base: two.id,
    hash: 'c3',
    decision: 'skipped',
    reason: 'duplicate',
    second: 40,
    evidence: {
      checks: [{ name: 'diversity', passed: false, statistic: 0.1, threshold: 0.2, detail: '' }],
      shadowConsulted: false,
    },
  });
  await recordExperiment(db, {
    id: 4,
    round: 3,
    base: two.id,
    hash: 'c4',
    decision: 'refused',
    reason: 'evaluation_failed',
    second: 50,
    evidence: {
      checks: [{ name: 'evaluation', passed: false, statistic: 1, threshold: 0, detail: 'timeout', data: {} }],
      shadowConsulted: false,
    },
  });
  // A version no decision measured, activated by hand.
  const three = await putVersion(db, 'three\n', 'imported', two.id, null, clock(60));
  await activateVersion(db, { versionId: three.id, actor: 'Ana', now: clock(60) });

  const paid = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };
  await storeResults(db, [
    { hash: h1, id: 'o1', repeats: 2, composite: 0.5, missed: ['Patient'] },
    { hash: h1, id: 'o2', repeats: 2, composite: 0.5 },
    { hash: h1, id: 'o3', repeats: 2, composite: 0.5 },
    { hash: h1, id: 'a1', repeats: 2, composite: 0.5 },
    { hash: h1, id: 'a2', repeats: 2, composite: null },
    { hash: h1, id: 's1', repeats: 2, composite: 0.25 },
    { hash: h1, id: 's2', repeats: 2, composite: 0.25 },
    ...['o1', 'o2', 'o3', 'a1', 'a2'].map((id) => ({
      hash: h2,
      id,
      repeats: 4,
      composite: id === 'o1' ? 0.75 : 0.5,
      usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    })),
    ...['s1', 's2'].map((id) => ({
      hash: h2,
      id,
      repeats: 2,
      composite: 0.5,
      usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    })),
    ...['o1', 'o2', 'o3', 'a1', 'a2'].map((id) => ({ hash: 'c2', id, repeats: 2, composite: 0.5 })),
    { hash: 'c4', id: 'o1', repeats: 1, composite: 0.5, usage: paid, second: 45 },
    { hash: 'c4', id: 'o2', repeats: 1, composite: 0.5, usage: paid, second: 45 },
    { hash: 'c4', id: 'a1', repeats: 1, composite: 0.5, usage: paid, second: 99 }, // stored after its decision
    { hash: h3, id: 'o1', repeats: 1, composite: 1 },
    { hash: h3, id: 'o2', repeats: 1, composite: 1 },
    { hash: h3, id: 'o3', repeats: 1, composite: 0.5 },
    { hash: h3, id: 's1', repeats: 1, composite: 0.5 },
  ]);
});

afterEach(async () => {
  await db.destroy();
});

describe('scores on the store of results per example and repeat', () => {
  it('reads what the gate compared from the evidence, never a 0 for a missing score', async () => {
    const scores = await loadExperimentScores(db);
    expect(scores.map((score) => [score.id, score.scoreSource, score.repeats, score.incumbentRepeats])).toEqual([
      [1, 'evidence', 2, 2],
      [2, 'evidence', 2, 4],
      [3, 'none', 2, 4], // not recorded: carried from the last decision on the same incumbent
      [4, 'none', 2, 4],
    ]);
    const [first, second, skipped, failed] = scores as [
      (typeof scores)[number],
      (typeof scores)[number],
      (typeof scores)[number],
      (typeof scores)[number],
    ];
    expect(first.candidate).toEqual({ optimization: 1.75 / 3, anchor: 0.5, shadow: 0.5 });
    expect(first.incumbentBefore).toEqual({ optimization: 0.5, anchor: 0.5, shadow: 0.25 });
    expect(first.incumbentAfter).toEqual(first.candidate);
    expect(first.compositeDelta).toBe(0.083333);
    expect(first.usage).toEqual({ calls: 14, inputTokens: 100, outputTokens: 20, costUsd: 0.01 });

    expect(second.pValue).toBe(0.3); // the paired test's, not the deciding max
    expect(second.welchPValue).toBe(0.4);
    expect(second.candidate).toEqual({ optimization: 0.6, anchor: 0.5, shadow: null });
    // The shadow the gate did not consult: carried from experiment 1, which measured v2 on the same shadow.
    expect(second.incumbentBefore).toEqual({ optimization: 1.75 / 3, anchor: 0.52, shadow: 0.5 });
    expect(second.incumbentAfter).toEqual(second.incumbentBefore);

    // After the graduation no decision measured v2 on optimization {o1, o2, o3, s1} or shadow {s2}: computed from
    // the stored results over the repeats every member has (s1 has 2 of the 4 asked); anchor carried from experiment 2.
    expect(skipped.candidate).toEqual({ optimization: null, anchor: null, shadow: null });
    expect(skipped.composite).toBeNull();
    expect(skipped.compositeDelta).toBeNull();
    expect(skipped.incumbentBefore).toEqual({
      optimization: (2 * (0.75 + 0.5 + 0.5 + 0.5)) / 8,
      anchor: 0.52,
      shadow: 0.5,
    });
    expect(skipped.usage).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });

    expect(failed.candidate).toEqual({ optimization: null, anchor: null, shadow: null });
    expect(failed.incumbentBefore).toEqual(skipped.incumbentBefore);
    // What the failed evaluation stored up to its decision (not the result stored after it).
    expect(failed.usage).toEqual({ calls: 2, inputTokens: 20, outputTokens: 10, costUsd: 0.002 });
  });

  it('the overview: baseline from the first decision, the hand-activated version computed, the budget summed over example_results', async () => {
    const overview = await loadStudyOverview(db, { studyDir: '/nowhere', now: clock(300) });
    expect(overview.trail.map((point) => [point.kind, point.experimentId, point.versionId])).toEqual([
      ['baseline', 0, 1],
      ['experiment', 1, 2],
      ['experiment', 2, 2],
      ['experiment', 3, 2],
      ['experiment', 4, 2],
      ['active', 4.5, 3],
    ]);
    expect(overview.trail[0]!.composites).toEqual({ optimization: 0.5, anchor: 0.5, shadow: 0.25 });
    // v3 has one repeat of the optimization members and nothing else: null, not 0, where it was never evaluated.
    expect(overview.trail.at(-1)!.composites).toEqual({ optimization: 0.75, anchor: null, shadow: null });
    // 55 results stored; tokens: 24 results of v2 (1 in, 1 out) and 3 of the failed candidate (10 in, 5 out).
    expect(overview.budget.evaluations).toMatchObject({ calls: 55, inputTokens: 24 + 30, outputTokens: 24 + 15 });
    expect(overview.budget.evaluations.costUsd).toBeCloseTo(0.003, 12);
  });

  it('the versions page: each version on the partitions of the latest decision', async () => {
    const index = await loadEvaluationIndex(db);
    const page = await loadVersionsPage(db, index, await loadExperimentScores(db, index));
    expect(page.versions.map((version) => [version.id, version.composites])).toEqual([
      [1, { optimization: (2 * (0.5 * 3 + 0.25)) / 8, anchor: 0.5, shadow: 0.25 }],
      [2, { optimization: 0.5625, anchor: 0.52, shadow: 0.5 }], // anchor: experiment 2's 4 repeats, not experiment 1's 2
      [3, { optimization: 0.75, anchor: null, shadow: null }],
    ]);
  });

  it('the experiment page: per-example changes from the evidence, validity and diagnostics from the stored records', async () => {
    const index = await loadEvaluationIndex(db);
    const scores = await loadExperimentScores(db, index);
    const detail = await loadExperimentDetail(db, index, scores[0]!);
    expect(detail.changes).toEqual([
      {
        exampleId: 'a2',
        partition: 'anchor',
        before: null,
        after: 0.5,
        change: null,
        notes: ['the output became valid'],
      },
      {
        exampleId: 'o1',
        partition: 'optimization',
        before: 0.5,
        after: 0.75,
        change: 0.25,
        notes: ['found entity Patient'],
      },
      { exampleId: 's1', partition: 'shadow', before: 0.25, after: 0.5, change: 0.25, notes: [] },
      { exampleId: 's2', partition: 'shadow', before: 0.25, after: 0.5, change: 0.25, notes: [] },
    ]);
    expect(detail.compared).toEqual({
      optimization: { examples: 3, improved: 1, worsened: 0, validityChanged: 0 },
      anchor: { examples: 2, improved: 0, worsened: 0, validityChanged: 1 },
      shadow: { examples: 2, improved: 2, worsened: 0, validityChanged: 0 },
    });
    expect(detail.diff?.added).toBe(1);
    const second = await loadExperimentDetail(db, index, scores[1]!);
    expect(second.changes.map((change) => [change.exampleId, change.change])).toEqual([
      ['o1', 0.05],
      ['a1', -0.04],
    ]);
    expect(second.compared.shadow).toEqual({ examples: 0, improved: 0, worsened: 0, validityChanged: 0 });
    expect((await loadExperimentDetail(db, index, scores[2]!)).changes).toEqual([]);
  });

  it('the live-update fingerprint changes when a result is stored', async () => {
    const before = await notebookVersion(db);
    expect(await notebookVersion(db)).toBe(before);
    await storeResults(db, [{ hash: h3, id: 'a1', repeats: 1, composite: 0.5 }]);
    expect(await notebookVersion(db)).not.toBe(before);
  });
});

describe('compositeFromResults', () => {
  const outcome = (repeat: number, composite: number | null): ResultOutcome => ({
    repeat,
    valid: composite !== null,
    composite,
    createdAt: at(1),
    usage: ZERO,
  });
  it('averages the valid example-repeats of the repeats every member has; null, never 0, when a member was not evaluated or nothing is valid', () => {
    const outcomes = new Map([
      ['a', [outcome(0, 0.2), outcome(1, 0.4), outcome(2, 0.6)]],
      ['b', [outcome(0, null), outcome(1, 1)]],
      ['c', [outcome(1, 1)]], // no repeat 0
      ['d', [outcome(0, null)]],
    ]);
    expect(compositeFromResults(outcomes, ['a', 'b'], 5)).toEqual({ composite: (0.2 + 0.4 + 1) / 3, repeats: 2 });
    expect(compositeFromResults(outcomes, ['a', 'b'], 1)).toEqual({ composite: 0.2, repeats: 1 });
    expect(compositeFromResults(outcomes, ['a', 'c'], 3)).toBeNull();
    expect(compositeFromResults(outcomes, ['a', 'missing'], 3)).toBeNull();
    expect(compositeFromResults(outcomes, ['d'], 3)).toEqual({ composite: null, repeats: 1 });
    expect(compositeFromResults(outcomes, [], 3)).toBeNull();
  });
});
