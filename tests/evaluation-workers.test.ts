/**
 * Evaluation workers on PostgreSQL (src/storage/evaluation-queue.ts), end to
 * end with the compiled CLI: a study run by a coordinator (`kloop run
 * --workers`) and two `kloop worker` processes, one of them SIGKILLed in the
 * middle of a job and the coordinator SIGKILLed with it, then a new
 * coordinator: the notebook (versions, decisions and their evidence,
 * per-example results, proposer calls, corpus lifecycle) is the one the same
 * study leaves when run in one process on SQLite.
 *
 * "In the middle of a job", without timing: the test holds a table lock on
 * `example_results` (LOCK … IN EXCLUSIVE MODE: readers go on, writers wait),
 * so every worker that takes a job executes its examples and then waits to
 * store the first result. Once both workers hold a job (seen in the queue and
 * their heartbeat rows), the test kills one worker and the coordinator, and
 * lets the lock go.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { queueSchemaOf } from '../src/storage/evaluation-queue.ts';
import { notebookSnapshot } from '../src/test-support/notebook-snapshot.ts';
import type { TestSchema } from '../src/test-support/postgres.ts';
import { POSTGRES_TEST_URL, createTestSchema, postgresAvailable } from '../src/test-support/postgres.ts';
import { kloop } from './cli-in-process.ts';
import { EXAMPLE_STUDY, finished, spawnKloop } from './reliability-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A small intent study (14 examples, a lenient gate): 4 experiments, 2 of them accepted, in a few seconds. */
function makeStudy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-workers-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['playbook.yaml', 'program.md'])
    copyFileSync(path.join(EXAMPLE_STUDY, file), path.join(dir, file));
  mkdirSync(path.join(dir, 'corpus'));
  copyFileSync(
    path.join(EXAMPLE_STUDY, 'corpus', 'booking-and-membership.yaml'),
    path.join(dir, 'corpus', 'small.yaml'),
  );
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    [
      'artifact: playbook.yaml',
      'corpus: corpus/small.yaml',
      'seed: 7',
      'proposer: { candidatesPerRound: 2, maxEvaluations: 20, maxScreened: 100 }',
      'gate: { alpha: 0.3, shadowAlpha: 0.5 }',
      'stopping: { maxExperiments: 4 }',
    ].join('\n'),
  );
  return dir;
}

/** The snapshot without run ids: the killed coordinator's run is one more row of `runs` (its experiments: none). */
async function notebookOf(location: string): Promise<Record<string, unknown>> {
  const db = await openDatabase(location, { readonly: true });
  try {
    const snapshot = await notebookSnapshot(db);
    const { runs: _runs, ...rest } = snapshot;
    return {
      ...rest,
      experiments: (snapshot.experiments as Array<Record<string, unknown>>).map(
        ({ run_id: _run, ...experiment }) => experiment,
      ),
    };
  } finally {
    await db.destroy();
  }
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<unknown> {
  const done = finished(child);
  child.kill(signal);
  return done;
}

describe.runIf(postgres)('evaluation workers on PostgreSQL', () => {
  it('2 workers, one SIGKILLed mid-job and the coordinator with it, then a new coordinator: the notebook of the single-process SQLite run', async () => {
    const single = makeStudy();
    const shared = makeStudy();
    const schema: TestSchema = await createTestSchema();
    cleanups.push(() => schema.drop());

    const alone = await kloop('run', single, '--quiet', '--json');
    expect(alone.code).toBe(0);
    const expected = await notebookOf(path.join(single, '.kloop', 'kloop.db'));
    expect((expected.experiments as Array<{ decision: string }>).map((row) => row.decision)).toEqual([
      'accepted',
      'refused',
      'refused',
      'accepted',
    ]);

    await (await openDatabase(schema.url)).destroy(); // the notebook's tables, so that one can be locked
    const blocker = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await blocker.connect();
    cleanups.push(() => blocker.end().catch(() => undefined));
    await blocker.query(`begin; lock table ${schema.schema}.example_results in exclusive mode`);

    const workers = [0, 1].map(() => spawnKloop(['worker', shared, '--db', schema.url, '--concurrency', '1']));
    const outputs = workers.map((worker) => finished(worker));
    cleanups.push(() => workers.forEach((worker) => worker.exitCode === null && worker.kill('SIGKILL')));
    const coordinator = spawnKloop(['run', shared, '--db', schema.url, '--workers', '--batch-size', '2']);
    const first = finished(coordinator);

    // Both workers mid-job: each holds a locked job (its heartbeat row names its pid), blocked on storing a result.
    const observer = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await observer.connect();
    cleanups.push(() => observer.end().catch(() => undefined));
    const busyPids = async (): Promise<number[]> => {
      const rows = await observer.query<{ pid: number }>(
        `select distinct l.pid from ${queueSchemaOf(schema.schema)}.jobs j join ${schema.schema}.leases l on l.study_key = 'study#worker:' || j.locked_by where j.locked_by is not null`,
      );
      return rows.rows.map((row) => Number(row.pid)).sort();
    };
    await vi.waitFor(async () => expect(await busyPids()).toEqual(workers.map((worker) => worker.pid!).sort()), {
      timeout: 90_000,
      interval: 100,
    });

    const [victim, survivor] = workers as [ChildProcess, ChildProcess];
    await Promise.all([stop(victim, 'SIGKILL'), stop(coordinator, 'SIGKILL')]);
    expect((await first).signal).toBe('SIGKILL');
    await blocker.query('commit');

    const second = await finished(
      spawnKloop(['run', shared, '--db', schema.url, '--workers', '--batch-size', '2', '--json']),
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/took over the lease of pid \d+/);
    await stop(survivor, 'SIGTERM');
    const survived = await outputs[1]!;
    expect(survived.stderr).toMatch(/: done/);

    expect(await notebookOf(schema.url)).toEqual(expected);
  }, 240_000);
});
