/**
 * The run lease: one writer per study.
 *
 * `kloop run` holds a row of the `leases` table while it writes a study:
 * who (host name, process id and a random owner id), since when
 * (`acquired_at`) and its last heartbeat (`heartbeat_at`, renewed every
 * {@link LEASE_HEARTBEAT_INTERVAL_MS}). A second run on the same study finds
 * the row and refuses ({@link StudyBusyError}, exit code 3) or waits.
 *
 * A lease is stale — its owner died — when its heartbeat is older than
 * {@link LEASE_STALE_AFTER_MS}, or when it was taken on this host by a process
 * that no longer exists.
 *
 * Taking the lease reads the row first, without a lock (WAL readers never
 * wait): a live holder is the answer at once. Otherwise the row is read again
 * and written in one `BEGIN IMMEDIATE` transaction, which holds SQLite's
 * write lock from its first statement: of two processes taking a free or
 * stale lease at once, the second waits for the first to commit and then
 * finds its lease. (A deferred transaction that read first would fail with
 * `SQLITE_BUSY_SNAPSHOT` instead — src/storage/busy.ts.) While the database
 * stays locked through every try (another process is writing for longer than
 * the busy timeout), the attempt reports the study busy, never an SQLite
 * error.
 *
 * On a file database the heartbeat runs in a worker thread with its own SQLite
 * connection, so a long synchronous stretch of the main thread (an offline
 * proposer screening a thousand edits) never lets the lease look dead. On any
 * other database it runs on a timer of the main thread.
 *
 * @example
 * ```ts
 * const lease = await acquireLease(db, { studyKey: study.dir });
 * const heartbeat = startLeaseHeartbeat(db, lease, { file: studyDatabasePath(study.dir), onLost: () => controller.abort() });
 * try { await runStudy(...) } finally { await heartbeat.stop(); await releaseLease(db, lease); }
 * ```
 */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { BusyRetryOptions } from './busy.ts';
import { isDatabaseBusy, retryWhileBusy } from './busy.ts';
import type { StudyDatabase } from './study-database.ts';
import { backendOf } from './study-database.ts';
import { fenceWrites, unfenceWrites } from './write-fence.ts';

import { LEASE_HEARTBEAT_INTERVAL_MS, LEASE_STALE_AFTER_MS } from './lease-timing.ts';
import { StudyBusyError } from './study-busy-error.ts';

export { LEASE_HEARTBEAT_INTERVAL_MS, LEASE_STALE_AFTER_MS };
export type { HeartbeatOptions, LeaseHeartbeat } from './lease-heartbeat.ts';
export { renewLease, startLeaseHeartbeat } from './lease-heartbeat.ts';
export { releaseLeaseSync } from './lease-release-sync.ts';
export { STUDY_BUSY_EXIT_CODE, StudyBusyError } from './study-busy-error.ts';
/** How often `--wait` looks at the lease again, in milliseconds. */
export const LEASE_POLL_INTERVAL_MS = 500;

/** A lease as stored (read-only record). */
export interface LeaseRecord {
  readonly studyKey: string;
  /** `hostname:pid:random` */
  readonly ownerId: string;
  readonly hostname: string;
  readonly pid: number;
  /** ISO 8601 UTC */
  readonly acquiredAt: string;
  /** ISO 8601 UTC */
  readonly heartbeatAt: string;
  /** The fencing token: 1 for a lease taken free, the previous holder's + 1 for a take-over (src/storage/write-fence.ts). */
  readonly generation: number;
}

/** The process asking for a lease, and how it judges staleness. Every member has a default. */
export interface LeaseOptions {
  /** The study the lease covers (by convention its absolute folder). */
  studyKey: string;
  /** Default `os.hostname()`. */
  hostname?: string;
  /** Default `process.pid`. */
  pid?: number;
  /** Default `hostname:pid:<8 random hex bytes>`. */
  ownerId?: string;
  now?: () => Date;
  /** Default {@link LEASE_STALE_AFTER_MS}. */
  staleAfterMs?: number;
  /** Whether a process of this host exists. Default: `process.kill(pid, 0)`. */
  isProcessAlive?: (pid: number) => boolean;
  /** Tries of the locked read-and-write while SQLite reports the database busy. Default 3 tries, n × 50 ms apart ({@link retryWhileBusy}). */
  retry?: BusyRetryOptions;
}

/**
 * Outcome of one attempt: the lease; or who holds it; or, with `holder`
 * undefined, that the database stayed locked by another writer through
 * every try (`lockedMs`: how long this attempt waited, in milliseconds).
 */
export type AcquireResult =
  | { acquired: true; lease: LeaseRecord; tookOverFrom?: LeaseRecord }
  | { acquired: false; holder: LeaseRecord }
  | { acquired: false; holder: undefined; lockedMs: number };

