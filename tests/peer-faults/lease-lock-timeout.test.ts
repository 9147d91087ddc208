/**
 * Issue 36, fault 11 on PostgreSQL, the timing a fresh clone once met: a
 * paused coordinator, taken over and resumed, found the new owner holding
 * the study's writer lock, and its BEGIN gave up waiting for it
 * (`lock_timeout`, 55P03). It died with `unexpected failure: canceling
 * statement due to lock timeout` (exit 1) where it should report
 * `lease_lost` (exit 5).
 *
 * Here the timing is made by hand, not by sleeps: a second connection takes
 * the lease over and then holds the writer lock (`pg_advisory_xact_lock`, the
 * lock every write transaction of the study takes first:
 * src/storage/postgres-driver.ts) in an open transaction, so the first
 * holder's next write waits out its busy timeout every time. The fenced
 * driver (src/storage/write-fence.ts) looks at the lease again after the
 * timeout: taken over, the write is {@link LeaseLostError}; still held, the
 * database is only busy and the timeout is reported as it is.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isDatabaseBusy } from '../../src/storage/busy.ts';
import type { StudyDatabase } from '../../src/storage/database.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { acquireLease } from '../../src/storage/lease.ts';
import { writerLockKeys } from '../../src/storage/postgres.ts';
import { LEASE_LOST_EXIT_CODE, LeaseLostError } from '../../src/storage/write-fence.ts';
import { POSTGRES_TEST_URL, createTestSchema, postgresAvailable } from '../../src/test-support/postgres.ts';

const postgres = await postgresAvailable();
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KEY = '/studies/lock-timeout';
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

/** A plain connection (another process) holding the study's writer lock in an open transaction until `release`. */
async function holdWriterLock(url: string, schema: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const [high, low] = writerLockKeys(schema);
  await client.query('begin');
  await client.query('select pg_advisory_xact_lock($1, $2)', [high, low]);
  return {
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

const write = (db: StudyDatabase, startedAt: string) =>
  db.insertInto('runs').values({ started_at: startedAt, ended_at: null, stop_reason: null, report: null }).execute();

describe.runIf(postgres)('fault 11 on postgres: a write that times out on the writer lock', () => {
  it('is lease_lost (exit 5) when the lease was taken over meanwhile, and writes nothing', async () => {
    const schema = await createTestSchema();
    cleanups.push(() => schema.drop());
    // A waits at most 300 ms for the writer lock.
    const a = await openDatabase(schema.url, { busyTimeoutMs: 300 });
    const b = await openDatabase(schema.url);
    cleanups.push(
      () => a.destroy(),
      () => b.destroy(),
    );
    await acquireLease(a, { studyKey: KEY, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(0) });
    await write(a, 'before the pause');
    // A pauses; B takes the stale lease over; then the new owner's transaction holds the writer lock.
    const second = await acquireLease(b, {
      studyKey: KEY,
      hostname: 'h2',
      pid: 22,
      ownerId: 'h2:22:b',
      now: at(20_000),
      isProcessAlive: () => true,
    });
    expect(second.generation).toBe(2);
    const lock = await holdWriterLock(POSTGRES_TEST_URL, schema.schema);
    let refused: unknown;
    try {
      // A resumes: its BEGIN waits for the lock, gives up after 300 ms (55P03), and looks at the lease again.
      refused = await rejectionOf(write(a, 'after the pause'));
    } finally {
      await lock.release();
    }
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect(refused).toMatchObject({
      code: 'lease_lost',
      exitCode: LEASE_LOST_EXIT_CODE,
      fence: { ownerId: 'h1:11:a', generation: 1 },
    });
    // With the lock free again A is still fenced out; only A's write from before the pause is there.
    expect(await rejectionOf(write(a, 'later'))).toBeInstanceOf(LeaseLostError);
    expect((await b.selectFrom('runs').select('started_at').execute()).map((row) => row.started_at)).toEqual([
      'before the pause',
    ]);
  });

  it('is the busy timeout, as it is, while the lease is still held: a busy database, not a lost lease', async () => {
    const schema = await createTestSchema();
    cleanups.push(() => schema.drop());
    const a = await openDatabase(schema.url, { busyTimeoutMs: 300 });
    cleanups.push(() => a.destroy());
    await acquireLease(a, { studyKey: KEY, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(0) });
    // Another connection (a reader's brief write, a migration) holds the writer lock; the lease is A's.
    const lock = await holdWriterLock(POSTGRES_TEST_URL, schema.schema);
    let refused: unknown;
    try {
      refused = await rejectionOf(write(a, 'while busy'));
    } finally {
      await lock.release();
    }
    expect(refused).not.toBeInstanceOf(LeaseLostError);
    expect(isDatabaseBusy(refused)).toBe(true);
    // Once the lock is free, A writes as the holder it still is.
    await write(a, 'after');
    expect((await a.selectFrom('runs').select('started_at').execute()).map((row) => row.started_at)).toEqual(['after']);
  });
});
