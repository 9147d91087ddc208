/**
 * Evaluation workers on a job queue in the study's PostgreSQL database.
 *
 * The queue is graphile-worker's (in the schema `<study schema>_queue`,
 * `kloop_queue` for `public`): jobs are taken with `FOR UPDATE SKIP LOCKED`,
 * so each is run by one worker at a time; new jobs wake idle workers at once
 * through LISTEN/NOTIFY (no polling delay); a job that throws is retried with
 * exponential back-off; a job key deduplicates. pg-boss has the same
 * guarantees but hands jobs out by polling (½ s at best), which costs more
 * than a short evaluation batch takes; graphile-worker's notifications do
 * not. Neither tells a crashed worker from a slow one on its own
 * (graphile-worker unlocks an abandoned job after 4 hours): kloop adds its
 * own liveness, below.
 *
 * **The work.** `kloop run --workers` (the coordinator) still runs the loop,
 * proposes, and integrates one candidate at a time; only what its evaluator
 * has not stored yet is sent out: one job per candidate × partition ×
 * repeat × batch of examples (task `kloop_evaluate_<fingerprint>`, so a
 * worker only takes jobs of the evaluator it has: the same corpus, task,
 * weights and executor). `kloop worker` processes take jobs, run the
 * executor through the evaluator, and write each result to `example_results`
 * as it finishes (keyed by fingerprint, artifact, example and repeat, insert
 * or nothing). The coordinator waits until every result it asked for is
 * stored, then reads them exactly as it reads results of an earlier run: so
 * the scores, and with a deterministic executor the whole notebook, are
 * those of a single-process run.
 *
 * **Nothing lost, nothing counted twice.** A worker killed mid-job has stored
 * some of the batch's results or none; the job stays locked by it. Each
 * worker process keeps a heartbeat row in `leases` for every queue worker id
 * it runs (`study#worker:<id>`, with its host and pid), written again at
 * every beat, so a worker paused past the stale delay registers again when it
 * resumes (src/storage/worker-liveness.ts). The coordinator, while it waits,
 * unlocks the jobs of a worker that is gone — on its own host, a process that
 * no longer exists (a paused one is only late: its job is never run twice);
 * on another host, a heartbeat older than LEASE_STALE_AFTER_MS — and only if
 * the heartbeat it judged is still the last one (src/storage/worker-sweep.ts).
 * Another worker runs the job again: the results already stored are read,
 * not executed (nothing counted twice), the rest are executed. A job whose
 * executor keeps failing (a transient failure after the executor's own
 * retries) is retried up to {@link JOB_MAX_ATTEMPTS} times, then given up:
 * those results count as transient failures, as they would in one process
 * (never stored; the gate refuses `evaluation_failed`). A job whose worker
 * was gone on its last attempts (killed: a crash, an out-of-memory kill) is
 * an infrastructure failure when it is given up: the run stops
 * `infrastructure_failure` with the reason, never charging the candidate.
 * A coordinator killed and started again finds its results stored and its
 * jobs queued (same keys: not enqueued twice).
 */
import { createHash } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type pg from 'pg';
import type { Logger as GraphileLogger, WorkerUtils } from 'graphile-worker';
import type { RemoteExecution, RemoteItem, RemoteRequest } from './remote-execution.ts';
import { resultKey } from './remote-execution.ts';
import { InfrastructureError, InputError } from '../errors.ts';
import type { StudyDatabase } from './study-database.ts';
import { LEASE_STALE_AFTER_MS } from './lease.ts';
import type { StorageTarget } from './location.ts';
import { parseStorageTarget } from './location.ts';
import { COORDINATOR_QUEUE_POOL_SIZE, retryThroughOutage } from './connections.ts';
import { listenToQueue, type QueueListener } from './queue-listener.ts';
import { graphile } from './graphile-loader.ts';
import { createPostgresPool } from './postgres.ts';
import { WORKER_LEASE_PREFIX } from './worker-liveness.ts';
import { sweepGoneWorkers, workerGoneAttempts } from './worker-sweep.ts';
import { throttleShared } from './shared-throttle.ts';

type PostgresTarget = Extract<StorageTarget, { kind: 'postgres' }>;

