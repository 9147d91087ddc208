/**
 * Issue 36, fault 11: a coordinator paused (SIGSTOP) long enough for a second
 * run to take its lease over went on writing decisions when it was resumed
 * (SIGCONT), and exited 0, 1 or 3 depending on flags and timing.
 *
 * Now every write of a lease holder checks the lease's generation (the
 * fencing token) in its own transaction (src/storage/write-fence.ts).
 *
 * - Direct, on SQLite and PostgreSQL: a holder whose lease was taken over by
 *   a second holder cannot write — neither a write on its own, nor a
 *   transaction, nor raw SQL, nor a notebook write — and no row is written.
 * - Through the CLI, on SQLite and PostgreSQL: `kloop run` is stopped after
 *   its first decision (at a moment it holds no write transaction: the test
 *   holds the study's write lock while it stops it), a second `kloop run
 *   --wait` takes the lease over once it is stale (15 s) and runs the study
 *   to its end, then the first is continued: it writes nothing more and exits
 *   5 with `lease_lost`, in text and `--json`. The notebook is the
 *   uninterrupted run's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../../src/storage/study-database.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { acquireLease, readLease, releaseLease, renewLease } from '../../src/storage/lease.ts';
import { writerLockKeys } from '../../src/storage/postgres.ts';
import { LEASE_LOST_EXIT_CODE, LeaseLostError } from '../../src/storage/write-fence.ts';
import { readStudyState, writeStudyState } from '../../src/loop/study-state.ts';
import { POSTGRES_TEST_URL, createTestSchema, postgresAvailable } from '../../src/test-support/postgres.ts';
import type { TestSchema } from '../../src/test-support/postgres.ts';
import { modelArgs } from '../llm-stop-study.ts';
import type { LlmStopStudy } from '../llm-stop-study.ts';
import { databaseFile, finished, spawnKloop, waitForLine } from '../reliability-fixture.ts';
import { makeIdenticalDeltasStudy, serveIdenticalDeltas } from './identical-deltas-study.ts';
import { snapshotNotebook } from './notebook-snapshot.ts';
import { openNotebook } from '../../src/storage/notebook/index.ts';

const postgres = await postgresAvailable();
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KEY = '/studies/fenced';
const T0 = Date.parse('2026-12-07T10:00:00.000Z');
const at = (ms: number) => () => new Date(T0 + ms);

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error;
  }
}

async function runCount(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Two connections (two processes' views) of one fresh notebook on the backend. */
async function twoConnections(backend: 'sqlite' | 'postgres'): Promise<[StudyDatabase, StudyDatabase]> {
  let location: string;
  if (backend === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-fence-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    location = path.join(dir, 'kloop.db');
  } else {
    const schema = await createTestSchema();
    cleanups.push(() => schema.drop());
    location = schema.url;
  }
  const a = await openDatabase(location);
  const b = await openDatabase(location);
  cleanups.push(
    () => a.destroy(),
    () => b.destroy(),
  );
  return [a, b];
}

