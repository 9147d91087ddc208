/**
 * The worker's side of the evaluation job queue (src/storage/evaluation-queue.ts):
 * graphile-worker's runner taking one evaluator's jobs, with a heartbeat row
 * per queue worker id that registers again after a pause
 * (src/storage/worker-liveness.ts).
 */
import { hostname as osHostname } from 'node:os';
import type { JobHelpers, Runner } from 'graphile-worker';
import type { StudyDatabase } from './study-database.ts';
import type { EvaluationJob } from './evaluation-queue.ts';
import {
  evaluationJobKey,
  evaluationTask,
  graphile,
  postgresTarget,
  queueLogger,
  queueSchemaOf,
  resultsChannel,
} from './evaluation-queue.ts';
import { LEASE_HEARTBEAT_INTERVAL_MS, createOwnerId } from './lease.ts';
import { WORKER_QUEUE_POOL_SIZE } from './connections.ts';
import { createPostgresPool } from './postgres.ts';
import { ignoreForeignMigrationNotices } from './queue-notices.ts';
import { startWorkerHeartbeat } from './worker-liveness.ts';

/** Options of {@link startEvaluationWorker}. */
export interface EvaluationWorkerOptions {
  /** The study's PostgreSQL URL. */
  location: string;
  /** The study database (heartbeat rows; the evaluator stores results in it). */
  db: StudyDatabase;
  /** The fingerprint of the evaluator this worker has: it takes only that evaluator's jobs. */
  fingerprint: string;
  /** Evaluates one job: stores every result it can; throws when some could not be had (a transient failure), so the job is retried. */
  run: (job: EvaluationJob, signal: AbortSignal) => Promise<void>;
  /** Jobs at once. Default 1. */
  concurrency?: number;
  /** Called when a job starts and ends. */
  onJob?: (event: { type: 'start' | 'done' | 'failed'; job: EvaluationJob; attempt: number; message?: string }) => void;
  log?: (message: string) => void;
  /** Default {@link LEASE_HEARTBEAT_INTERVAL_MS}. */
  heartbeatIntervalMs?: number;
}

/** A running worker. */
export interface EvaluationWorker {
  /** This process's owner id in its heartbeat rows. */
  readonly ownerId: string;
  /** Stops taking jobs, lets the running ones finish, removes the heartbeat rows. */
  stop(): Promise<void>;
  /** Settles when the worker has stopped (or failed). */
  readonly done: Promise<void>;
}

/** What one worker process's jobs share. */
interface WorkerContext {
  options: EvaluationWorkerOptions;
  heartbeat: ReturnType<typeof startWorkerHeartbeat>;
  /** The running jobs' abort controllers, by the queue worker id that runs them. */
  running: Map<string, Set<AbortController>>;
  pool: ReturnType<typeof createPostgresPool>;
  /** The results channel notified after each job. */
  channel: string;
}

/** Aborts the jobs of queue workers the coordinator declared gone (another worker took them over), and says so. */
function abandonJobs(
  running: ReadonlyMap<string, Set<AbortController>>,
  workerIds: Iterable<string>,
  log: ((message: string) => void) | undefined,
): void {
  let abandoned = 0;
  for (const id of workerIds) {
    for (const controller of running.get(id) ?? []) {
      controller.abort(
        new Error('the coordinator declared this worker gone (no heartbeat) and gave the job to another worker'),
      );
      abandoned += 1;
    }
  }
  log?.(
    `the coordinator had declared this worker gone (a pause without heartbeat?); registered again${abandoned > 0 ? `, ${abandoned} job(s) abandoned to the worker that took them over` : ''}`,
  );
}

/** Runs one job: registers its queue worker's heartbeat, runs it abortably, reports it, and notifies the waiting coordinator. */
async function runJob(worker: WorkerContext, payload: unknown, helpers: JobHelpers): Promise<void> {
  const { options, running } = worker;
  const job = payload as EvaluationJob;
  const workerId = helpers.job.locked_by;
  const controller = new AbortController();
  const stopped = helpers.abortSignal;
  const forward = (): void => controller.abort(stopped?.reason);
  if (stopped?.aborted === true) forward();
  stopped?.addEventListener('abort', forward, { once: true });
  if (workerId !== null) {
    await worker.heartbeat.register(workerId);
    let set = running.get(workerId);
    if (set === undefined) running.set(workerId, (set = new Set()));
    set.add(controller);
  }
  options.onJob?.({ type: 'start', job, attempt: helpers.job.attempts });
  try {
    await options.run(job, controller.signal);
  } catch (error) {
    const message =
      controller.signal.aborted && controller.signal.reason instanceof Error
        ? controller.signal.reason.message
        : (error as Error).message;
    options.onJob?.({ type: 'failed', job, attempt: helpers.job.attempts, message });
    throw error;
  } finally {
    stopped?.removeEventListener('abort', forward);
    if (workerId !== null) running.get(workerId)?.delete(controller);
  }
  options.onJob?.({ type: 'done', job, attempt: helpers.job.attempts });
  // A wake-up only (a waiting coordinator also looks every second): its failure in an outage fails nothing.
  await worker.pool.query(`select pg_notify($1, $2)`, [worker.channel, evaluationJobKey(job)]).catch(() => undefined);
}

/**
 * Starts taking the study's evaluation jobs of one evaluator
 * (graphile-worker's runner, `concurrency` jobs at once), with a heartbeat
 * row per queue worker id (src/storage/worker-liveness.ts). When a beat finds
 * that the coordinator declared one of its queue workers gone (its row
 * removed, its jobs unlocked for another worker), the jobs that queue worker
 * runs are abandoned (aborted: the other worker produces their results) and
 * the row is written again.
 *
 * @throws InputError when the study's notebook is not in PostgreSQL
 */
export async function startEvaluationWorker(options: EvaluationWorkerOptions): Promise<EvaluationWorker> {
  const target = postgresTarget(options.location, 'kloop worker');
  const queueSchema = queueSchemaOf(target.schema);
  const { run } = await graphile();
  const ownerId = createOwnerId();
  const channel = resultsChannel(queueSchema);
  const pool = createPostgresPool(target, { max: WORKER_QUEUE_POOL_SIZE });
  // Another study's new queue schema announces breaking migrations database-wide: not this worker's concern.
  const notices = ignoreForeignMigrationNotices(pool, queueSchema, options.log);
  /** The running jobs' abort controllers, by the queue worker id that runs them. */
  const running = new Map<string, Set<AbortController>>();
  const heartbeat = startWorkerHeartbeat(options.db, {
    ownerId,
    hostname: osHostname(),
    pid: process.pid,
    intervalMs: options.heartbeatIntervalMs ?? LEASE_HEARTBEAT_INTERVAL_MS,
    log: options.log,
    onDeclaredGone: (workerIds) => abandonJobs(running, workerIds, options.log),
  });

  const worker: WorkerContext = { options, heartbeat, running, pool, channel };
  const task = (payload: unknown, helpers: JobHelpers): Promise<void> => runJob(worker, payload, helpers);

  const runner: Runner = await run({
    pgPool: pool,
    schema: queueSchema,
    concurrency: Math.max(1, options.concurrency ?? 1),
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: await queueLogger(options.log, true),
    taskList: { [evaluationTask(options.fingerprint)]: task },
  });
  await notices.ready();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await runner.stop().catch(() => undefined);
      await heartbeat.stop();
      await pool.end().catch(() => undefined);
    })();
    return stopping;
  };
  return { ownerId, stop, done: runner.promise };
}
