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
import pg from 'pg';
import type { Logger as GraphileLogger, WorkerUtils } from 'graphile-worker';
import type { RemoteExecution, RemoteItem, RemoteRequest } from './remote-execution.ts';
import { resultKey } from './remote-execution.ts';
import { InfrastructureError, InputError } from '../errors.ts';
import type { StudyDatabase } from './database.ts';
import { LEASE_STALE_AFTER_MS } from './lease.ts';
import type { StorageTarget } from './location.ts';
import { parseStorageTarget } from './location.ts';
import { COORDINATOR_QUEUE_POOL_SIZE, connectPatiently, retryThroughOutage } from './connections.ts';
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

/** graphile-worker, loaded when first needed (a CommonJS module: its exports are on `default` when imported from an ES module bundle). */
export async function graphile(): Promise<typeof import('graphile-worker')> {
  const loaded = (await import('graphile-worker')) as typeof import('graphile-worker') & {
    default?: typeof import('graphile-worker');
  };
  await retryLostConnections();
  return typeof loaded.run === 'function' ? loaded : loaded.default!;
}

/**
 * graphile-worker runs its own statements (take a job, complete it, fail it)
 * again on a new connection, with back-off, for the error codes of its table
 * `RETRYABLE_ERROR_CODES` (a serialization failure, a server starting, a
 * timeout); a connection reset or refused during a short outage is not among
 * them, and such a failure of a batched completion escaped as an unhandled
 * rejection that ended a busy worker with a raw stack trace (peer fault 13).
 * The connection losses are added, with the back-off of a starting server's
 * (0.1 s growing to 10 s, 100 tries).
 */
async function retryLostConnections(): Promise<void> {
  type Codes = Record<string, { minDelay: number; maxDelay: number } | undefined>;
  const lib = (await import('graphile-worker/dist/lib.js')) as {
    RETRYABLE_ERROR_CODES?: Codes;
    default?: { RETRYABLE_ERROR_CODES?: Codes };
  };
  const codes = lib.RETRYABLE_ERROR_CODES ?? lib.default?.RETRYABLE_ERROR_CODES;
  if (codes === undefined) return;
  for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', '57P01', '08006', '08003'])
    codes[code] ??= { minDelay: 100, maxDelay: 10_000 };
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

  // One listening connection: a worker's NOTIFY after each job (its job key) wakes the evaluation waiting for that
  // job only — with a round's candidates screened at once, dozens wait together, and each wake-up is two queries.
  const waiters = new Map<() => void, ReadonlySet<string>>();
  const wakeAll = (): void => {
    for (const wake of [...waiters.keys()]) wake();
  };
  const wakeFor = (jobKey: string | undefined): void => {
    for (const [wake, keys] of [...waiters]) if (jobKey === undefined || jobKey === '' || keys.has(jobKey)) wake();
  };
  const listener = await connectPatiently(target, async () => {
    const client = new pg.Client({ connectionString: target.connectionString });
    client.on('error', (error) => options.log?.(`job queue: the listening connection failed: ${error.message}`));
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  });
  listener.on('notification', (message) => wakeFor(message.payload));
  await listener.query(`listen ${resultsChannel(queueSchema)}`);

  const wait = (ms: number, signal: AbortSignal | undefined, jobKeys: ReadonlySet<string>): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.set(done, jobKeys);
      signal?.addEventListener('abort', done, { once: true });
    });

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

  return {
    async execute(request: RemoteRequest, signal?: AbortSignal): Promise<ReadonlyMap<string, string>> {
      const planned = jobsOf(request, options.batchSize);
      const task = evaluationTask(request.fingerprint);
      const keyOf = new Map(planned.map(({ job, items }) => [evaluationJobKey(job), items]));
      const jobKeys: ReadonlySet<string> = new Set(keyOf.keys());
      // Keyed jobs: adding one again through an outage adds nothing twice.
      for (const { job } of planned)
        await outage(() =>
          utils.addJob(task, job, {
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
        let query = db
          .selectFrom('example_results')
          .select(['example_id', 'repeat'])
          .where('fingerprint', '=', request.storedAs ?? request.fingerprint)
          .where('artifact_hash', '=', request.artifactHash)
          .where('repeat', 'in', repeats);
        if (request.readSince !== undefined) query = query.where('created_at', '>=', request.readSince);
        const stored = new Set((await query.execute()).map((row) => resultKey(row.example_id, row.repeat)));
        const missing = [...wanted].filter((key) => !stored.has(key) && !givenUp.has(key));
        if (missing.length < remaining) {
          remaining = missing.length;
          lastProgress = Date.now();
        }
        if (missing.length === 0) return givenUp;
        // Jobs that failed on every attempt: their missing results are given up (transient failures), and the jobs removed.
        const failed = await outage(() =>
          pool.query<{ id: string; key: string; last_error: string | null }>(
            `select id, key, last_error from ${queueSchema}.jobs where key = any($1::text[]) and attempts >= max_attempts and locked_at is null`,
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
        if (failed.rows.length > 0) {
          await outage(() => utils.completeJobs(failed.rows.map((row) => row.id)));
          continue;
        }
        await sweep();
        if (Date.now() - lastProgress >= 30_000) {
          lastProgress = Date.now();
          const status = await outage(() =>
            pool.query<{ queued: number; running: number }>(
              `select count(*) filter (where locked_at is null) as queued, count(*) filter (where locked_at is not null) as running from ${queueSchema}.jobs where task_identifier = $1`,
              [task],
            ),
          );
          const workers = await db
            .selectFrom('leases')
            .select('owner_id')
            .where('study_key', 'like', `${WORKER_LEASE_PREFIX}%`)
            .distinct()
            .execute();
          options.onWaiting?.({
            queued: Number(status.rows[0]?.queued ?? 0),
            running: Number(status.rows[0]?.running ?? 0),
            workers: workers.length,
          });
        }
        await wait(COORDINATOR_POLL_MS, signal, jobKeys);
      }
    },
    async close(): Promise<void> {
      wakeAll();
      await listener.end().catch(() => undefined);
      await utils.release();
      await pool.end().catch(() => undefined);
    },
  };
}
