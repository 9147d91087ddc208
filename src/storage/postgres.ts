/**
 * The PostgreSQL backend of the study database: Kysely's PostgresDialect on a
 * `pg` pool, with the behaviour of the SQLite backend where it matters.
 *
 * - **One writer at a time.** SQLite serialises writers (every write
 *   transaction of a study connection begins `IMMEDIATE`). Here every
 *   transaction that is not read-only begins by taking a transaction-scoped
 *   advisory lock of the study's schema (`pg_advisory_xact_lock`), so two
 *   transactions that read and then write (the lease's take-over, a decision
 *   with its corpus moves) run one after the other, exactly as on SQLite.
 *   Single statements outside a transaction (a stored result, a heartbeat)
 *   take no such lock: row locks order them.
 * - **Busy, not stuck.** The lock is waited for up to the busy timeout
 *   (`lock_timeout`, default 10 s); past it PostgreSQL answers
 *   `lock_not_available` (55P03), which src/storage/busy.ts counts as busy:
 *   the same retries and the same exit code 3 as SQLite's `SQLITE_BUSY`.
 * - **A paused process does not keep the lock.** A process stopped inside a
 *   transaction (SIGSTOP, a suspended VM, a long GC pause; or stopped while
 *   its `BEGIN` waited for the lock, which the server then grants it) would
 *   hold the writer lock, and every row it wrote, for as long as it stays
 *   stopped: the process that takes its stale lease over would wait for ever
 *   (issue 36, the PostgreSQL take-over that hung). Every connection sets
 *   `idle_in_transaction_session_timeout` to the lease's staleness
 *   ({@link LEASE_STALE_AFTER_MS}, 15 s): the server ends such a session, its
 *   transaction rolled back, by the time its lease may be taken over; a
 *   process paused for less keeps its transaction. kloop never waits on
 *   anything else inside a transaction, so a live process is never cut off.
 *   When the paused process goes on, its next write finds the lease taken
 *   over and is refused (`lease_lost`, src/storage/write-fence.ts).
 * - **One study per schema.** The URL's `schema` parameter (default
 *   `public`) is the connection's `search_path`; the schema is created on the
 *   first writable open and migrated there (Kysely's migrator takes its own
 *   advisory lock, so two processes migrating at once wait for each other).
 * - **Numbers as numbers.** `count(*)` and sums are `bigint` and `avg` is
 *   `numeric` in PostgreSQL, which `pg` returns as strings by default; this
 *   pool returns them as JavaScript numbers, as better-sqlite3 does.
 * - **Read-only opens** set `default_transaction_read_only`: the server
 *   refuses any write.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { DatabaseIntrospector, Driver } from 'kysely';
import { SchemaPostgresIntrospector } from './postgres-introspector.ts';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { FenceHolder, FencedDriver, registerFenceHolder } from './write-fence.ts';
import type { KloopDatabase } from './schema.ts';
import { StudyPostgresDriver, writerLockKeys } from './postgres-driver.ts';
import { POOL_IDLE_MS, STUDY_POOL_SIZE, connectPatiently, connectionError, makePoolPatient } from './connections.ts';
import type { StorageTarget } from './location.ts';
import { LEASE_STALE_AFTER_MS } from './lease-timing.ts';
import { KloopError } from '../errors.ts';

type PostgresTarget = Extract<StorageTarget, { kind: 'postgres' }>;

/** PostgreSQL type ids whose text `pg` would hand back as strings: int8 (count, sum) and numeric (avg). */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** `pg`'s type parsers, but 64-bit integers and numerics as JavaScript numbers (as better-sqlite3 gives them). */
const NUMBER_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => (value === null ? null : Number(value));
    return pg.types.getTypeParser(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

export { writerLockKeys };

/**
 * The two 32-bit keys of the schema's migration lock (a session-level
 * advisory lock, `pg_advisory_lock(int, int)`): held exclusively while a
 * writable open creates and migrates the schema, shared while a reader asks
 * whether the notebook exists (see {@link withSchemaLock}).
 */
export function migrationLockKeys(schema: string): [number, number] {
  const digest = createHash('sha256').update(`kloop schema migration lock\u0000${schema}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/** How long an open waits for another process creating or migrating the same schema, in milliseconds. */
export const SCHEMA_LOCK_TIMEOUT_MS = 120_000;

/**
 * Runs `work` holding the schema's migration lock on a connection of its own
 * (released with it, even when the process dies: the server ends the
 * session). `exclusive`: one process creates and migrates the schema at a
 * time; `shared`: a reader never sees a schema half created (Kysely's
 * migrator creates its own table before the migrations' transaction
 * commits: without the lock a reader could find `kysely_migration` and then
 * miss `corpus_members`).
 *
 * @throws StudyBusyError (exit code 3) when another process held the lock for {@link SCHEMA_LOCK_TIMEOUT_MS}
 * @throws StorageError when the server cannot be reached
 */
export async function withSchemaLock<T>(
  target: PostgresTarget,
  mode: 'exclusive' | 'shared',
  work: (client: pg.Client) => Promise<T>,
  timeoutMs = SCHEMA_LOCK_TIMEOUT_MS,
): Promise<T> {
  const client = await connectPatiently(target, async () => {
    const next = new pg.Client({
      connectionString: target.connectionString,
      types: NUMBER_TYPES,
      connectionTimeoutMillis: 15_000,
    });
    next.on('error', () => undefined);
    try {
      await next.connect();
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    return next;
  });
  const [high, low] = migrationLockKeys(target.schema);
  try {
    await client.query(`set lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
    try {
      await client.query(
        mode === 'exclusive' ? 'select pg_advisory_lock($1, $2)' : 'select pg_advisory_lock_shared($1, $2)',
        [high, low],
      );
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
      const { StudyBusyError } = await import('./lease.ts');
      throw new StudyBusyError(undefined, {
        message: `the study database ${target.display} was being created or migrated by another process for ${Math.round(timeoutMs / 1000)} s; try again when that process is done`,
        cause: error,
      });
    }
    return await work(client);
  } finally {
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }
}

/** Options of {@link createPostgresPool}. */
export interface PostgresPoolOptions {
  /** Refuse every write (`default_transaction_read_only`). Default false. */
  readonly?: boolean;
  /** Connections at most. Default {@link STUDY_POOL_SIZE} (src/storage/connections.ts: the budget). */
  max?: number;
  /** The schema to put first on the search path. Default the target's. */
  schema?: string;
  /** `idle_in_transaction_session_timeout`, in milliseconds. Default {@link LEASE_STALE_AFTER_MS} (the module comment). */
  idleInTransactionMs?: number;
}

/** A `pg` pool on the target, its search path set to the study's schema, numbers parsed as numbers. */
export function createPostgresPool(target: PostgresTarget, options: PostgresPoolOptions = {}): pg.Pool {
  const settings = [
    `-c search_path=${options.schema ?? target.schema}`,
    `-c idle_in_transaction_session_timeout=${Math.max(1, Math.round(options.idleInTransactionMs ?? LEASE_STALE_AFTER_MS))}`,
  ];
  if (options.readonly === true) settings.push('-c default_transaction_read_only=on');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? STUDY_POOL_SIZE,
    options: settings.join(' '),
    types: NUMBER_TYPES,
    connectionTimeoutMillis: 15_000,
    idleTimeoutMillis: POOL_IDLE_MS,
  });
  // An idle client whose server went away emits 'error' on the pool; without a listener that would end the process.
  pool.on('error', () => undefined);
  // The same for a checked-out client between queries (its queries report their own failures).
  pool.on('connect', (client) => client.on('error', () => undefined));
  // A refused connection (a connection limit, a short outage) is tried again, not fatal.
  makePoolPatient(pool, target);
  return pool;
}

