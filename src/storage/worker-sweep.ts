/**
 * The coordinator's sweep of the job queue (src/storage/evaluation-queue.ts):
 * the jobs of workers that are gone (src/storage/worker-liveness.ts) are
 * unlocked for another worker, and each such job's `last_error` says so —
 * `worker gone on N attempt(s): <why>` — so that a job given up after
 * `JOB_MAX_ATTEMPTS` (5) kills of its worker is reported as the
 * infrastructure failure it is (never as the candidate's `evaluation_failed`
 * with "unknown error").
 */
import type pg from 'pg';
import type { WorkerUtils } from 'graphile-worker';
import type { StudyDatabase } from './study-database.ts';
import { isProcessAlive } from './lease.ts';
import { WORKER_LEASE_PREFIX, workerGoneReason } from './worker-liveness.ts';

const GONE_PATTERN = /^worker gone on (\d+) attempt\(s\): ([\s\S]*)$/;

/** The `last_error` of a job whose worker was gone, counting the attempts that ended so in a row. */
export function workerGoneError(previous: string | null, reason: string): string {
  return `worker gone on ${(workerGoneAttempts(previous)?.count ?? 0) + 1} attempt(s): ${reason}`;
}

/** How many attempts in a row ended with the job's worker gone (and the last reason), from its `last_error`; undefined when its last attempt failed otherwise. */
export function workerGoneAttempts(lastError: string | null): { count: number; reason: string } | undefined {
  const match = lastError === null ? null : GONE_PATTERN.exec(lastError);
  return match === null ? undefined : { count: Number(match[1]), reason: match[2]! };
}

/** What {@link sweepGoneWorkers} needs. */
export interface SweepOptions {
  pool: pg.Pool;
  db: StudyDatabase;
  utils: WorkerUtils;
  queueSchema: string;
  staleAfterMs: number;
  /** The coordinator's host. */
  hostname: string;
  onUnlocked?: ((workers: Array<{ id: string; reason: string }>) => void) | undefined;
  /** Default: `kill(pid, 0)`. */
  isAlive?: (pid: number) => boolean;
}

/**
 * Unlocks the jobs of the workers that are gone. A worker with a heartbeat
 * row is judged by {@link workerGoneReason}, and its row removed only if its
 * heartbeat is still the one judged (a worker that beat meanwhile keeps its
 * jobs); a worker with no row (killed before it wrote one) is gone once its
 * oldest job has been locked for the stale delay.
 */
export async function sweepGoneWorkers(options: SweepOptions): Promise<void> {
  const { pool, db, queueSchema, staleAfterMs } = options;
  const locked = await pool.query<{ locked_by: string; age_ms: number }>(
    `select locked_by, extract(epoch from (now() - min(locked_at))) * 1000 as age_ms from ${queueSchema}.jobs where locked_by is not null group by locked_by`,
  );
  if (locked.rows.length === 0) return;
  const leases = await db
    .selectFrom('leases')
    .selectAll()
    .where(
      'study_key',
      'in',
      locked.rows.map((row) => `${WORKER_LEASE_PREFIX}${row.locked_by}`),
    )
    .execute();
  const byKey = new Map(leases.map((row) => [row.study_key, row]));
  const now = new Date();
  const dead: Array<{ id: string; reason: string }> = [];
  for (const row of locked.rows) {
    const lease = byKey.get(`${WORKER_LEASE_PREFIX}${row.locked_by}`);
    if (lease === undefined) {
      if (Number(row.age_ms) > staleAfterMs)
        dead.push({ id: row.locked_by, reason: `no heartbeat row in ${Math.round(Number(row.age_ms) / 1000)} s` });
      continue;
    }
    const reason = workerGoneReason(
      { hostname: lease.hostname, pid: Number(lease.pid), heartbeatAt: lease.heartbeat_at },
      { now, staleAfterMs, hostname: options.hostname, isProcessAlive: options.isAlive ?? isProcessAlive },
    );
    if (reason === null) continue;
    // Only if it did not beat since it was judged.
    const removed = await db
      .deleteFrom('leases')
      .where('study_key', '=', lease.study_key)
      .where('heartbeat_at', '=', lease.heartbeat_at)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) > 0)
      dead.push({ id: row.locked_by, reason: `pid ${lease.pid} on ${lease.hostname}: ${reason}` });
  }
  if (dead.length === 0) return;
  for (const worker of dead) {
    const jobs = await pool.query<{ id: string; last_error: string | null }>(
      `select id, last_error from ${queueSchema}._private_jobs where locked_by = $1`,
      [worker.id],
    );
    for (const job of jobs.rows) {
      await pool.query(
        `update ${queueSchema}._private_jobs set last_error = $2, locked_at = null, locked_by = null where id = $1 and locked_by = $3`,
        [job.id, workerGoneError(job.last_error, worker.reason), worker.id],
      );
    }
  }
  // The job queues' locks (and any job locked since).
  await options.utils.forceUnlockWorkers(dead.map((worker) => worker.id));
  options.onUnlocked?.(dead);
}