describe.each(['sqlite', 'postgres'] as const)(
  'fault 11 on %s: a holder whose lease was taken over cannot write',
  (backend) => {
    it.runIf(backend === 'sqlite' || postgres)(
      'every kind of write is refused with lease_lost (exit 5), and no row is written',
      async () => {
        const [a, b] = await twoConnections(backend);
        const first = await acquireLease(a, { studyKey: KEY, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(0) });
        expect(first.generation).toBe(1);
        // While it holds the lease, A writes.
        await a
          .insertInto('runs')
          .values({ started_at: 't0', ended_at: null, stop_reason: null, report: null })
          .execute();
        expect(await runCount(a)).toBe(1);

        // A pauses; its heartbeat stops; B finds the lease stale (20 s > 15 s) and takes it over.
        const second = await acquireLease(b, {
          studyKey: KEY,
          hostname: 'h2',
          pid: 22,
          ownerId: 'h2:22:b',
          now: at(20_000),
          isProcessAlive: () => true,
        });
        expect(second.generation).toBe(2);
        expect(await readLease(b, KEY)).toMatchObject({ ownerId: 'h2:22:b', generation: 2 });

        // A resumes and tries every kind of write.
        // One at a time (a rejection waits for its turn to be looked at).
        const attempts: Array<[string, () => Promise<unknown>]> = [
          [
            'a write on its own',
            () =>
              a
                .insertInto('runs')
                .values({ started_at: 'late', ended_at: null, stop_reason: null, report: null })
                .execute(),
          ],
          ['an update on its own', () => a.updateTable('runs').set({ stop_reason: 'late' }).execute()],
          ['a delete on its own', () => a.deleteFrom('runs').execute()],
          [
            'raw SQL',
            () =>
              sql`insert into runs (started_at, ended_at, stop_reason, report) values ('late', null, null, null)`.execute(
                a,
              ),
          ],
          [
            'a transaction',
            () =>
              a.transaction().execute(async (transaction) => {
                await transaction
                  .insertInto('runs')
                  .values({ started_at: 'late', ended_at: null, stop_reason: null, report: null })
                  .execute();
              }),
          ],
          [
            'a notebook write (the loop state)',
            () => writeStudyState(openNotebook(a), { plateauRounds: 9, consecutiveFailures: 0, lastStopReason: null }),
          ],
        ];
        for (const [what, attempt] of attempts) {
          const refused = await rejectionOf(attempt());
          expect(refused, what).toBeInstanceOf(LeaseLostError);
          expect(refused, what).toMatchObject({
            code: 'lease_lost',
            exitCode: LEASE_LOST_EXIT_CODE,
            fence: { ownerId: 'h1:11:a', generation: 1 },
          });
        }
        // Nothing of A's was written; A still reads; B writes.
        expect(await runCount(a)).toBe(1);
        expect((await a.selectFrom('runs').select('started_at').execute()).map((row) => row.started_at)).toEqual([
          't0',
        ]);
        expect(await readStudyState(openNotebook(b))).toEqual({
          plateauRounds: 0,
          consecutiveFailures: 0,
          lastStopReason: null,
        });
        await b
          .insertInto('runs')
          .values({ started_at: 't1', ended_at: null, stop_reason: null, report: null })
          .execute();
        expect(await runCount(b)).toBe(2);
        // A's heartbeat learns the lease is gone; its release leaves B's lease alone.
        expect(await renewLease(a, first)).toBe(false);
        await releaseLease(a, first);
        expect(await readLease(b, KEY)).toMatchObject({ ownerId: 'h2:22:b', generation: 2 });
        // Released, B's lease is taken afresh by a third holder: generation 1 of a new owner, and B is fenced out.
        await releaseLease(b, second);
        const third = await acquireLease(a, {
          studyKey: KEY,
          hostname: 'h3',
          pid: 33,
          ownerId: 'h3:33:c',
          now: at(30_000),
        });
        expect(third.generation).toBe(1);
        await a
          .insertInto('runs')
          .values({ started_at: 't2', ended_at: null, stop_reason: null, report: null })
          .execute();
        expect(await runCount(a)).toBe(3);
      },
    );
  },
);

describe.runIf(postgres)('fault 11 on postgres: a holder paused inside a transaction', () => {
  // The PostgreSQL take-over through the CLI once hung: the paused run had been stopped while its BEGIN waited for the
  // writer lock, the server granted it the lock, and it held it, idle in its transaction, for as long as it stayed stopped.
  it('keeps neither the writer lock nor the lease: the server ends its idle session, the take-over goes through, and its next write is lease_lost', async () => {
    const schema = await createTestSchema();
    cleanups.push(() => schema.drop());
    // The server ends a session idle in a transaction after 1 s here (the lease's staleness, 15 s, by default).
    const a = await openDatabase(schema.url, { idleInTransactionMs: 1_000 });
    const b = await openDatabase(schema.url, { busyTimeoutMs: 5_000 });
    cleanups.push(
      () => a.destroy(),
      () => b.destroy(),
    );
    await acquireLease(a, { studyKey: KEY, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(0) });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    // A writes inside a transaction and pauses there (what the server sees of a stopped process: idle in transaction).
    const outcome = rejectionOf(
      a.transaction().execute(async (transaction) => {
        await transaction
          .insertInto('runs')
          .values({ started_at: 'before the pause', ended_at: null, stop_reason: null, report: null })
          .execute();
        entered();
        await paused;
        await transaction
          .insertInto('runs')
          .values({ started_at: 'after the pause', ended_at: null, stop_reason: null, report: null })
          .execute();
      }),
    );
    await inside;
    // B finds the lease stale and takes it over: one try, waiting up to 5 s for the writer lock A's transaction holds.
    const second = await acquireLease(b, {
      studyKey: KEY,
      hostname: 'h2',
      pid: 22,
      ownerId: 'h2:22:b',
      now: at(20_000),
      isProcessAlive: () => true,
      retry: { attempts: 1 },
    });
    expect(second.generation).toBe(2);
    resume();
    const refused = await outcome;
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect(refused).toMatchObject({
      code: 'lease_lost',
      exitCode: LEASE_LOST_EXIT_CODE,
      fence: { ownerId: 'h1:11:a', generation: 1 },
    });
    // Nothing of A's transaction was kept; its later writes are refused too; B writes.
    expect(await runCount(b)).toBe(0);
    expect(
      await rejectionOf(
        a.insertInto('runs').values({ started_at: 'late', ended_at: null, stop_reason: null, report: null }).execute(),
      ),
    ).toBeInstanceOf(LeaseLostError);
    await b.insertInto('runs').values({ started_at: 't1', ended_at: null, stop_reason: null, report: null }).execute();
    expect(await runCount(b)).toBe(1);
  });
});

/**
 * Stops the process holding the study's lease at a moment it holds no write
 * transaction: the test takes the study's write lock (SQLite's `BEGIN
 * IMMEDIATE`, PostgreSQL's study writer lock), stops the holder, and lets
 * the lock go. Returns the holder's pid.
 */
