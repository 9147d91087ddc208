import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenDatabaseOptions } from './database.ts';
import type { StudyDatabase } from './study-database.ts';
import { openDatabase } from './database.ts';
import type { LeaseOptions } from './lease.ts';
import {
  LEASE_STALE_AFTER_MS,
  STUDY_BUSY_EXIT_CODE,
  StudyBusyError,
  acquireLease,
  readLease,
  releaseLease,
  renewLease,
  startLeaseHeartbeat,
  staleReason,
  tryAcquireLease,
} from './lease.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function memory(): Promise<StudyDatabase> {
  const db = await openDatabase(':memory:');
  cleanups.push(() => db.destroy());
  return db;
}

async function fileDatabase(): Promise<{
  file: string;
  open: (options?: OpenDatabaseOptions) => Promise<StudyDatabase>;
}> {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-lease-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  const file = path.join(directory, 'kloop.db');
  return {
    file,
    open: async (options?: OpenDatabaseOptions) => {
      const db = await openDatabase(file, options);
      cleanups.push(() => db.destroy());
      return db;
    },
  };
}

const T0 = new Date('2025-01-01T00:00:00.000Z');
const at = (ms: number) => () => new Date(T0.getTime() + ms);
const alive = () => true;
const dead = () => false;
const key = '/studies/a';

describe('the run lease', () => {
  it('is taken when free, kept by its owner, refused to a live other owner', async () => {
    const db = await memory();
    const first = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 11,
      ownerId: 'h1:11:a',
      now: at(0),
      isProcessAlive: alive,
    });
    expect(first.acquired).toBe(true);
    const again = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 11,
      ownerId: 'h1:11:a',
      now: at(1_000),
      isProcessAlive: alive,
    });
    expect(again.acquired).toBe(true);
    const other = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      ownerId: 'h1:22:b',
      now: at(1_000),
      isProcessAlive: alive,
    });
    expect(other).toMatchObject({ acquired: false, holder: { pid: 11, hostname: 'h1', acquiredAt: T0.toISOString() } });
    // Another study is independent.
    expect((await tryAcquireLease(db, { studyKey: '/studies/b', ownerId: 'h1:22:b', now: at(0) })).acquired).toBe(true);
  });

  it('refuses with a message naming pid, host and start, exit code 3', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const error = await acquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      now: at(10),
      isProcessAlive: alive,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StudyBusyError);
    expect((error as StudyBusyError).exitCode).toBe(3);
    expect((error as StudyBusyError).message).toBe(
      `study is being run by pid 11 on host h1 since ${T0.toISOString()}; use --wait to wait`,
    );
  });

  it('is taken over when the heartbeat is older than the timeout, whatever the host', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'other-host', pid: 11, now: at(0) });
    const fresh = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      now: at(LEASE_STALE_AFTER_MS),
      isProcessAlive: dead,
    });
    expect(fresh.acquired).toBe(false); // another host: its pid cannot be checked, only its heartbeat
    const stale = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      ownerId: 'h1:22:b',
      now: at(LEASE_STALE_AFTER_MS + 1),
      isProcessAlive: alive,
    });
    expect(stale).toMatchObject({ acquired: true, tookOverFrom: { pid: 11, hostname: 'other-host' } });
    expect((await readLease(db, key))?.ownerId).toBe('h1:22:b');
  });

  it('is taken over at once on the same host when its process is gone', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const result = await tryAcquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      now: at(100),
      isProcessAlive: (pid) => pid !== 11,
    });
    expect(result).toMatchObject({ acquired: true, tookOverFrom: { pid: 11 } });
  });

  it('judges staleness from the heartbeat age and the process', () => {
    const lease = {
      studyKey: key,
      ownerId: 'x',
      hostname: 'h1',
      pid: 11,
      acquiredAt: T0.toISOString(),
      heartbeatAt: T0.toISOString(),
    };
    const judge = { now: new Date(T0.getTime() + 5_000), staleAfterMs: 15_000, hostname: 'h1', isProcessAlive: alive };
    expect(staleReason(lease, judge)).toBeNull();
    expect(staleReason(lease, { ...judge, isProcessAlive: dead })).toMatch(/process 11 no longer exists/);
    expect(staleReason(lease, { ...judge, hostname: 'h2', isProcessAlive: dead })).toBeNull();
    expect(staleReason(lease, { ...judge, now: new Date(T0.getTime() + 15_001) })).toMatch(/older than 15 s/);
    expect(staleReason({ ...lease, heartbeatAt: 'garbage' }, judge)).toMatch(/older than/);
  });

  it('of two take-overs at once, exactly one wins and the other sees it as the holder', async () => {
    // Two connections of one thread: the one that finds the write lock taken waits at most its busy timeout (50 ms), then tries again.
    const { open } = await fileDatabase();
    const [one, two] = [await open({ busyTimeoutMs: 50 }), await open({ busyTimeoutMs: 50 })];
    await acquireLease(one, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const results = await Promise.all([
      tryAcquireLease(one, {
        studyKey: key,
        hostname: 'h1',
        pid: 22,
        ownerId: 'h1:22:a',
        now: at(20_000),
        isProcessAlive: alive,
      }),
      tryAcquireLease(two, {
        studyKey: key,
        hostname: 'h1',
        pid: 33,
        ownerId: 'h1:33:b',
        now: at(20_000),
        isProcessAlive: alive,
      }),
    ]);
    const winner = await readLease(one, key);
    expect(['h1:22:a', 'h1:33:b']).toContain(winner?.ownerId);
    const [won, lost] = winner?.ownerId === 'h1:22:a' ? results : [results[1]!, results[0]!];
    expect(won).toMatchObject({ acquired: true, lease: { ownerId: winner!.ownerId }, tookOverFrom: { pid: 11 } });
    expect(lost).toEqual({ acquired: false, holder: winner });
  });

  it('renewal and release only touch the owner’s own lease', async () => {
    const db = await memory();
    const mine = await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    expect(await renewLease(db, mine, at(1_000))).toBe(true);
    expect((await readLease(db, key))?.heartbeatAt).toBe(at(1_000)().toISOString());
    const taker = await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, now: at(60_000) });
    expect(await renewLease(db, mine)).toBe(false);
    await releaseLease(db, mine); // no longer ours: nothing happens
    expect((await readLease(db, key))?.ownerId).toBe(taker.ownerId);
    await releaseLease(db, taker);
    expect(await readLease(db, key)).toBeUndefined();
  });

  it('--wait polls until the holder releases, and stops on abort', async () => {
    const db = await memory();
    const holder = await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11 });
    const waits: number[] = [];
    const waiting = acquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      wait: true,
      pollIntervalMs: 10,
      isProcessAlive: alive,
      onWait: (lease) => waits.push(lease.pid),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await releaseLease(db, holder);
    expect((await waiting).pid).toBe(22);
    expect(waits).toEqual([11]);
    const controller = new AbortController();
    const aborted = acquireLease(db, {
      studyKey: key,
      hostname: 'h1',
      pid: 33,
      wait: true,
      pollIntervalMs: 10,
      isProcessAlive: alive,
      signal: controller.signal,
    });
    controller.abort(new Error('stop waiting'));
    await expect(aborted).rejects.toThrow('stop waiting');
  });

  it('a worker-thread heartbeat renews a file database and reports a lost lease', async () => {
    const { file, open } = await fileDatabase();
    const db = await open();
    const lease = await acquireLease(db, { studyKey: key, now: at(0) });
    let lost = 0;
    const heartbeat = startLeaseHeartbeat(db, lease, { file, intervalMs: 20, onLost: () => (lost += 1) });
    cleanups.push(() => heartbeat.stop());
    await expect
      .poll(async () => (await readLease(db, key))?.heartbeatAt, { timeout: 5_000 })
      .not.toBe(T0.toISOString());
    // Someone takes it over: the worker notices and says so once.
    await db.updateTable('leases').set({ owner_id: 'thief' }).where('study_key', '=', key).execute();
    await expect.poll(() => lost, { timeout: 5_000 }).toBe(1);
    await heartbeat.stop();
    await heartbeat.stop();
  });

  it('a timer heartbeat renews a database without a file', async () => {
    const db = await memory();
    const lease = await acquireLease(db, { studyKey: key, now: at(0) });
    const heartbeat = startLeaseHeartbeat(db, lease, { intervalMs: 10 });
    cleanups.push(() => heartbeat.stop());
    await expect
      .poll(async () => (await readLease(db, key))?.heartbeatAt, { timeout: 5_000 })
      .not.toBe(T0.toISOString());
  });
});

