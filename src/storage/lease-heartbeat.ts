/**
 * The lease's heartbeat: renews the run lease (src/storage/lease.ts) every
 * {@link LEASE_HEARTBEAT_INTERVAL_MS} until stopped. On a file database or a
 * PostgreSQL URL it runs in a worker thread with its own connection, so a long
 * synchronous stretch of the main thread never lets the lease look dead; on
 * any other database, on a timer of the main thread.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { StudyDatabase } from './study-database.ts';
import type { LeaseRecord } from './lease.ts';
import { LEASE_HEARTBEAT_INTERVAL_MS, LEASE_STALE_AFTER_MS } from './lease-timing.ts';
import { isPostgresUrl, parseStorageTarget } from './location.ts';
import { isLeaseLost } from './write-fence.ts';

/** Renews the heartbeat; false when the lease is no longer ours (taken over: the fence refuses the write, or no row is ours). */
export async function renewLease(
  db: StudyDatabase,
  lease: LeaseRecord,
  now: () => Date = () => new Date(),
): Promise<boolean> {
  try {
    const result = await db
      .updateTable('leases')
      .set({ heartbeat_at: now().toISOString() })
      .where('study_key', '=', lease.studyKey)
      .where('owner_id', '=', lease.ownerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  } catch (error) {
    if (isLeaseLost(error)) return false;
    throw error;
  }
}

/** A running heartbeat. */
export interface LeaseHeartbeat {
  /** Stops renewing (idempotent). */
  stop(): Promise<void>;
}

/** Options of {@link startLeaseHeartbeat}. */
export interface HeartbeatOptions {
  /** The location of `db` (its SQLite file, or its PostgreSQL URL): the heartbeat then runs in a worker thread with its own connection. */
  file?: string;
  /** Default {@link LEASE_HEARTBEAT_INTERVAL_MS}. */
  intervalMs?: number;
  /** Called once if the lease turns out to be someone else's (taken over while this process looked dead). */
  onLost?: () => void;
  /** Called when a renewal fails (e.g. the database stayed locked); renewals go on. */
  onError?: (message: string) => void;
}

// Plain JavaScript run by the worker thread: its own better-sqlite3 connection, one UPDATE per beat.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
const renew = db.prepare('UPDATE leases SET heartbeat_at = ? WHERE study_key = ? AND owner_id = ?');
let timer;
const beat = () => {
  try {
    const result = renew.run(new Date().toISOString(), workerData.studyKey, workerData.ownerId);
    if (result.changes === 0) { clearInterval(timer); parentPort.postMessage({ type: 'lost' }); }
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String(error && error.message || error) });
  }
};
timer = setInterval(beat, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage({ type: 'ready' });
`;

// The same for PostgreSQL: its own `pg` connection (made again after a failure), one UPDATE per beat; a connection
// refused for a connection limit is tried again at the next beats without a warning for up to `patientMs`.
const POSTGRES_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Client } = require(workerData.driver);
let client;
const connect = async () => {
  if (client !== undefined) return client;
  const next = new Client({ connectionString: workerData.connectionString, options: '-c search_path=' + workerData.schema + ' -c lock_timeout=' + workerData.busyTimeoutMs, connectionTimeoutMillis: workerData.busyTimeoutMs });
  next.on('error', () => { if (client === next) client = undefined; });
  await next.connect();
  client = next;
  return next;
};
let timer;
let busy = false;
let lastBeat = Date.now();
const beat = async () => {
  if (busy) return;
  busy = true;
  try {
    const connection = await connect();
    const result = await connection.query('UPDATE leases SET heartbeat_at = $1 WHERE study_key = $2 AND owner_id = $3', [new Date().toISOString(), workerData.studyKey, workerData.ownerId]);
    lastBeat = Date.now();
    if (result.rowCount === 0) { clearInterval(timer); parentPort.postMessage({ type: 'lost' }); }
  } catch (error) {
    const failed = client; client = undefined; if (failed !== undefined) failed.end().catch(() => {});
    // A connection refused for a connection limit (53300) is tried again at the next beats, quietly, while the lease
    // is far from stale: the pools free a slot within a query or two. Past patientMs it is said.
    const refused = error && error.code === '53300';
    if (!refused || Date.now() - lastBeat >= workerData.patientMs) parentPort.postMessage({ type: 'error', message: String(error && error.message || error) });
  } finally {
    busy = false;
  }
};
timer = setInterval(beat, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  const closing = client === undefined ? Promise.resolve() : client.end().catch(() => {});
  closing.then(() => parentPort.close());
});
parentPort.postMessage({ type: 'ready' });
`;

/** The worker thread's source and data for a location: better-sqlite3 on a file, `pg` on a PostgreSQL URL. */
function heartbeatWorker(
  location: string,
  common: { busyTimeoutMs: number; intervalMs: number; studyKey: string; ownerId: string },
): { source: string; data: Record<string, unknown> } {
  const require = createRequire(import.meta.url);
  if (isPostgresUrl(location)) {
    const target = parseStorageTarget(location);
    if (target.kind === 'postgres') {
      // Refused connections are retried quietly for up to half the staleness (the comment of POSTGRES_WORKER_SOURCE).
      const data = {
        ...common,
        driver: require.resolve('pg'),
        connectionString: target.connectionString,
        schema: target.schema,
        patientMs: LEASE_STALE_AFTER_MS / 2,
      };
      return { source: POSTGRES_WORKER_SOURCE, data };
    }
  }
  return { source: WORKER_SOURCE, data: { ...common, driver: require.resolve('better-sqlite3'), file: location } };
}

/**
 * Renews the lease every `intervalMs` until stopped. With `file`, in a
 * worker thread (immune to a busy main thread); else on a main-thread timer.
 */
export function startLeaseHeartbeat(
  db: StudyDatabase,
  lease: LeaseRecord,
  options: HeartbeatOptions = {},
): LeaseHeartbeat {
  const intervalMs = options.intervalMs ?? LEASE_HEARTBEAT_INTERVAL_MS;
  let lost = false;
  const markLost = (): void => {
    if (lost) return;
    lost = true;
    options.onLost?.();
  };
  if (options.file !== undefined && options.file !== ':memory:') {
    const { source, data } = heartbeatWorker(options.file, {
      // A beat waits for the write lock (a transaction of the run holds it from its BEGIN IMMEDIATE) up to a
      // third of the staleness timeout: a long transaction delays beats instead of failing them with a warning.
      busyTimeoutMs: Math.max(1_000, intervalMs, LEASE_STALE_AFTER_MS / 3),
      intervalMs,
      studyKey: lease.studyKey,
      ownerId: lease.ownerId,
    });
    const worker = new Worker(source, { eval: true, workerData: data });
    worker.unref();
    worker.on('message', (message: { type: string; message?: string }) => {
      if (message.type === 'lost') markLost();
      else if (message.type === 'error') options.onError?.(message.message ?? 'unknown error');
    });
    worker.on('error', (error) => options.onError?.(error.message));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    let stopping: Promise<void> | undefined;
    return {
      stop() {
        stopping ??= (async () => {
          worker.ref(); // keep the process alive until the worker has closed its connection
          worker.postMessage('stop');
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 2_000)));
          const outcome = await Promise.race([exited.then(() => 'exited' as const), timeout]);
          clearTimeout(timer);
          if (outcome === 'timeout') await worker.terminate();
        })();
        return stopping;
      },
    };
  }
  const timer = setInterval(() => {
    renewLease(db, lease).then(
      (held) => {
        if (!held) {
          clearInterval(timer);
          markLost();
        }
      },
      (error: unknown) => options.onError?.(error instanceof Error ? error.message : String(error)),
    );
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
    },
  };
}