async function stopHolder(location: { file: string } | { schema: TestSchema }): Promise<number> {
  if ('file' in location) {
    const sqlite = new Database(location.file, { fileMustExist: true, timeout: 30_000 });
    try {
      sqlite.exec('begin immediate');
      const { pid } = sqlite.prepare("select pid from leases where study_key not like '%#%'").get() as { pid: number };
      process.kill(pid, 'SIGSTOP');
      sqlite.exec('rollback');
      return pid;
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    const [high, low] = writerLockKeys(location.schema.schema);
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1, $2)', [high, low]);
    const { rows } = await client.query<{ pid: number }>(
      `select pid from ${location.schema.schema}.leases where study_key not like '%#%'`,
    );
    process.kill(rows[0]!.pid, 'SIGSTOP');
    await client.query('rollback');
    return rows[0]!.pid;
  } finally {
    await client.end();
  }
}

function continueProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // gone
  }
}

// The two backends' runs at once: each spends most of its time waiting for the stopped run's lease to go stale (15 s).
describe.concurrent.each(['sqlite', 'postgres'] as const)(
  'fault 11 on %s through the CLI: SIGSTOP, take-over, SIGCONT',
  (backend) => {
    it.runIf(backend === 'sqlite' || postgres)(
      'the paused run writes nothing after the take-over and exits 5 (lease_lost), in text and --json; the notebook is the uninterrupted run’s',
      async () => {
        const studies: LlmStopStudy[] = [makeIdenticalDeltasStudy(), makeIdenticalDeltasStudy()];
        cleanups.push(() => studies.forEach((study) => study.cleanup()));
        const [reference, paused] = studies as [LlmStopStudy, LlmStopStudy];
        const schemas = backend === 'postgres' ? [await createTestSchema(), await createTestSchema()] : [];
        for (const schema of schemas) cleanups.push(() => schema.drop());
        const dbArgs = (index: number): string[] => (backend === 'postgres' ? ['--db', schemas[index]!.url] : []);
        const location = (index: number, study: LlmStopStudy): string =>
          backend === 'postgres' ? schemas[index]!.url : databaseFile(study.dir);
        const server = await serveIdenticalDeltas(reference);
        cleanups.push(() => server.close());

        const uninterrupted = await finished(
          spawnKloop(['run', reference.dir, '--json', '--quiet', ...dbArgs(0), ...modelArgs(server)]),
        );
        expect(uninterrupted.code, uninterrupted.stderr).toBe(0);

        const first = spawnKloop(['run', paused.dir, '--json', ...dbArgs(1), ...modelArgs(server)]);
        const firstDone = finished(first);
        let stopped: number | undefined;
        let second: ChildProcess | undefined;
        try {
          await waitForLine(first, /^ {2}#1 /);
          stopped = await stopHolder(
            backend === 'postgres' ? { schema: schemas[1]! } : { file: databaseFile(paused.dir) },
          );
          expect(stopped).toBe(first.pid);
          const before = await snapshotNotebook(location(1, paused));
          // A second run waits for the stopped run's lease to go stale (15 s without a heartbeat), takes it over, and finishes the study.
          second = spawnKloop(['run', paused.dir, '--wait', '--json', ...dbArgs(1), ...modelArgs(server)]);
          const secondResult = await finished(second);
          expect(secondResult.code, secondResult.stderr).toBe(0);
          expect(secondResult.stderr).toMatch(/kloop: took over the lease of pid \d+/);
          const afterTakeOver = await snapshotNotebook(location(1, paused));
          expect(afterTakeOver.experiments.length).toBeGreaterThan(before.experiments.length);

          continueProcess(stopped);
          stopped = undefined;
          const result = await firstDone;
          expect(result.code, result.stderr).toBe(LEASE_LOST_EXIT_CODE);
          // The second run has ended and released the lease: the report cannot name it, and says so.
          expect(result.stderr).toContain(
            `kloop: this run lost the study's lease while it looked dead (paused, or its heartbeat could not reach the database): another process took it over (lease generation 1 → 2) and has released it since. Its writes were refused from the take-over on (fencing), so nothing was written after it; this run (#1) recorded ${before.experiments.length} experiment(s) before.`,
          );
          expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'lease_lost' } });
          // Nothing was written by the continued run: the notebook is the one the second run left, and the uninterrupted run's.
          const final = await snapshotNotebook(location(1, paused));
          expect(final).toEqual(afterTakeOver);
          const expected = await snapshotNotebook(location(0, reference));
          expect(final.experiments).toEqual(expected.experiments);
          expect(final.versions).toEqual(expected.versions);
          expect(final.active).toEqual(expected.active);
          expect(final.decidedTwice).toBe(0);
          expect(final.leases).toBe(0);
        } finally {
          if (stopped !== undefined) continueProcess(stopped);
          second?.kill('SIGKILL');
          first.kill('SIGKILL');
          await firstDone.catch(() => undefined);
        }
      },
      180_000,
    );
  },
);
