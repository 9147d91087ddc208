import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../study-database.ts';
import { openDatabase } from '../database.ts';
import { putVersion } from '../registry.ts';
import {
  closeLoopARun,
  listLoopARuns,
  loopADecidedHashes,
  openLoopARun,
  readLoopAProposalHistory,
  recordLoopADecision,
} from './loop-a-store.ts';

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

describe('the Loop A store', () => {
  it('opens, records and closes a run, and reads back what a Loop A proposal needs', async () => {
    db = await openDatabase(':memory:');
    const seed = await putVersion(db, 'v1', 'seed', null, null);
    const runId = await openLoopARun(db, { startedAt: '2026-03-01T10:00:00.000Z', incumbentVersionId: seed.id });
    expect(await listLoopARuns(db)).toEqual([
      {
        id: runId,
        startedAt: '2026-03-01T10:00:00.000Z',
        endedAt: null,
        status: 'running',
        incumbentVersionId: seed.id,
      },
    ]);
    const decision = {
      runId,
      candidateHash: 'h-artifact',
      delta: 'stopList += "app"',
      rationale: 'noise noun',
      decision: 'refused',
      reason: 'no_improvement',
      evidence: { checks: [{ name: 'validity', passed: true }] },
      reviewItemId: null,
      createdAt: '2026-03-01T10:01:00.000Z',
    };
    await recordLoopADecision(db, { ...decision, kind: 'artifact' });
    await recordLoopADecision(db, { ...decision, kind: 'pattern', candidateHash: 'h-pattern', delta: 'pattern p' });
    await closeLoopARun(db, runId, { endedAt: '2026-03-01T10:02:00.000Z', status: 'done', report: { queued: 0 } });

    expect(await loopADecidedHashes(db)).toEqual(new Set(['h-artifact', 'h-pattern']));
    const stored = await db.selectFrom('loop_a_decisions').select('evidence').orderBy('id').executeTakeFirstOrThrow();
    expect(JSON.parse(stored.evidence)).toEqual(decision.evidence);
    const [run] = await listLoopARuns(db);
    expect(run).toMatchObject({ status: 'done', endedAt: '2026-03-01T10:02:00.000Z' });
    // Only artifact decisions are history for the proposer; every registry hash is a tried one.
    expect(await readLoopAProposalHistory(db)).toEqual({
      experiments: [],
      loopADecisions: [{ delta: 'stopList += "app"', decision: 'refused', reason: 'no_improvement' }],
      versionHashes: [seed.hash],
    });
  });
});
