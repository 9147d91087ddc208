import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from './database.ts';
import { openDatabase } from './database.ts';
import {
  LEASE_STALE_AFTER_MS,
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

async function fileDatabase(): Promise<{ file: string; open: () => Promise<StudyDatabase> }> {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-lease-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  const file = path.join(directory, 'kloop.db');
  return {
    file,
    open: async () => {
      const db = await openDatabase(file);
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
    const first = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(0), isProcessAlive: alive });
    expect(first.acquired).toBe(true);
    const again = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, ownerId: 'h1:11:a', now: at(1_000), isProcessAlive: alive });
    expect(again.acquired).toBe(true);
    const other = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, ownerId: 'h1:22:b', now: at(1_000), isProcessAlive: alive });
    expect(other).toMatchObject({ acquired: false, holder: { pid: 11, hostname: 'h1', acquiredAt: T0.toISOString() } });
    // Another study is independent.
    expect((await tryAcquireLease(db, { studyKey: '/studies/b', ownerId: 'h1:22:b', now: at(0) })).acquired).toBe(true);
  });

  it('refuses with a message naming pid, host and start, exit code 3', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const error = await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, now: at(10), isProcessAlive: alive }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StudyBusyError);
    expect((error as StudyBusyError).exitCode).toBe(3);
    expect((error as StudyBusyError).message).toBe(`study is being run by pid 11 on host h1 since ${T0.toISOString()}; use --wait to wait`);
  });

  it('is taken over when the heartbeat is older than the timeout, whatever the host', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'other-host', pid: 11, now: at(0) });
    const fresh = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, now: at(LEASE_STALE_AFTER_MS), isProcessAlive: dead });
    expect(fresh.acquired).toBe(false); // another host: its pid cannot be checked, only its heartbeat
    const stale = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, ownerId: 'h1:22:b', now: at(LEASE_STALE_AFTER_MS + 1), isProcessAlive: alive });
    expect(stale).toMatchObject({ acquired: true, tookOverFrom: { pid: 11, hostname: 'other-host' } });
    expect((await readLease(db, key))?.ownerId).toBe('h1:22:b');
  });

  it('is taken over at once on the same host when its process is gone', async () => {
    const db = await memory();
    await acquireLease(db, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const result = await tryAcquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, now: at(100), isProcessAlive: (pid) => pid !== 11 });
    expect(result).toMatchObject({ acquired: true, tookOverFrom: { pid: 11 } });
  });

  it('judges staleness from the heartbeat age and the process', () => {
    const lease = { studyKey: key, ownerId: 'x', hostname: 'h1', pid: 11, acquiredAt: T0.toISOString(), heartbeatAt: T0.toISOString() };
    const judge = { now: new Date(T0.getTime() + 5_000), staleAfterMs: 15_000, hostname: 'h1', isProcessAlive: alive };
    expect(staleReason(lease, judge)).toBeNull();
    expect(staleReason(lease, { ...judge, isProcessAlive: dead })).toMatch(/process 11 no longer exists/);
    expect(staleReason(lease, { ...judge, hostname: 'h2', isProcessAlive: dead })).toBeNull();
    expect(staleReason(lease, { ...judge, now: new Date(T0.getTime() + 15_001) })).toMatch(/older than 15 s/);
    expect(staleReason({ ...lease, heartbeatAt: 'garbage' }, judge)).toMatch(/older than/);
  });

  it('a take-over compares the old heartbeat: of two at once, exactly one wins', async () => {
    const { open } = await fileDatabase();
    const [one, two] = [await open(), await open()];
    await acquireLease(one, { studyKey: key, hostname: 'h1', pid: 11, now: at(0) });
    const results = await Promise.all([
      tryAcquireLease(one, { studyKey: key, hostname: 'h1', pid: 22, ownerId: 'h1:22:a', now: at(20_000), isProcessAlive: alive }),
      tryAcquireLease(two, { studyKey: key, hostname: 'h1', pid: 33, ownerId: 'h1:33:b', now: at(20_000), isProcessAlive: alive }),
    ]);
    expect(results.filter((result) => result.acquired)).toHaveLength(1);
    const winner = await readLease(one, key);
    expect(['h1:22:a', 'h1:33:b']).toContain(winner?.ownerId);
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
    const waiting = acquireLease(db, { studyKey: key, hostname: 'h1', pid: 22, wait: true, pollIntervalMs: 10, isProcessAlive: alive, onWait: (lease) => waits.push(lease.pid) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await releaseLease(db, holder);
    expect((await waiting).pid).toBe(22);
    expect(waits).toEqual([11]);
    const controller = new AbortController();
    const aborted = acquireLease(db, { studyKey: key, hostname: 'h1', pid: 33, wait: true, pollIntervalMs: 10, isProcessAlive: alive, signal: controller.signal });
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
    await expect.poll(async () => (await readLease(db, key))?.heartbeatAt, { timeout: 5_000 }).not.toBe(T0.toISOString());
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
    await expect.poll(async () => (await readLease(db, key))?.heartbeatAt, { timeout: 5_000 }).not.toBe(T0.toISOString());
  });
});
