/**
 * The corpus lifecycle end to end on a small copy of the reference study
 * with a small corpusPolicy: shadow exposures are counted per decision,
 * examples graduate, a spent shadow rotates, the study refuses to rotate
 * below the minimum and stops, admitted examples let it go on, and the
 * partitions of any earlier decision are reconstructed exactly as the loop
 * used them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCandidateRecords } from '../src/corpus/admission.ts';
import type { PartitionName } from '../src/corpus/example.ts';
import { MIN_SHADOW_EXAMPLES, reconstructPartitions } from '../src/corpus/lifecycle.ts';
import { readCorpusEvents, readCorpusMembers, readDecisionRecords } from '../src/corpus/lifecycle-store.ts';
import { createErrorDrivenProposer } from '../src/proposers/error-driven-proposer.ts';
import type { Proposer } from '../src/proposers/proposer.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { admitToStudy, corpusBoundary, startCorpusLifecycle } from '../src/loop/corpus-lifecycle.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { loadStudy } from '../src/study/load-study.ts';
import type { RunOutcome } from '../src/loop/run-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { kloop, makeSmallStudy, referenceCorpus } from './small-intent-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const POLICY = { graduateAfterDecisions: 2, maxShadowExposures: 4, rotateSlice: 2 };

let study: ReturnType<typeof makeSmallStudy>;
let db: StudyDatabase;
let loaded: LoadedStudy;
let outcome: RunOutcome;
/** Optimization ids the proposer received, one entry per round (the loop calls it once per round). */
const proposerRounds: string[][] = [];
const corpusMessages: string[] = [];

function capturingProposer(): Proposer {
  const inner = createErrorDrivenProposer();
  return {
    id: inner.id,
    propose: (context) => {
      proposerRounds.push(context.examples.map((example) => example.id).sort());
      return inner.propose(context);
    },
  };
}

const ids = (partition: PartitionName): string[] =>
  study.examples
    .filter((example) => example.partition === partition)
    .map((example) => example.id)
    .sort();

beforeAll(async () => {
  study = makeSmallStudy({
    optimization: 14,
    anchor: 3,
    shadow: 10,
    config: [
      'proposer: { candidatesPerRound: 4, concurrency: 2 }',
      'stopping: { maxExperiments: 24, plateauRounds: 6, maxRounds: 8 }',
      `corpusPolicy: { graduateAfterDecisions: ${POLICY.graduateAfterDecisions}, maxShadowExposures: ${POLICY.maxShadowExposures}, rotateSlice: ${POLICY.rotateSlice} }`,
    ],
  });
  loaded = loadStudy(study.dir, { createProposer: capturingProposer });
  db = await openDatabase(studyDatabasePath(study.dir));
  outcome = await runStudy({
    study: loaded,
    notebook: openNotebook(db),
    onCorpusChange: (change) => corpusMessages.push(`${change.kind}: ${change.message}`),
  });
}, 120_000);
afterAll(async () => {
  await db.destroy();
  study.cleanup();
});

