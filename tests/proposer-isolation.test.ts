/**
 * The shadow partition is never reachable from a proposer (CONVENTIONS 4,
 * DESIGN §3): a marker word is planted in every shadow goal (file examples
 * and an admitted one), the proposer is wrapped to capture everything it
 * receives — the whole ProposalContext, every score `evaluateOptimization`
 * returns to it, and the candidates it sends back — and neither the marker
 * nor any shadow id may appear anywhere in it.
 */
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCandidateRecords } from '../src/corpus/admission.ts';
import type { IntentExampleRecord } from '../src/corpus/intent-example.ts';
import { readCorpusMembers } from '../src/corpus/lifecycle-store.ts';
import type { PartitionScore } from '../src/evaluator/partition-score.ts';
import { createErrorDrivenProposer } from '../src/proposers/error-driven-proposer.ts';
import type { ProposalContext, Proposer } from '../src/proposers/proposer.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { admitToStudy } from '../src/loop/corpus-lifecycle.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { makeSmallStudy, referenceCorpus } from './small-intent-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const MARKER = 'Quuxblort';
const plant = (example: IntentExampleRecord): IntentExampleRecord =>
  example.partition === 'shadow' ? { ...example, goal: `${example.goal} ${MARKER} matters here.` } : example;

let study: ReturnType<typeof makeSmallStudy>;
let db: StudyDatabase;
let loaded: LoadedStudy;
let shadowIds: string[];
/** Everything the proposer received or returned, as JSON, one entry per call or answer. */
const received: string[] = [];
/** Example ids of every score evaluateOptimization returned, with the optimization ids of that round. */
const optimizationScores: Array<{ scored: string[]; optimization: string[] }> = [];
let proposerCalls = 0;

function describeContext(context: ProposalContext): string {
  const { random: _random, signal: _signal, evaluateOptimization: _evaluate, triedHashes, ...rest } = context;
  return JSON.stringify({ ...rest, triedHashes: [...triedHashes] });
}

function isolatedProposer(): Proposer {
  const inner = createErrorDrivenProposer();
  return {
    id: inner.id,
    async propose(context) {
      proposerCalls += 1;
      received.push(describeContext(context));
      const optimization = context.examples.map((example) => example.id).sort();
      const capture = (score: PartitionScore): PartitionScore => {
        optimizationScores.push({
          scored: [...new Set(score.examples.map((record) => record.exampleId))].sort(),
          optimization,
        });
        received.push(JSON.stringify(score));
        return score;
      };
      capture(await context.evaluateOptimization(context.incumbentText));
      const result = await inner.propose({
        ...context,
        evaluateOptimization: async (text) => capture(await context.evaluateOptimization(text)),
      });
      received.push(
        JSON.stringify(
          result.candidates.map(({ text, delta, rationale, flags }) => ({ text, delta, rationale, flags })),
        ),
      );
      return result;
    },
  };
}

beforeAll(async () => {
  study = makeSmallStudy({
    optimization: 14,
    anchor: 3,
    shadow: 8,
    transform: plant,
    config: [
      'proposer: { candidatesPerRound: 4, concurrency: 2 }',
      'stopping: { maxExperiments: 12, plateauRounds: 4, maxRounds: 4 }',
      // No graduation here: a graduated example legitimately becomes optimization data.
      'corpusPolicy: { graduateAfterDecisions: 1000, maxShadowExposures: 1000 }',
    ],
  });
  db = await openDatabase(studyDatabasePath(study.dir));
  // One admitted example joins the shadow too.
  const admittedFile = path.join(study.dir, 'admitted.jsonl');
  writeFileSync(admittedFile, `${JSON.stringify(plant(referenceCorpus().shadow[12]!))}\n`);
  const records = readCandidateRecords(admittedFile);
  if (!records.ok) throw new Error('unreadable');
  loaded = loadStudy(study.dir, { createProposer: isolatedProposer });
  const admission = await admitToStudy(openNotebook(db), loaded, records.records, { source: 'admitted.jsonl' });
  expect(admission.admitted).toBe(1);
  loaded = loadStudy(study.dir, { createProposer: isolatedProposer });
  shadowIds = loaded.partitions.shadow.map((example) => example.id);
  await runStudy({ study: loaded, notebook: openNotebook(db) });
}, 120_000);
afterAll(async () => {
  await db.destroy();
  study.cleanup();
});

describe('proposer isolation', () => {
  it('runs with a marked shadow that the gate really used', async () => {
    expect(shadowIds).toHaveLength(9);
    expect(loaded.partitions.shadow.every((example) => example.text.includes(MARKER))).toBe(true);
    expect(
      [...loaded.partitions.optimization, ...loaded.partitions.anchor].some((example) => example.text.includes(MARKER)),
    ).toBe(false);
    expect(proposerCalls).toBeGreaterThan(1);
    const exposures = (await readCorpusMembers(openNotebook(db)))
      .filter((member) => member.partition === 'shadow')
      .map((member) => member.shadowExposures);
    expect(Math.min(...exposures)).toBeGreaterThan(0); // the gate consulted the shadow, every example of it
  });

  it('never shows the proposer a shadow goal, a shadow id or a score computed on shadow', () => {
    expect(received.length).toBeGreaterThan(proposerCalls);
    for (const text of received) {
      expect(text.toLowerCase()).not.toContain(MARKER.toLowerCase());
      for (const id of shadowIds) expect(text).not.toContain(`"${id}"`);
    }
  });

  it('shows the proposer only accepted or refused for decisions that consulted the shadow, never the shadow-derived reason', async () => {
    const rows = await db.selectFrom('experiments').select(['delta', 'decision', 'evidence']).execute();
    const shadowRefused = rows.filter(
      (row) => row.decision === 'refused' && (JSON.parse(row.evidence) as { shadowConsulted: boolean }).shadowConsulted,
    );
    expect(shadowRefused.length).toBeGreaterThan(0);
    const histories = received
      .filter((text) => text.startsWith('{"incumbentText"'))
      .map((text) => (JSON.parse(text) as { history: Array<{ delta: string; reason: string }> }).history);
    const seen = histories.flat();
    expect(seen.some((entry) => entry.reason === 'specialization')).toBe(false);
    for (const row of shadowRefused) {
      const entries = seen.filter((entry) => entry.delta === row.delta);
      for (const entry of entries) expect(entry.reason).toBe('refused');
    }
    expect(seen.some((entry) => entry.reason === 'refused')).toBe(true);
  });

  it('scores only optimization examples through evaluateOptimization', () => {
    expect(optimizationScores.length).toBeGreaterThan(proposerCalls);
    for (const { scored, optimization } of optimizationScores) {
      expect(scored).toEqual(optimization);
      expect(scored.some((id) => shadowIds.includes(id))).toBe(false);
    }
  });
});