/**
 * A plugin that holds the `n`-th SELECT a connection runs (counting from 1)
 * once its rows are read, until `release()`: the connection stops right
 * there, inside its transaction if it is in one, for as long as the test
 * needs. `paused` resolves when it has stopped. Nothing here waits on time.
 */
function pauseAfterSelect(n: number): { plugin: KyselyPlugin; paused: Promise<void>; release: () => void } {
  let selects = 0;
  let target: unknown;
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const paused = new Promise<void>((resolve) => (reached = resolve));
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (args.node.kind === 'SelectQueryNode' && ++selects === n) target = args.queryId;
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (args.queryId === target) {
        reached();
        await released;
      }
      return args.result;
    },
  };
  return { plugin, paused, release };
}

/** Any rejection, or 'resolved'. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error;
  }
}

describe('the run lease under interleaved connections (by hand, no timing)', () => {
  // A: the process taking the lease, stopped between its read and its write.
  // B: another process (its own connection, busy timeout 0: it learns at once that the write lock is taken).
  const a = (pid: number): LeaseOptions => ({
    studyKey: key,
    hostname: 'h1',
    pid,
    ownerId: `h1:${pid}:a`,
    now: at(20_000),
    isProcessAlive: (other) => other !== 11,
  });
  const b: LeaseOptions = {
    studyKey: key,
    hostname: 'h1',
    pid: 33,
    ownerId: 'h1:33:b',
    now: at(20_000),
    isProcessAlive: (other) => other !== 11,
    retry: { attempts: 3, backoffMs: 1 },
  };

  it('A reads a free lease, B tries to write, A writes: B is told busy (exit 3), never an SQLite error; A holds the lease', async () => {
    const { file, open } = await fileDatabase();
    const gate = pauseAfterSelect(2); // select 1: A's lock-free look; select 2: its read under the write lock
    const connectionA = (await open()).withPlugin(gate.plugin);
    const connectionB = await open({ busyTimeoutMs: 0 });
    const taking = tryAcquireLease(connectionA, a(22));
    await gate.paused; // A has read "free", holds the write lock, has not written yet
    try {
      // B cannot write between A's read and A's write: not the lease…
      expect(await tryAcquireLease(connectionB, b)).toEqual({
        acquired: false,
        holder: undefined,
        lockedMs: expect.any(Number),
      });
      const refused = await rejectionOf(acquireLease(connectionB, b));
      expect(refused).toBeInstanceOf(StudyBusyError);
      expect(refused).toMatchObject({ code: 'study_busy', exitCode: STUDY_BUSY_EXIT_CODE, holder: undefined });
      expect((refused as StudyBusyError).message).toMatch(
        /^the study database stayed locked by another process for \d+ s \(no run holds the study's lease\); use --wait to wait$/,
      );
      // …nor anything else (a heartbeat's UPDATE on a connection of its own): the writer is the one that waits.
      const sqlite = new Database(file, { timeout: 0 });
      try {
        expect(() =>
          sqlite
            .prepare(
              "insert into leases (study_key, owner_id, hostname, pid, acquired_at, heartbeat_at) values ('/studies/other', 'x', 'h1', 44, 't', 't')",
            )
            .run(),
        ).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
      } finally {
        sqlite.close();
      }
    } finally {
      gate.release();
    }
    expect(await taking).toEqual({ acquired: true, lease: expect.objectContaining({ ownerId: 'h1:22:a', pid: 22 }) });
    // Now B finds A's lease, by a read, and names it.
    const holder = await readLease(connectionB, key);
    expect(holder?.ownerId).toBe('h1:22:a');
    expect(await tryAcquireLease(connectionB, b)).toEqual({ acquired: false, holder });
    const busy = await rejectionOf(acquireLease(connectionB, b));
    expect(busy).toMatchObject({ code: 'study_busy', exitCode: STUDY_BUSY_EXIT_CODE, holder });
    expect((busy as StudyBusyError).message).toBe(
      `study is being run by pid 22 on host h1 since ${at(20_000)().toISOString()}; use --wait to wait`,
    );
    expect(await connectionB.selectFrom('leases').select('owner_id').execute()).toEqual([{ owner_id: 'h1:22:a' }]);
  });

  it('A reads a dead owner’s lease, B tries to take it over too, A takes it over: B is told busy, then names A', async () => {
    const { open } = await fileDatabase();
    const setup = await open();
    await acquireLease(setup, { studyKey: key, hostname: 'h1', pid: 11, ownerId: 'h1:11:dead', now: at(0) });
    const gate = pauseAfterSelect(2);
    const connectionA = (await open()).withPlugin(gate.plugin);
    const connectionB = await open({ busyTimeoutMs: 0 });
    const taking = tryAcquireLease(connectionA, a(22));
    await gate.paused;
    try {
      expect(await tryAcquireLease(connectionB, b)).toEqual({
        acquired: false,
        holder: undefined,
        lockedMs: expect.any(Number),
      });
      // The dead owner's row is untouched while A decides.
      expect((await readLease(connectionB, key))?.ownerId).toBe('h1:11:dead');
    } finally {
      gate.release();
    }
    expect(await taking).toMatchObject({
      acquired: true,
      lease: { ownerId: 'h1:22:a' },
      tookOverFrom: { ownerId: 'h1:11:dead', pid: 11 },
    });
    expect(await tryAcquireLease(connectionB, b)).toMatchObject({
      acquired: false,
      holder: { ownerId: 'h1:22:a', pid: 22 },
    });
  });

  it('a live holder is named even while another connection holds the write lock', async () => {
    const { open } = await fileDatabase();
    const setup = await open();
    const holder = await acquireLease(setup, {
      studyKey: key,
      hostname: 'h1',
      pid: 22,
      ownerId: 'h1:22:a',
      now: at(20_000),
    });
    // A (the holder's own connection) stops inside a write transaction of its run.
    const gate = pauseAfterSelect(1);
    const connectionA = (await open()).withPlugin(gate.plugin);
    const writing = connectionA.transaction().execute(async (transaction) => {
      await transaction.selectFrom('runs').selectAll().execute();
      await transaction
        .insertInto('runs')
        .values({ started_at: 't', ended_at: null, stop_reason: null, report: null })
        .execute();
    });
    await gate.paused;
    try {
      const connectionB = await open({ busyTimeoutMs: 0 });
      expect(await tryAcquireLease(connectionB, b)).toEqual({ acquired: false, holder });
    } finally {
      gate.release();
    }
    await writing;
  });
});