/** A new owner id: `hostname:pid:random`. */
export function createOwnerId(hostname = osHostname(), pid = process.pid): string {
  return `${hostname}:${pid}:${randomBytes(8).toString('hex')}`;
}

/** Whether a process with this id exists on this host (`kill(pid, 0)`; EPERM means it exists). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a lease's owner is gone: heartbeat older than `staleAfterMs`, or
 * same host and the process no longer exists. Returns the reason, or null
 * when the owner looks alive.
 */
export function staleReason(
  lease: Omit<LeaseRecord, 'generation'>,
  judge: { now: Date; staleAfterMs: number; hostname: string; isProcessAlive: (pid: number) => boolean },
): string | null {
  const ageMs = judge.now.getTime() - Date.parse(lease.heartbeatAt);
  if (!Number.isFinite(ageMs) || ageMs > judge.staleAfterMs) {
    return `its last heartbeat (${lease.heartbeatAt}) is older than ${judge.staleAfterMs / 1000} s`;
  }
  if (lease.hostname === judge.hostname && !judge.isProcessAlive(lease.pid))
    return `process ${lease.pid} no longer exists on this host`;
  return null;
}

function toRecord(row: {
  study_key: string;
  owner_id: string;
  hostname: string;
  pid: number;
  acquired_at: string;
  heartbeat_at: string;
  generation: number;
}): LeaseRecord {
  return Object.freeze({
    studyKey: row.study_key,
    ownerId: row.owner_id,
    hostname: row.hostname,
    pid: Number(row.pid),
    acquiredAt: row.acquired_at,
    heartbeatAt: row.heartbeat_at,
    generation: Number(row.generation),
  });
}

/**
 * The key a lease is stored under. On SQLite, the key as given (by
 * convention the study's absolute folder, maybe with a `#purpose` suffix).
 * On PostgreSQL the database schema is the study, and the same study is run
 * from folders of different paths on different machines: the folder part is
 * dropped (`study`, `study#schedule`), so every machine meets on one lease.
 */
export function leaseKeyOf(db: StudyDatabase, studyKey: string): string {
  if (backendOf(db) !== 'postgres') return studyKey;
  const purpose = studyKey.indexOf('#');
  return `study${purpose === -1 ? '' : studyKey.slice(purpose)}`;
}

