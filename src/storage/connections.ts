/**
 * PostgreSQL connections: how many each kloop process uses (its budget), and
 * what a pool does when the server refuses one.
 *
 * **The budget** (connections at most, per process; docs/storage.md
 * "Connections"):
 *
 * | process | study pool | lease heartbeat | job queue | total |
 * |---|---|---|---|---|
 * | `kloop run` | {@link STUDY_POOL_SIZE} | 1 | — | 5 |
 * | `kloop run --workers` (coordinator) | 4 | 1 | {@link COORDINATOR_QUEUE_POOL_SIZE} + 1 listening | 8 |
 * | `kloop worker` (any `--concurrency`) | 4 | — | {@link WORKER_QUEUE_POOL_SIZE} (1 of them listening) | 7 |
 * | any other command | 4 | — | — | 4 |
 *
 * plus one short-lived connection while a process opens the study (the
 * schema's migration lock, src/storage/postgres.ts). Pools open connections
 * only when their queries need them and close them after
 * {@link POOL_IDLE_MS} idle; a pool's queries wait in line for a free one.
 *
 * **A refused connection is waited for, not fatal.** When the server refuses
 * a new connection — too many connections (for the role, the database or the
 * server: SQLSTATE 53300), the server starting or shutting down, or it cannot
 * be reached (refused, reset, timed out: a short outage) — the pool tries
 * again with exponential back-off (0.1 s doubling to 2 s) for up to the
 * URL's `connect_timeout` (seconds, as libpq reads it; default
 * {@link CONNECTION_WAIT_MS}), then fails with a {@link StorageError} that
 * says what the server answered and what kloop needs (code
 * `storage.connections` for a connection limit, `storage.connect`
 * otherwise; exit code 1), never a raw stack trace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { InfrastructureError, StorageError } from '../errors.ts';
import type { StorageTarget } from './location.ts';

type PostgresTarget = Extract<StorageTarget, { kind: 'postgres' }>;

/** Connections of a process's study database pool, at most. */
export const STUDY_POOL_SIZE = 4;
/** Connections of the coordinator's job-queue pool (besides its listening connection), at most. */
export const COORDINATOR_QUEUE_POOL_SIZE = 2;
/** Connections of a worker's job-queue pool (graphile-worker's listening connection included), at most, whatever its concurrency. */
export const WORKER_QUEUE_POOL_SIZE = 3;
/** A pooled connection idle this long is closed, in milliseconds. */
export const POOL_IDLE_MS = 5_000;
/** How long a refused connection is tried again without the URL's `connect_timeout`, in milliseconds. */
export const CONNECTION_WAIT_MS = 60_000;

/** Connections at most of each kind of process (the table of the module comment). */
export const CONNECTION_BUDGET = Object.freeze({
  run: STUDY_POOL_SIZE + 1,
  coordinator: STUDY_POOL_SIZE + 1 + COORDINATOR_QUEUE_POOL_SIZE + 1,
  worker: STUDY_POOL_SIZE + WORKER_QUEUE_POOL_SIZE,
  other: STUDY_POOL_SIZE,
});

