import { afterEach, describe, expect, it } from 'vitest';
import { readDecisionRecords } from '../corpus/lifecycle-store.ts';
import type { GateDecision } from '../gate/gate.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { insertExperiment } from '../storage/notebook/experiments-store.ts';
import { putVersion } from '../storage/registry.ts';
import { loadPriorExperiments, recordExperiment } from './notebook.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const now = (): Date => new Date('2026-01-01T00:00:00Z');
let db: StudyDatabase | undefined;

afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

const REFUSED: GateDecision = {
  accepted: false,
  reason: 'specialization',
  checks: [{ name: 'shadow', passed: false, statistic: -0.01, threshold: 0, detail: 'specialization: fell' }],
  shadowConsulted: true,
};

/** A notebook with one experiment the loop recorded (round 1) and one row of `evidence` (round 2). */
async function notebook(evidence: string): Promise<StudyDatabase> {
  db = await openDatabase(':memory:');
  const seed = await putVersion(db, 'cues: [a]\n', 'seed', null, null, now);
  const common = { runId: 1, proposer: 'test', fingerprint: 'f', seed: 1, now };
  await recordExperiment(openNotebook(db), {
    ...common,
    round: 1,
    base: seed,
    hash: 'h1',
    candidate: { text: 'cues: [b]\n', delta: 'cues += "b"', rationale: '' },
    candidateId: 'c1',
    change: '+ b',
    decision: REFUSED,
    shadowIds: [],
  });
  await insertExperiment(
    db,
    {
      ...common,
      round: 2,
      baseVersionId: seed.id,
      candidateHash: 'h2',
      delta: 'cues += "c"',
      rationale: '',
      decision: 'refused',
      reason: 'specialization',
      evidence,
      createdAt: now().toISOString(),
      change: null,
      candidateId: 'c2',
    },
    { now },
  );
  return db;
}

describe('the stored evidence the loop reads back', () => {
  it('reads what the loop recorded: a refusal that consulted shadow shows to the proposer as `refused`', async () => {
    const store = await notebook(JSON.stringify({ checks: REFUSED.checks, shadowConsulted: false }));
    const prior = await loadPriorExperiments(openNotebook(store), 3);
    expect(prior.history.map((entry) => entry.reason)).toEqual(['refused', 'specialization']);
    expect((await readDecisionRecords(openNotebook(store))).map((record) => record.shadowConsulted)).toEqual([
      true,
      false,
    ]);
  });

  it('refuses a row whose evidence has no shadowConsulted, naming the experiment and the field', async () => {
    const store = await notebook(JSON.stringify({ checks: REFUSED.checks }));
    const message = /^experiment 2: stored evidence is malformed at evidence\.shadowConsulted: /;
    await expect(loadPriorExperiments(openNotebook(store), 3)).rejects.toThrow(message);
    await expect(readDecisionRecords(openNotebook(store))).rejects.toThrow(message);
  });

  it('refuses a row whose evidence is not JSON, or whose check data is of the wrong type', async () => {
    await expect(loadPriorExperiments(openNotebook(await notebook('{"checks":')), 3)).rejects.toThrow(
      /^experiment 2: stored evidence is not JSON: /,
    );
    await db?.destroy();
    const wrong = [{ ...REFUSED.checks[0], data: { examples: 'ten' } }];
    await expect(
      loadPriorExperiments(openNotebook(await notebook(JSON.stringify({ checks: wrong, shadowConsulted: true }))), 3),
    ).rejects.toThrow(/^experiment 2: stored evidence is malformed at evidence\.checks\.0\.data/);
  });
});