/** Examples per job, by default. */
export const DEFAULT_BATCH_SIZE = 4;
/** Tries of a job before its results are given up as transient failures. */
export const JOB_MAX_ATTEMPTS = 5;
/** How often a waiting coordinator looks again without a notification, in milliseconds. */
export const COORDINATOR_POLL_MS = 1_000;
/** Prefix of the task of an evaluator's jobs (`kloop_evaluate_<fingerprint>`). */
export const EVALUATION_TASK_PREFIX = 'kloop_evaluate_';
export { WORKER_LEASE_PREFIX };
export { graphile };

/** One job's work: which results to produce. */
export interface EvaluationJob {
  v: 1;
  fingerprint: string;
  artifactHash: string;
  artifactText: string;
  partition: string;
  repeat: number;
  exampleIds: string[];
  readSince?: string;
  /** The key the results are stored under, when not `fingerprint` (the proposer's screening: src/loop/scratch-evaluator.ts). */
  storedAs?: string;
}

/** The schema of the job queue of a study schema. */
export function queueSchemaOf(studySchema: string): string {
  return studySchema === 'public' ? 'kloop_queue' : `${studySchema}_queue`;
}

/** The task name of an evaluator's jobs. */
export function evaluationTask(fingerprint: string): string {
  return `${EVALUATION_TASK_PREFIX}${fingerprint}`;
}

/** The notification channel a worker signals a finished job on. */
export function resultsChannel(queueSchema: string): string {
  return `kloop_results_${queueSchema}`;
}

/** The job key: the same work has the same key (a restarted coordinator does not enqueue it twice). */
export function evaluationJobKey(job: EvaluationJob): string {
  const examples = createHash('sha256').update(job.exampleIds.join('\u0000')).digest('hex').slice(0, 16);
  return `${job.fingerprint}:${job.artifactHash.slice(0, 16)}:${job.repeat}:${examples}${job.readSince !== undefined ? `:${job.readSince}` : ''}${job.storedAs !== undefined ? `:${job.storedAs.split(':')[0]}` : ''}`;
}

/** The jobs of a request: items grouped by repeat, in their order, `batchSize` examples each. */
export function jobsOf(
  request: RemoteRequest,
  batchSize = DEFAULT_BATCH_SIZE,
): Array<{ job: EvaluationJob; items: RemoteItem[] }> {
  const byRepeat = new Map<number, RemoteItem[]>();
  for (const item of request.items) {
    const list = byRepeat.get(item.repeat);
    if (list === undefined) byRepeat.set(item.repeat, [item]);
    else list.push(item);
  }
  const jobs: Array<{ job: EvaluationJob; items: RemoteItem[] }> = [];
  const size = Math.max(1, Math.floor(batchSize));
  for (const [repeat, items] of byRepeat) {
    for (let start = 0; start < items.length; start += size) {
      const batch = items.slice(start, start + size);
      jobs.push({
        items: batch,
        job: {
          v: 1,
          fingerprint: request.fingerprint,
          artifactHash: request.artifactHash,
          artifactText: request.artifactText,
          partition: request.partition,
          repeat,
          exampleIds: batch.map((item) => item.exampleId),
          ...(request.readSince !== undefined ? { readSince: request.readSince } : {}),
          ...(request.storedAs !== undefined ? { storedAs: request.storedAs } : {}),
        },
      });
    }
  }
  return jobs;
}

export function postgresTarget(location: string, what: string): PostgresTarget {
  const target = parseStorageTarget(location);
  if (target.kind !== 'postgres') {
    throw new InputError(
      `${what} needs the study's notebook in PostgreSQL (storage: postgres://… in kloop.yaml, or --db <url>): evaluation workers share its job queue`,
      { field: '--db', code: 'input.storage' },
    );
  }
  return target;
}

/** graphile-worker's logger, quiet but for errors (and warnings with `verbose`). */
export async function queueLogger(
  log: ((message: string) => void) | undefined,
  verbose = false,
): Promise<GraphileLogger> {
  const { Logger } = await graphile();
  return new Logger(() => (level, message) => {
    if (level === 'error' || (verbose && level === 'warning')) log?.(`job queue: ${message}`);
  });
}