/** How long to wait for a connection: the URL's `connect_timeout` (seconds), else {@link CONNECTION_WAIT_MS}. */
export function connectionWaitMs(target: PostgresTarget): number {
  const seconds = Number(new URL(target.connectionString).searchParams.get('connect_timeout') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : CONNECTION_WAIT_MS;
}

const REFUSAL_CODES = new Set([
  '53300',
  '57P03',
  '57P01',
  '08001',
  '08006',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);

/** True when a failed connection may succeed later (see the module comment). */
export function isConnectionRefusal(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  if (code !== undefined && REFUSAL_CODES.has(code)) return true;
  const message = (error as Error | undefined)?.message ?? '';
  return /timeout exceeded when trying to connect|Connection terminated/i.test(message);
}

/** A connection failure in words: refused, unknown host, authentication, a connection limit (with kloop's budget). */
export function connectionMessage(target: PostgresTarget, error: unknown, waitedMs?: number): string {
  const code = (error as { code?: string }).code;
  const waited = waitedMs !== undefined && waitedMs > 0 ? ` (tried again for ${Math.round(waitedMs / 1000)} s)` : '';
  const reason =
    code === '53300'
      ? `the server refused a connection: ${(error as Error).message}${waited}; kloop needs at most ${CONNECTION_BUDGET.coordinator} connections for kloop run --workers, ${CONNECTION_BUDGET.worker} per kloop worker, ${CONNECTION_BUDGET.run} for kloop run (docs/storage.md, "Connections"): raise the limit or run fewer processes`
      : code === 'ECONNREFUSED'
        ? `connection refused (is the server running, and on that host and port?)${waited}`
        : code === 'ENOTFOUND'
          ? 'unknown host'
          : code === '28P01' || code === '28000'
            ? `authentication failed (${(error as Error).message}); give the password in PGPASSWORD or ~/.pgpass`
            : code === '3D000'
              ? `${(error as Error).message} (create it first: createdb)`
              : `${(error as Error).message}${waited}`;
  return `cannot connect to the PostgreSQL study database ${target.display}: ${reason}`;
}

/** The error of a connection that could not be had (see the module comment). */
export function connectionError(target: PostgresTarget, error: unknown, waitedMs?: number): StorageError {
  return new StorageError(connectionMessage(target, error, waitedMs), {
    code: (error as { code?: string }).code === '53300' ? 'storage.connections' : 'storage.connect',
    cause: error,
  });
}

/**
 * Tries `connect` again while the server refuses (see the module comment),
 * with exponential back-off, for up to `waitMs`.
 *
 * @throws StorageError when it still refuses after `waitMs`, or at once for any other failure (authentication, unknown host)
 */
export async function connectPatiently<T>(
  target: PostgresTarget,
  connect: () => Promise<T>,
  waitMs = connectionWaitMs(target),
): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await connect();
    } catch (error) {
      const waited = Date.now() - started;
      if (!isConnectionRefusal(error) || waited >= waitMs) throw connectionError(target, error, waited);
      await sleep(Math.min(2_000, 100 * 2 ** attempt, Math.max(1, waitMs - waited)));
    }
  }
}

/** Makes `pool.connect` (and so `pool.query`, and every library on the pool) wait through refusals: {@link connectPatiently}. */
export function makePoolPatient(pool: pg.Pool, target: PostgresTarget): void {
  const once = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const patient = (
    callback?: (error: Error | undefined, client?: pg.PoolClient, release?: (error?: Error | boolean) => void) => void,
  ): Promise<pg.PoolClient> | undefined => {
    const connected = connectPatiently(target, once);
    if (callback === undefined) return connected;
    connected.then(
      (client) => callback(undefined, client, (error) => client.release(error)),
      (error: Error) => callback(error),
    );
    return undefined;
  };
  pool.connect = patient as typeof pool.connect;
}

/** True when a query failed because its connection was lost or could not be had (a short outage), not because of the query. */
export function isConnectionLoss(error: unknown): boolean {
  if (isConnectionRefusal(error)) return true;
  if (StorageError.isInstance(error) && (error.code === 'storage.connect' || error.code === 'storage.connections'))
    return true;
  const code = (error as { code?: string } | undefined)?.code;
  // 25P03: the server ended a session idle inside a transaction (a paused process: src/storage/postgres.ts).
  if (code === '57P02' || code === '08003' || code === '25P03') return true;
  const message = (error as Error | undefined)?.message ?? '';
  return /Connection terminated|not queryable|connection error|ECONNRESET|EPIPE/i.test(message);
}

/** The error of a database lost for good (past the wait): an infrastructure failure, so a run stops `infrastructure_failure` with its report. */
export function databaseLostError(target: PostgresTarget, error: unknown, detail: string): InfrastructureError {
  return new InfrastructureError(
    `lost the PostgreSQL study database ${target.display}: ${detail}: ${(error as Error).message}`,
    { code: 'infrastructure.database', cause: error, isRetryable: true },
  );
}

/**
 * Runs `work`, and again with back-off (0.1 s doubling to 2 s) while it fails
 * with a lost connection ({@link isConnectionLoss}), for up to the URL's
 * `connect_timeout` (default {@link CONNECTION_WAIT_MS}). Only for work that
 * may run twice (reads, keyed inserts, a whole poll of the job queue).
 *
 * @throws InfrastructureError (code `infrastructure.database`) when the database stayed away past the wait
 */
export async function retryThroughOutage<T>(
  target: PostgresTarget,
  work: () => Promise<T>,
  waitMs = connectionWaitMs(target),
): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionLoss(error)) throw error;
      const waited = Date.now() - started;
      if (waited >= waitMs) throw databaseLostError(target, error, `unreachable for ${Math.round(waited / 1000)} s`);
      await sleep(Math.min(2_000, 100 * 2 ** attempt, Math.max(1, waitMs - waited)));
    }
  }
}