/** The lease of a study, if any. */
export async function readLease(db: StudyDatabase, studyKey: string): Promise<LeaseRecord | undefined> {
  const row = await db
    .selectFrom('leases')
    .selectAll()
    .where('study_key', '=', leaseKeyOf(db, studyKey))
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Every lease in the database (for `kloop doctor`). */
export async function listLeases(db: StudyDatabase): Promise<LeaseRecord[]> {
  const rows = await db.selectFrom('leases').selectAll().orderBy('study_key').execute();
  return rows.map(toRecord);
}

function resolveOptions(options: LeaseOptions) {
  const hostname = options.hostname ?? osHostname();
  const pid = options.pid ?? process.pid;
  return {
    studyKey: options.studyKey,
    hostname,
    pid,
    ownerId: options.ownerId ?? createOwnerId(hostname, pid),
    now: options.now ?? (() => new Date()),
    staleAfterMs: options.staleAfterMs ?? LEASE_STALE_AFTER_MS,
    isProcessAlive: options.isProcessAlive ?? isProcessAlive,
  };
}

/**
 * One attempt to take the study's lease: keep it when already ours, insert it
 * when free, take it over when stale, else report the holder.
 *
 * A live holder is found by a plain read, without waiting for any lock.
 * Otherwise the decision and the write are one `BEGIN IMMEDIATE` transaction
 * (the row read again under the write lock); while SQLite reports the
 * database busy, that transaction is tried again (`retry`, default 3 tries,
 * each waiting up to the connection's busy timeout). When every try was busy,
 * the row is read once more: its live holder if one took it meanwhile, else
 * `{ acquired: false, holder: undefined, lockedMs }`.
 *
 * @throws any storage error other than busy
 */
export async function tryAcquireLease(db: StudyDatabase, options: LeaseOptions): Promise<AcquireResult> {
  const me = resolveOptions({ ...options, studyKey: leaseKeyOf(db, options.studyKey) });
  // A new attempt replaces a fence of this key left from a lease lost before.
  unfenceWrites(db, me.studyKey);
  const result = await tryAcquireUnfenced(db, me, options.retry);
  // From now on every write through `db` checks, in its transaction, that the lease is still this one.
  if (result.acquired)
    fenceWrites(db, {
      studyKey: result.lease.studyKey,
      ownerId: result.lease.ownerId,
      generation: result.lease.generation,
    });
  return result;
}

async function tryAcquireUnfenced(
  db: StudyDatabase,
  me: ResolvedLeaseOptions,
  retry: BusyRetryOptions | undefined,
): Promise<AcquireResult> {
  const held = liveOtherHolder(await readLease(db, me.studyKey), me);
  if (held !== undefined) return { acquired: false, holder: held };
  const started = Date.now();
  try {
    return await retryWhileBusy(() => db.transaction().execute((transaction) => acquireLocked(transaction, me)), retry);
  } catch (error) {
    if (!isDatabaseBusy(error)) throw error;
  }
  const holder = liveOtherHolder(await readLease(db, me.studyKey), me);
  return holder !== undefined
    ? { acquired: false, holder }
    : { acquired: false, holder: undefined, lockedMs: Date.now() - started };
}

type ResolvedLeaseOptions = ReturnType<typeof resolveOptions>;

/** The lease's holder when it is another owner that looks alive (it may not be taken over). */
function liveOtherHolder(lease: LeaseRecord | undefined, me: ResolvedLeaseOptions): LeaseRecord | undefined {
  if (lease === undefined || lease.ownerId === me.ownerId) return undefined;
  return staleReason(lease, {
    now: me.now(),
    staleAfterMs: me.staleAfterMs,
    hostname: me.hostname,
    isProcessAlive: me.isProcessAlive,
  }) === null
    ? lease
    : undefined;
}

/** The decision and the write, inside a transaction that holds the write lock. */
async function acquireLocked(transaction: StudyDatabase, me: ResolvedLeaseOptions): Promise<AcquireResult> {
  const at = me.now().toISOString();
  const mine = {
    study_key: me.studyKey,
    owner_id: me.ownerId,
    hostname: me.hostname,
    pid: me.pid,
    acquired_at: at,
    heartbeat_at: at,
    generation: 1,
  };
  const holder = await readLease(transaction, me.studyKey);
  if (holder === undefined) {
    await transaction.insertInto('leases').values(mine).execute();
    return { acquired: true, lease: toRecord(mine) };
  }
  if (holder.ownerId === me.ownerId) return { acquired: true, lease: holder };
  if (liveOtherHolder(holder, me) !== undefined) return { acquired: false, holder };
  // Stale: taken over. The write lock is held, so the row is still the one just read.
  // The fencing token moves on: the previous holder's writes are refused from this commit on.
  const generation = holder.generation + 1;
  await transaction
    .updateTable('leases')
    .set({ owner_id: me.ownerId, hostname: me.hostname, pid: me.pid, acquired_at: at, heartbeat_at: at, generation })
    .where('study_key', '=', me.studyKey)
    .execute();
  return { acquired: true, lease: toRecord({ ...mine, generation }), tookOverFrom: holder };
}

/** Options of {@link acquireLease}. */
export interface AcquireLeaseOptions extends LeaseOptions {
  /** Wait for the holder to finish instead of refusing. Default false. */
  wait?: boolean;
  /** Default {@link LEASE_POLL_INTERVAL_MS}. */
  pollIntervalMs?: number;
  /** Stops waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Called once when the lease is held by another process and `wait` is set. */
  onWait?: (holder: LeaseRecord) => void;
  /** Called when a stale lease was taken over. */
  onTakeOver?: (previous: LeaseRecord) => void;
  /** What the busy error advises after naming the holder (a caller without `--wait`). Default `use --wait to wait`. */
  busyAdvice?: string;
}

/**
 * Takes the study's lease.
 *
 * @throws StudyBusyError (exit code 3) when another live process holds it and `wait` is off
 * @throws the signal's reason when `signal` aborts while waiting
 */
export async function acquireLease(db: StudyDatabase, options: AcquireLeaseOptions): Promise<LeaseRecord> {
  const ownerId = options.ownerId ?? createOwnerId(options.hostname, options.pid);
  let announced = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const result = await tryAcquireLease(db, { ...options, ownerId });
    if (result.acquired) {
      if (result.tookOverFrom !== undefined) options.onTakeOver?.(result.tookOverFrom);
      return result.lease;
    }
    if (options.wait !== true) {
      throw result.holder !== undefined
        ? new StudyBusyError(result.holder, undefined, options.busyAdvice)
        : new StudyBusyError(undefined, {
            message: `the study database stayed locked by another process for ${Math.round(result.lockedMs / 1000)} s (no run holds the study's lease); use --wait to wait`,
            studyPath: options.studyKey,
          });
    }
    if (!announced && result.holder !== undefined) {
      options.onWait?.(result.holder);
      announced = true;
    }
    await sleep(options.pollIntervalMs ?? LEASE_POLL_INTERVAL_MS, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Gives the lease up (only when still ours) and lifts its write fence. */
export async function releaseLease(db: StudyDatabase, lease: LeaseRecord): Promise<void> {
  unfenceWrites(db, lease.studyKey);
  await db.deleteFrom('leases').where('study_key', '=', lease.studyKey).where('owner_id', '=', lease.ownerId).execute();
}
