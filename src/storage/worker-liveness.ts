/**
 * Liveness of evaluation workers (src/storage/evaluation-queue.ts): who is
 * gone, so that its jobs go to another worker, and who is only late.
 *
 * Each worker process keeps one row in `leases` per queue worker id it runs
 * (`study#worker:<id>`, with its owner id, host and pid), and refreshes them
 * every heartbeat interval. The refresh is an upsert: a row the coordinator
 * removed while the process was paused (SIGSTOP, a long GC, a suspended VM)
 * is written again at the next beat — the worker registers again, and is
 * never "gone for good" while it runs (pg-boss #555, BullMQ #439: a late
 * worker declared dead once had every later job re-run).
 *
 * The coordinator judges with {@link workerGoneReason}:
 * - **on its own host** the process table decides: a worker whose process
 *   exists is alive, however late its heartbeat (a paused process resumes
 *   its job: re-running that job would run each of its executor calls twice);
 *   one whose process is gone is gone at once (a killed worker's job is
 *   re-run after one sweep, not after the stale delay);
 * - **on another host** only the heartbeat can tell: a row older than the
 *   stale delay ({@link LEASE_STALE_AFTER_MS}, 15 s) is gone.
 *
 * Removing a row and unlocking its jobs is conditional on the heartbeat the
 * coordinator judged (`heartbeat_at` unchanged): a worker that beat in the
 * meantime keeps its jobs — a job whose worker still heartbeats is never
 * re-queued. A worker that finds, at a beat, that its row was removed knows
 * its jobs were given to another worker: it abandons them (their results,
 * stored once by key, come from the other worker) and registers again.
 */
import { sql } from 'kysely';
import type { StudyDatabase } from './study-database.ts';
import { LEASE_STALE_AFTER_MS } from './lease.ts';

/** Prefix of a worker's heartbeat rows in `leases`. */
export const WORKER_LEASE_PREFIX = 'study#worker:';

/** A worker's heartbeat row, as the coordinator judges it. */
export interface WorkerHeartbeat {
  hostname: string;
  pid: number;
  /** ISO 8601 time of the last beat. */
  heartbeatAt: string;
}

/** What the coordinator knows when it judges: its clock, its host, and how to ask its process table. */
export interface LivenessJudge {
  now: Date;
  /** Heartbeat age past which a worker of another host is gone, in milliseconds. Default {@link LEASE_STALE_AFTER_MS}. */
  staleAfterMs?: number;
  hostname: string;
  isProcessAlive: (pid: number) => boolean;
}

/**
 * Why a worker is gone, or null while it may still finish its jobs (see the
 * module comment: on the judge's host the process decides, elsewhere the
 * heartbeat's age).
 */
export function workerGoneReason(worker: WorkerHeartbeat, judge: LivenessJudge): string | null {
  if (worker.hostname === judge.hostname)
    return judge.isProcessAlive(worker.pid) ? null : `process ${worker.pid} no longer exists on this host`;
  const staleAfterMs = judge.staleAfterMs ?? LEASE_STALE_AFTER_MS;
  const ageMs = judge.now.getTime() - Date.parse(worker.heartbeatAt);
  if (!Number.isFinite(ageMs) || ageMs > staleAfterMs)
    return `no heartbeat for ${Math.round(ageMs / 1000)} s (last ${worker.heartbeatAt}; stale after ${staleAfterMs / 1000} s)`;
  return null;
}

/** Options of {@link startWorkerHeartbeat}. */
export interface WorkerHeartbeatOptions {
  /** The worker process's owner id (`host:pid:random`). */
  ownerId: string;
  hostname: string;
  pid: number;
  /** Milliseconds between beats. */
  intervalMs: number;
  /** Called with the queue worker ids whose rows the coordinator had removed (their jobs went to another worker); they are registered again. */
  onDeclaredGone?: (workerIds: string[]) => void;
  log?: (message: string) => void;
}

/** A worker process's heartbeat rows. */
export interface WorkerHeartbeatHandle {
  /** Writes the row of a queue worker id (at once) and keeps it fresh. */
  register(workerId: string): Promise<void>;
  /** One beat now (the timer calls it). */
  beat(): Promise<void>;
  /** Stops beating and removes the rows. */
  stop(): Promise<void>;
}

/**
 * Keeps a worker process's heartbeat rows: every beat upserts the row of each
 * registered queue worker id, so a removed row comes back (see the module
 * comment). A beat that fails (the database away) is logged and tried at the
 * next interval.
 */
export function startWorkerHeartbeat(db: StudyDatabase, options: WorkerHeartbeatOptions): WorkerHeartbeatHandle {
  const known = new Set<string>();
  const upsert = async (workerIds: string[]): Promise<string[]> => {
    if (workerIds.length === 0) return [];
    const at = new Date().toISOString();
    const rows = await db
      .insertInto('leases')
      .values(
        workerIds.map((id) => ({
          study_key: `${WORKER_LEASE_PREFIX}${id}`,
          owner_id: options.ownerId,
          hostname: options.hostname,
          pid: options.pid,
          acquired_at: at,
          heartbeat_at: at,
        })),
      )
      .onConflict((conflict) =>
        conflict
          .column('study_key')
          .doUpdateSet({ owner_id: options.ownerId, hostname: options.hostname, pid: options.pid, heartbeat_at: at }),
      )
      // PostgreSQL: xmax = 0 on a row this statement inserted (not updated).
      .returning(['study_key', sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    return rows.filter((row) => row.inserted).map((row) => row.study_key.slice(WORKER_LEASE_PREFIX.length));
  };
  let beating: Promise<void> | undefined;
  const beat = (): Promise<void> => {
    beating ??= (async () => {
      try {
        const recreated = await upsert([...known]);
        if (recreated.length > 0) options.onDeclaredGone?.(recreated);
      } catch (error) {
        options.log?.(`heartbeat failed: ${(error as Error).message}`);
      } finally {
        beating = undefined;
      }
    })();
    return beating;
  };
  const timer = setInterval(() => void beat(), options.intervalMs);
  timer.unref();
  return {
    async register(workerId) {
      if (known.has(workerId)) return;
      await upsert([workerId]);
      known.add(workerId);
    },
    beat,
    async stop() {
      clearInterval(timer);
      await beating;
      await db
        .deleteFrom('leases')
        .where('owner_id', '=', options.ownerId)
        .where('study_key', 'like', `${WORKER_LEASE_PREFIX}%`)
        .execute()
        .catch(() => undefined);
    },
  };
}