/** Options of {@link openEvaluationQueue}. */
export interface EvaluationQueueOptions {
  /** Examples per job. Default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /** Called, at most every 30 s, while jobs wait with no worker progress. */
  onWaiting?: (status: { queued: number; running: number; workers: number }) => void;
  /** Called when the jobs of a dead worker were unlocked for another one. */
  onUnlocked?: (workers: Array<{ id: string; reason: string }>) => void;
  /** Errors of the queue itself. */
  log?: (message: string) => void;
  /** A worker lease older than this is dead (milliseconds). Default {@link LEASE_STALE_AFTER_MS}. */
  staleAfterMs?: number;
}

/** The coordinator's side of the queue: a {@link RemoteExecution} for the evaluator, and its release. */
export interface EvaluationQueue extends RemoteExecution {
  close(): Promise<void>;
}

/**
 * Opens the study's job queue for a coordinator (installing graphile-worker's
 * schema when needed).
 *
 * @param location the study's PostgreSQL URL
 * @param db the study database (results are read from it)
 * @throws InputError when the study's notebook is not in PostgreSQL
 */
export async function openEvaluationQueue(
  location: string,
  db: StudyDatabase,
  options: EvaluationQueueOptions = {},
): Promise<EvaluationQueue> {
  const target = postgresTarget(location, 'kloop run --workers');
  const queueSchema = queueSchemaOf(target.schema);
  const { makeWorkerUtils } = await graphile();
  const pool = createPostgresPool(target, { max: COORDINATOR_QUEUE_POOL_SIZE });
  const utils: WorkerUtils = await makeWorkerUtils({
    pgPool: pool,
    schema: queueSchema,
    logger: await queueLogger(options.log),
  });
  await utils.migrate();
  const staleAfterMs = options.staleAfterMs ?? LEASE_STALE_AFTER_MS;
  /** The queue's statements through a short outage (each may run twice). */
  const outage = <T>(work: () => Promise<T>): Promise<T> => retryThroughOutage(target, work);
  const here = osHostname();
  const listener = await listenToQueue(target, resultsChannel(queueSchema), options.log);
  /** Unlocks the jobs of workers that are gone (src/storage/worker-liveness.ts), each job's last error naming why: once a poll interval, whichever evaluations wait. */
  const sweep = throttleShared(
    () =>
      outage(() =>
        sweepGoneWorkers({
          pool,
          db,
          utils,
          queueSchema,
          staleAfterMs,
          hostname: here,
          onUnlocked: options.onUnlocked,
        }),
      ),
    COORDINATOR_POLL_MS,
  );
  const queue: QueueContext = { db, pool, utils, queueSchema, outage, listener, sweep, options };
  return {
    execute: (request, signal) => executeRemotely(queue, request, signal),
    async close(): Promise<void> {
      await listener.close();
      await utils.release();
      await pool.end().catch(() => undefined);
    },
  };
}

/** What one coordinator's evaluations share. */
interface QueueContext {
  db: StudyDatabase;
  pool: pg.Pool;
  utils: WorkerUtils;
  queueSchema: string;
  outage: <T>(work: () => Promise<T>) => Promise<T>;
  listener: QueueListener;
  sweep: () => Promise<unknown>;
  options: EvaluationQueueOptions;
}

/** Enqueues the request's jobs, then waits until each wanted result is stored or given up; returns those given up, with why. */
async function executeRemotely(
  queue: QueueContext,
  request: RemoteRequest,
  signal: AbortSignal | undefined,
): Promise<ReadonlyMap<string, string>> {
  const planned = jobsOf(request, queue.options.batchSize);
  const task = evaluationTask(request.fingerprint);
  const keyOf = new Map(planned.map(({ job, items }) => [evaluationJobKey(job), items]));
  const jobKeys: ReadonlySet<string> = new Set(keyOf.keys());
  // Keyed jobs: adding one again through an outage adds nothing twice.
  for (const { job } of planned)
    await queue.outage(() =>
      queue.utils.addJob(task, job, {
        jobKey: evaluationJobKey(job),
        jobKeyMode: 'unsafe_dedupe',
        maxAttempts: JOB_MAX_ATTEMPTS,
      }),
    );
  const repeats = [...new Set(request.items.map((item) => item.repeat))];
  const wanted = new Set(request.items.map((item) => resultKey(item.exampleId, item.repeat)));
  const givenUp = new Map<string, string>();
  let lastProgress = Date.now();
  let remaining = wanted.size;
  for (;;) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const stored = await storedResults(queue.db, request, repeats);
    const missing = [...wanted].filter((key) => !stored.has(key) && !givenUp.has(key));
    if (missing.length < remaining) {
      remaining = missing.length;
      lastProgress = Date.now();
    }
    if (missing.length === 0) return givenUp;
    if (await giveUpFailedJobs(queue, request, keyOf, stored, givenUp)) continue;
    await queue.sweep();
    if (Date.now() - lastProgress >= 30_000) {
      lastProgress = Date.now();
      await reportWaiting(queue, task);
    }
    await queue.listener.wait(COORDINATOR_POLL_MS, signal, jobKeys);
  }
}