describe('corpus lifecycle over a run', () => {
  it('graduates, rotates a spent shadow, then refuses to rotate below the minimum and stops with a reason', async () => {
    const events = await readCorpusEvents(openNotebook(db));
    const graduated = events.filter((event) => event.kind === 'graduated');
    const rotated = events.filter((event) => event.kind === 'rotated_out');
    expect(graduated.length).toBeGreaterThan(0);
    expect(rotated.length).toBeGreaterThan(0);
    expect(
      graduated.every((event) => event.from === 'shadow' && event.to === 'optimization' && event.experimentId !== null),
    ).toBe(true);
    expect(
      rotated.every((event) => event.from === 'shadow' && event.to === 'optimization' && /spent/.test(event.reason)),
    ).toBe(true);
    expect(outcome.stopReason).toBe('shadow_spent');
    expect(outcome.stopDetail).toMatch(
      new RegExp(
        `minimum of ${MIN_SHADOW_EXAMPLES}\\), so the study refuses to rotate: admit new examples with \`kloop corpus add\``,
      ),
    );
    expect(corpusMessages.some((message) => message.startsWith('graduate:'))).toBe(true);
    expect(corpusMessages.some((message) => message.startsWith('rotate:'))).toBe(true);
    // Nothing left the shadow that was not recorded, and the shadow never went below the minimum.
    const members = await readCorpusMembers(openNotebook(db));
    const shadow = members.filter((member) => member.partition === 'shadow');
    expect(shadow.length).toBe(10 - graduated.length - rotated.length);
    expect(shadow.length).toBeGreaterThanOrEqual(MIN_SHADOW_EXAMPLES);
    expect(
      members
        .filter((member) => member.partition === 'anchor')
        .map((member) => member.exampleId)
        .sort(),
    ).toEqual(ids('anchor'));
    expect(loaded.partitions.shadow.map((example) => example.id).sort()).toEqual(
      shadow.map((member) => member.exampleId).sort(),
    );
  });

  it('counts each shadow-consulting decision once per shadow example', async () => {
    const decisions = await readDecisionRecords(openNotebook(db));
    expect(decisions.filter((decision) => decision.shadowConsulted).length).toBeGreaterThan(POLICY.maxShadowExposures);
    const derived = reconstructPartitions(
      await readCorpusEvents(openNotebook(db)),
      decisions,
      decisions.at(-1)!.id + 1,
    ).exposures;
    const stored = Object.fromEntries(
      (await readCorpusMembers(openNotebook(db)))
        .filter((member) => member.shadowExposures > 0)
        .map((member) => [member.exampleId, member.shadowExposures]),
    );
    expect(stored).toEqual(derived);
  });

  it('reconstructs the partitions every decision used', async () => {
    const events = await readCorpusEvents(openNotebook(db));
    const decisions = await readDecisionRecords(openNotebook(db));
    const rows = await db.selectFrom('experiments').select(['id', 'round']).orderBy('id').execute();
    const firstOfRound = new Map<number, number>();
    for (const row of rows) if (!firstOfRound.has(row.round)) firstOfRound.set(row.round, row.id);
    expect(firstOfRound.size).toBe(proposerRounds.length);
    for (const [round, experimentId] of firstOfRound) {
      const at = reconstructPartitions(events, decisions, experimentId);
      expect(at.partitions.optimization, `round ${round}, experiment ${experimentId}`).toEqual(
        proposerRounds[round - 1],
      );
      expect(at.partitions.anchor).toEqual(ids('anchor'));
      expect(at.beforeLifecycle).toBe(false);
    }
    // Before the first graduation: the files' partitions; after it: the graduates are optimization examples.
    const firstGraduation = events.find((event) => event.kind === 'graduated')!;
    const before = reconstructPartitions(events, decisions, firstGraduation.experimentId!);
    expect(before.partitions).toEqual({
      optimization: ids('optimization'),
      anchor: ids('anchor'),
      shadow: ids('shadow'),
    });
    const after = reconstructPartitions(events, decisions, firstGraduation.experimentId! + 1);
    expect(after.partitions.optimization).toContain(firstGraduation.exampleId);
    expect(after.partitions.shadow).not.toContain(firstGraduation.exampleId);
    expect(after.partitions.shadow.length + after.partitions.optimization.length).toBe(24);
    const cli = await kloop('corpus', 'at', study.dir, String(firstGraduation.experimentId! + 1), '--json');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      partitions: after.partitions,
      exposures: after.exposures,
      sizes: { anchor: 3 },
    });
  });

  it('goes on once new examples are admitted: they enter shadow and the spent slice rotates out', async () => {
    const file = path.join(study.dir, 'new.jsonl');
    const fresh = referenceCorpus().shadow.slice(10, 13);
    writeFileSync(file, `${fresh.map((example) => JSON.stringify(example)).join('\n')}\n`);
    const candidates = readCandidateRecords(file);
    if (!candidates.ok) throw new Error('unreadable batch');
    const admission = await admitToStudy(openNotebook(db), loaded, candidates.records, { source: 'new.jsonl' });
    expect(admission).toMatchObject({ admitted: 3, refused: 0 });
    const lastBefore = (await readDecisionRecords(openNotebook(db))).at(-1)!.id;

    const again = loadStudy(study.dir, { createProposer: capturingProposer });
    expect(again.partitions.shadow.map((example) => example.id)).toEqual(
      expect.arrayContaining(fresh.map((example) => example.id)),
    );
    again.stopping.maxExperiments = lastBefore + 4;
    const second = await runStudy({ study: again, notebook: openNotebook(db) });
    expect(second.stopReason).not.toBe('shadow_spent');
    const rotation = (await readCorpusEvents(openNotebook(db))).filter(
      (event) => event.kind === 'rotated_out' && event.experimentId === lastBefore,
    );
    expect(rotation).toHaveLength(POLICY.rotateSlice);
    const at = reconstructPartitions(
      await readCorpusEvents(openNotebook(db)),
      await readDecisionRecords(openNotebook(db)),
      lastBefore + 1,
    );
    expect(at.partitions.shadow).toEqual(expect.arrayContaining(fresh.map((example) => example.id)));
    expect(at.partitions.optimization).toEqual(expect.arrayContaining(rotation.map((event) => event.exampleId)));
  }, 120_000);
});

describe('round boundaries', () => {
  it('move at most one slice per point of the notebook, so a run killed after a boundary resumes as if uninterrupted', async () => {
    const memory = await openDatabase(':memory:');
    try {
      const fresh = loadStudy(study.dir); // an empty notebook: the lifecycle starts from the files
      await startCorpusLifecycle(openNotebook(memory), fresh, () => new Date());
      await memory
        .updateTable('corpus_members')
        .set({ shadow_exposures: POLICY.graduateAfterDecisions })
        .where('partition', '=', 'shadow')
        .execute();
      const first = await corpusBoundary(openNotebook(memory), fresh, () => new Date());
      expect(first.plan.kind).toBe('graduate');
      const second = await corpusBoundary(openNotebook(memory), fresh, () => new Date());
      expect(second).toMatchObject({ plan: { kind: 'none' }, message: null });
      expect((await readCorpusEvents(openNotebook(memory))).filter((event) => event.kind === 'graduated')).toHaveLength(
        POLICY.rotateSlice,
      );
    } finally {
      await memory.destroy();
    }
  });
});
