/**
 * The notebook contract: the notebook interface ({@link Notebook}, every
 * store of src/storage/notebook/ bound to one database) gives the same
 * answers on every backend — SQLite, and PostgreSQL when a server answers
 * (src/test-support/postgres.ts; required in CI). Each test opens a fresh
 * notebook: a temporary SQLite file, or a fresh PostgreSQL schema.
 *
 * What it holds: a run's life through the interface (the seed version, a
 * proposer call stored once, an accepted experiment that activates its
 * version in the same transaction, the run's end) read back by the loop's,
 * the history's, the status's and the viewer's reads; the corpus members
 * and events; the response cache's insert-once and replace; schedule runs.
 * The registry (versions, activation) and a transaction that commits or
 * rolls back are held too. The database-level contract (migrations, ids, numbers, leases) is
 * src/storage/storage-contract.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestSchema, postgresAvailable, type TestSchema } from '../../test-support/postgres.ts';
import { openDatabase } from '../database.ts';
import type { StudyDatabase } from '../study-database.ts';
import { type Notebook, openNotebook } from './index.ts';

const postgres = await postgresAvailable();
const schemas: TestSchema[] = [];
const folders: string[] = [];
const handles: StudyDatabase[] = [];

afterAll(async () => {
  for (const db of handles.splice(0)) await db.destroy().catch(() => undefined);
  for (const schema of schemas.splice(0)) await schema.drop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const BACKENDS = [
  {
    name: 'sqlite',
    location: async () => {
      const folder = mkdtempSync(path.join(tmpdir(), 'kloop-notebook-contract-'));
      folders.push(folder);
      return path.join(folder, 'kloop.db');
    },
  },
  ...(postgres
    ? [
        {
          name: 'postgres',
          location: async () => {
            const schema = await createTestSchema();
            schemas.push(schema);
            return schema.url;
          },
        },
      ]
    : []),
];

const T0 = '2026-01-02T03:04:05.000Z';
const now = () => new Date(T0);

async function fresh(backend: (typeof BACKENDS)[number]): Promise<Notebook> {
  const db = await openDatabase(await backend.location());
  handles.push(db);
  return openNotebook(db);
}

describe.each(BACKENDS)('the notebook contract on $name', (backend) => {
  it("a run's life: the seed, a proposer call stored once, an accepted experiment activating its version, the run's end", async () => {
    const notebook = await fresh(backend);
    const seed = await notebook.activeOrSeedVersion('seed text\n', now);
    expect(seed).toMatchObject({ id: 1, text: 'seed text\n', source: 'seed' });
    // The same text again: the active version, not a new one.
    expect((await notebook.activeOrSeedVersion('seed text\n', now)).id).toBe(1);

    const runId = await notebook.insertRun(T0);
    expect(runId).toBe(1);
    const call = {
      runId,
      round: 1,
      attempt: 0,
      proposer: 'offline@1',
      outcome: 'candidates',
      candidates: 1,
      failures: '[]',
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      createdAt: T0,
      candidateIds: JSON.stringify(['c1']),
    };
    expect(await notebook.insertProposalOnce(call)).toBe(true);
    expect(await notebook.insertProposalOnce(call)).toBe(false); // a resumed round pays nothing twice
    expect(await notebook.countProposals(1)).toBe(1);

    const { id, accepted } = await notebook.insertExperiment(
      {
        runId,
        round: 1,
        proposer: 'offline@1',
        baseVersionId: seed.id,
        candidateHash: 'hash-2',
        delta: '+ one line',
        rationale: 'a test',
        decision: 'accepted',
        reason: 'accepted',
        evidence: JSON.stringify({ checks: [], shadowConsulted: false }),
        fingerprint: 'f',
        seed: 7,
        createdAt: T0,
        change: null,
        candidateId: 'c1',
      },
      { acceptedText: 'seed text\none line\n', now },
    );
    expect(id).toBe(1);
    expect(accepted).toMatchObject({ id: 2, text: 'seed text\none line\n' });
    expect(await notebook.countEvaluatedExperiments()).toBe(1);
    expect(await notebook.maxExperimentRound()).toBe(1);
    expect(await notebook.readExperiment(1)).toMatchObject({ id: 1, runId, decision: 'accepted', delta: '+ one line' });
    expect((await notebook.readVersions()).map((version) => version.id)).toEqual([1, 2]);
    expect((await notebook.activeOrSeedVersion('seed text\n', now)).id).toBe(2); // the accepted version is active

    expect(await notebook.readLastRun()).toMatchObject({ id: runId, endedAt: null, stopReason: null });
    await notebook.endRun(runId, { endedAt: T0, stopReason: 'plateau', report: '{}' });
    expect(await notebook.readLastRun()).toEqual({ id: runId, startedAt: T0, endedAt: T0, stopReason: 'plateau' });
    expect(await notebook.removeRunIfEmpty(runId)).toBe(false); // it holds an experiment
  });

  it('the registry stores a version once by content, activates it with its move, and a transaction commits or rolls back', async () => {
    const notebook = await fresh(backend);
    expect(await notebook.getRegistryVersion()).toBeUndefined();
    await expect(notebook.getActiveArtifactText()).rejects.toThrow("the prompt registry has no 'active' version yet");
    const seed = await notebook.putVersion('seed\n', 'seed', null, null, now);
    expect(seed).toEqual({
      id: 1,
      hash: seed.hash,
      text: 'seed\n',
      parentId: null,
      source: 'seed',
      experimentId: null,
      createdAt: T0,
    });
    expect((await notebook.putVersion('seed\n', 'import', null, null, now)).id).toBe(1); // idempotent by content hash
    await notebook.setRegistryVersion(seed.id, 'seed', 'active', now);
    expect(await notebook.getActiveArtifactText()).toBe('seed\n');
    const next = await notebook.transaction(async (tx) => {
      const version = await tx.putVersion('next\n', 'approved', seed.id, null, now);
      await tx.setRegistryVersion(version.id, 'approved', 'active', now);
      return version;
    });
    expect(await notebook.getRegistryVersion()).toEqual(next);
    expect(await notebook.getVersion(2)).toEqual(next);
    await expect(
      notebook.transaction(async (tx) => {
        await tx.putVersion('lost\n', 'approved', next.id, null, now);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await notebook.listVersions()).map((version) => version.text)).toEqual(['seed\n', 'next\n']);
  });

  it('the response cache stores an answer once, and replaces it only when asked', async () => {
    const notebook = await fresh(backend);
    expect(await notebook.readCachedResponse('k')).toBeUndefined();
    await notebook.writeCachedResponse('k', { model: 'm', response: '"first"', createdAt: T0 }, false);
    await notebook.writeCachedResponse('k', { model: 'm', response: '"second"', createdAt: T0 }, false);
    expect(await notebook.readCachedResponse('k')).toBe('"first"');
    await notebook.writeCachedResponse('k', { model: 'm', response: '"third"', createdAt: T0 }, true);
    expect(await notebook.readCachedResponse('k')).toBe('"third"');
  });

  it('a schedule run is stored, ended and listed oldest first (the last `limit`)', async () => {
    const notebook = await fresh(backend);
    const started = await notebook.insertScheduleRun({
      loop: 'B',
      scheduledAt: T0,
      startedAt: T0,
      endedAt: null,
      outcome: 'running',
      detail: {},
    });
    const ended = await notebook.endScheduleRun(started.id, { endedAt: T0, outcome: 'ok', detail: { accepted: 1 } });
    expect(ended).toMatchObject({ id: started.id, loop: 'B', outcome: 'ok', detail: { accepted: 1 } });
    await notebook.insertScheduleRun({
      loop: 'A',
      scheduledAt: T0,
      startedAt: T0,
      endedAt: T0,
      outcome: 'skipped',
      detail: {},
    });
    expect((await notebook.listScheduleRuns()).map((run) => run.loop)).toEqual(['B', 'A']);
    expect((await notebook.listScheduleRuns({ limit: 1 })).map((run) => run.loop)).toEqual(['A']);
    expect((await notebook.listScheduleRuns({ loop: 'B' })).map((run) => run.outcome)).toEqual(['ok']);
  });
});