/** The result keys of the request already stored. */
async function storedResults(db: StudyDatabase, request: RemoteRequest, repeats: number[]): Promise<Set<string>> {
  let query = db
    .selectFrom('example_results')
    .select(['example_id', 'repeat'])
    .where('fingerprint', '=', request.storedAs ?? request.fingerprint)
    .where('artifact_hash', '=', request.artifactHash)
    .where('repeat', 'in', repeats);
  if (request.readSince !== undefined) query = query.where('created_at', '>=', request.readSince);
  return new Set((await query.execute()).map((row) => resultKey(row.example_id, row.repeat)));
}

/**
 * Jobs that failed on every attempt: their missing results are given up
 * (transient failures, into `givenUp`), and the jobs removed; true when there
 * were any. Throws InfrastructureError `infrastructure.worker_gone` for a job
 * whose worker was gone on its attempts.
 */
async function giveUpFailedJobs(
  queue: QueueContext,
  request: RemoteRequest,
  keyOf: ReadonlyMap<string, RemoteItem[]>,
  stored: ReadonlySet<string>,
  givenUp: Map<string, string>,
): Promise<boolean> {
  const { outage, utils } = queue;
  const failed = await outage(() =>
    queue.pool.query<{ id: string; key: string; last_error: string | null }>(
      `select id, key, last_error from ${queue.queueSchema}.jobs where key = any($1::text[]) and attempts >= max_attempts and locked_at is null`,
      [[...keyOf.keys()]],
    ),
  );
  for (const row of failed.rows) {
    const gone = workerGoneAttempts(row.last_error);
    if (gone !== undefined) {
      // The job ended its worker, again and again: the infrastructure failed, not the candidate.
      await outage(() => utils.completeJobs([row.id]));
      throw new InfrastructureError(
        `the evaluation job of ${request.partition} (${(keyOf.get(row.key) ?? []).length} example(s) of artifact ${request.artifactHash.slice(0, 12)}) was given up after ${JOB_MAX_ATTEMPTS} attempts: its worker was gone on ${gone.count} of them (last: ${gone.reason}); a job that ends its worker every time is an infrastructure failure (a crash or an out-of-memory kill of the worker), not a result of the candidate`,
        { code: 'infrastructure.worker_gone' },
      );
    }
    for (const item of keyOf.get(row.key) ?? []) {
      const key = resultKey(item.exampleId, item.repeat);
      if (!stored.has(key))
        givenUp.set(
          key,
          `the evaluation job failed on each of its ${JOB_MAX_ATTEMPTS} attempts: ${row.last_error ?? 'unknown error'}`,
        );
    }
  }
  if (failed.rows.length === 0) return false;
  await outage(() => utils.completeJobs(failed.rows.map((row) => row.id)));
  return true;
}

/** Tells `onWaiting` how many of the task's jobs are queued and running, and how many workers have a lease. */
async function reportWaiting(queue: QueueContext, task: string): Promise<void> {
  const status = await queue.outage(() =>
    queue.pool.query<{ queued: number; running: number }>(
      `select count(*) filter (where locked_at is null) as queued, count(*) filter (where locked_at is not null) as running from ${queue.queueSchema}.jobs where task_identifier = $1`,
      [task],
    ),
  );
  const workers = await queue.db
    .selectFrom('leases')
    .select('owner_id')
    .where('study_key', 'like', `${WORKER_LEASE_PREFIX}%`)
    .distinct()
    .execute();
  queue.options.onWaiting?.({
    queued: Number(status.rows[0]?.queued ?? 0),
    running: Number(status.rows[0]?.running ?? 0),
    workers: workers.length,
  });
}
