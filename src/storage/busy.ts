/**
 * SQLite's "database is locked" family, told apart by code, and a bounded
 * retry for it.
 *
 * In WAL mode readers never wait, and one writer at a time holds the write
 * lock. A statement or `BEGIN IMMEDIATE` that finds the lock taken waits for
 * it (the connection's busy timeout) and then fails with `SQLITE_BUSY`. A
 * deferred transaction that has already read and then tries to write after
 * another connection committed fails at once with `SQLITE_BUSY_SNAPSHOT`: its
 * snapshot is stale, and the busy timeout does not apply (SQLite, "Result and
 * Error Codes", SQLITE_BUSY_SNAPSHOT; "Write-Ahead Logging", §2.2). The study
 * database therefore begins every transaction of a writable connection with
 * `BEGIN IMMEDIATE` (src/storage/database.ts), and the callers that must
 * answer "busy" rather than fail (opening and migrating, taking the lease)
 * retry the whole step a bounded number of times.
 */

/**
 * True for SQLite's busy codes: `SQLITE_BUSY` and its extended codes
 * (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_RECOVERY`, `SQLITE_BUSY_TIMEOUT`),
 * as better-sqlite3 reports them in `error.code`. Looks through `cause`.
 */
export function isSqliteBusy(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** PostgreSQL's `lock_not_available` (55P03): a lock (the study's writer lock) not granted within `lock_timeout`. */
const POSTGRES_LOCK_NOT_AVAILABLE = '55P03';

/**
 * True when a database reports it is busy: SQLite's busy codes
 * ({@link isSqliteBusy}) or PostgreSQL's `lock_not_available` (the study's
 * writer lock stayed taken past the busy timeout: src/storage/postgres.ts).
 * Looks through `cause`.
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (isSqliteBusy(error)) return true;
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    if ((current as { code?: unknown }).code === POSTGRES_LOCK_NOT_AVAILABLE) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** How often a step is tried in all by {@link retryWhileBusy} (the first try included). Default of `attempts`. */
export const BUSY_ATTEMPTS = 3;
/** Pause before the n-th retry, in milliseconds: n × this. Default of `backoffMs`. */
export const BUSY_BACKOFF_MS = 50;

/** Options of {@link retryWhileBusy}. */
export interface BusyRetryOptions {
  /** Tries in all, ≥ 1. Default {@link BUSY_ATTEMPTS}. */
  attempts?: number;
  /** Pause before the n-th retry is n × `backoffMs` milliseconds. Default {@link BUSY_BACKOFF_MS}. */
  backoffMs?: number;
}

/**
 * Runs `work`, and again (up to `attempts` tries in all, pausing n ×
 * `backoffMs` ms before the n-th retry) while it fails with a busy code
 * ({@link isDatabaseBusy}). `work` must be safe to repeat: a whole transaction,
 * not a part of one.
 *
 * @returns what `work` returns
 * @throws the last busy error when every try was busy; any other error at once
 */
export async function retryWhileBusy<T>(work: () => Promise<T>, options: BusyRetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? BUSY_ATTEMPTS);
  const backoffMs = options.backoffMs ?? BUSY_BACKOFF_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !isDatabaseBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * backoffMs));
    }
  }
}