class KloopPostgresDialect extends PostgresDialect {
  /** The fences of the lease this connection holds (src/storage/write-fence.ts): checked by every write. */
  readonly fences = new FenceHolder((index) => `$${index}`);
  readonly #pool: pg.Pool;
  readonly #target: PostgresTarget;
  readonly #busyTimeoutMs: number;

  constructor(pool: pg.Pool, target: PostgresTarget, busyTimeoutMs: number) {
    super({ pool });
    this.#pool = pool;
    this.#target = target;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Introspection of the study's own schema only (src/storage/postgres-introspector.ts): another schema dropped meanwhile cannot fail it. */
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SchemaPostgresIntrospector(db, this.#target.schema);
  }

  override createDriver(): Driver {
    return new FencedDriver(
      new StudyPostgresDriver({ pool: this.#pool }, this.#target, this.#busyTimeoutMs),
      this.fences,
    );
  }
}

/** Options of {@link openPostgresKysely}. */
export interface OpenPostgresOptions {
  readonly?: boolean;
  /** How long a write transaction waits for the writer lock, in milliseconds. Default 10 000. */
  busyTimeoutMs?: number;
  /** Pool size. Default {@link STUDY_POOL_SIZE}. */
  poolSize?: number;
  /** How long a session may sit idle inside a transaction, in milliseconds. Default {@link LEASE_STALE_AFTER_MS}. */
  idleInTransactionMs?: number;
}

/**
 * A Kysely instance on a PostgreSQL target (no migration): connects once to
 * report a bad URL, a refused connection or a failed authentication at once.
 *
 * @throws StorageError naming the (redacted) URL when the server cannot be reached
 */
export async function openPostgresKysely(
  target: PostgresTarget,
  options: OpenPostgresOptions = {},
): Promise<Kysely<KloopDatabase>> {
  const pool = createPostgresPool(target, {
    readonly: options.readonly === true,
    max: options.poolSize ?? STUDY_POOL_SIZE,
    ...(options.idleInTransactionMs !== undefined ? { idleInTransactionMs: options.idleInTransactionMs } : {}),
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw KloopError.isInstance(error) ? error : connectionError(target, error);
  }
  const dialect = new KloopPostgresDialect(pool, target, options.busyTimeoutMs ?? 10_000);
  const db = new Kysely<KloopDatabase>({ dialect });
  registerFenceHolder(db, dialect.fences);
  return db;
}

/** Creates the target's schema when it does not exist yet (without needing CREATE on the database when it does). */
export async function ensureSchema(db: Kysely<KloopDatabase>, schema: string): Promise<void> {
  const found = await sql<{
    found: number;
  }>`select count(*) as found from information_schema.schemata where schema_name = ${schema}`.execute(db);
  if (Number(found.rows[0]?.found ?? 0) > 0) return;
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
}

export { isPostgresDatabase } from './is-postgres-database.ts';

/**
 * True when the schema of the target holds a kloop notebook: its migration
 * table with at least one applied migration (the migrations' rows commit with
 * their tables), asked under the schema's shared migration lock, so a schema
 * another process is creating right now is waited for, never half seen.
 *
 * @throws StorageError when the server cannot be reached
 * @throws StudyBusyError when the schema stayed locked by its migration (see {@link withSchemaLock})
 */
export async function postgresNotebookExists(target: PostgresTarget): Promise<boolean> {
  try {
    return await withSchemaLock(target, 'shared', async (client) => {
      const table = await client.query<{ found: number }>(
        "select count(*) as found from information_schema.tables where table_schema = $1 and table_name = 'kysely_migration'",
        [target.schema],
      );
      if (Number(table.rows[0]?.found ?? 0) === 0) return false;
      const applied = await client.query<{ applied: number }>(
        `select count(*) as applied from "${target.schema}".kysely_migration`,
      );
      return Number(applied.rows[0]?.applied ?? 0) > 0;
    });
  } catch (error) {
    if (KloopError.isInstance(error)) throw error;
    throw connectionError(target, error);
  }
}
