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
import type { DatabaseConnection, Driver, TransactionSettings } from 'kysely';
import { CompiledQuery, Kysely, PostgresDialect, PostgresDriver, sql } from 'kysely';
import { FenceHolder, FencedDriver, registerFenceHolder } from './write-fence.ts';
import type { KloopDatabase } from './schema.ts';
import type { StorageTarget } from './location.ts';
import { StorageError } from '../errors.ts';

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

/** The two 32-bit keys of the study's writer lock (`pg_advisory_xact_lock(int, int)`), from the schema name. */
export function writerLockKeys(schema: string): [number, number] {
  const digest = createHash('sha256').update(`kloop study writer lock\u0000${schema}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/** Options of {@link createPostgresPool}. */
export interface PostgresPoolOptions {
  /** Refuse every write (`default_transaction_read_only`). Default false. */
  readonly?: boolean;
  /** Connections at most. Default 10. */
  max?: number;
  /** The schema to put first on the search path. Default the target's. */
  schema?: string;
}

/** A `pg` pool on the target, its search path set to the study's schema, numbers parsed as numbers. */
export function createPostgresPool(target: PostgresTarget, options: PostgresPoolOptions = {}): pg.Pool {
  const settings = [`-c search_path=${options.schema ?? target.schema}`];
  if (options.readonly === true) settings.push('-c default_transaction_read_only=on');
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? 10,
    options: settings.join(' '),
    types: NUMBER_TYPES,
    connectionTimeoutMillis: 15_000,
    idleTimeoutMillis: 10_000,
  });
  // An idle client whose server went away emits 'error' on the pool; without a listener that would end the process.
  pool.on('error', () => undefined);
  // The same for a checked-out client between queries (its queries report their own failures).
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** PostgreSQL's driver, but a write transaction begins by taking the study's writer lock (see the module comment). */
class WriterLockDriver extends PostgresDriver {
  readonly #begin: string;

  constructor(config: ConstructorParameters<typeof PostgresDriver>[0], schema: string, busyTimeoutMs: number) {
    super(config);
    const [high, low] = writerLockKeys(schema);
    this.#begin = `begin; set local lock_timeout = ${Math.max(1, Math.round(busyTimeoutMs))}; select pg_advisory_xact_lock(${high}, ${low})`;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.accessMode === 'read only' || settings.isolationLevel !== undefined) return super.beginTransaction(connection, settings);
    try {
      await connection.executeQuery(CompiledQuery.raw(this.#begin));
    } catch (error) {
      // The lock was not granted (busy) or the connection failed: end the transaction begun, so the pooled connection is clean.
      await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
      throw error;
    }
  }
}

class KloopPostgresDialect extends PostgresDialect {
  /** The fences of the lease this connection holds (src/storage/write-fence.ts): checked by every write. */
  readonly fences = new FenceHolder((index) => `$${index}`);
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #busyTimeoutMs: number;

  constructor(pool: pg.Pool, schema: string, busyTimeoutMs: number) {
    super({ pool });
    this.#pool = pool;
    this.#schema = schema;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  override createDriver(): Driver {
    return new FencedDriver(new WriterLockDriver({ pool: this.#pool }, this.#schema, this.#busyTimeoutMs), this.fences);
  }
}

/** A connection failure in words: refused, unknown host, authentication. */
function connectionMessage(target: PostgresTarget, error: unknown): string {
  const code = (error as { code?: string }).code;
  const reason =
    code === 'ECONNREFUSED'
      ? 'connection refused (is the server running, and on that host and port?)'
      : code === 'ENOTFOUND'
        ? 'unknown host'
        : code === '28P01' || code === '28000'
          ? `authentication failed (${(error as Error).message}); give the password in PGPASSWORD or ~/.pgpass`
          : code === '3D000'
            ? `${(error as Error).message} (create it first: createdb)`
            : (error as Error).message;
  return `cannot connect to the PostgreSQL study database ${target.display}: ${reason}`;
}

/** Options of {@link openPostgresKysely}. */
export interface OpenPostgresOptions {
  readonly?: boolean;
  /** How long a write transaction waits for the writer lock, in milliseconds. Default 10 000. */
  busyTimeoutMs?: number;
  /** Pool size. Default 10. */
  poolSize?: number;
}

/**
 * A Kysely instance on a PostgreSQL target (no migration): connects once to
 * report a bad URL, a refused connection or a failed authentication at once.
 *
 * @throws StorageError naming the (redacted) URL when the server cannot be reached
 */
export async function openPostgresKysely(target: PostgresTarget, options: OpenPostgresOptions = {}): Promise<Kysely<KloopDatabase>> {
  const pool = createPostgresPool(target, { readonly: options.readonly === true, max: options.poolSize ?? 10 });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StorageError(connectionMessage(target, error), { code: 'storage.connect', cause: error });
  }
  const dialect = new KloopPostgresDialect(pool, target.schema, options.busyTimeoutMs ?? 10_000);
  const db = new Kysely<KloopDatabase>({ dialect });
  registerFenceHolder(db, dialect.fences);
  return db;
}

/** Creates the target's schema when it does not exist yet (without needing CREATE on the database when it does). */
export async function ensureSchema(db: Kysely<KloopDatabase>, schema: string): Promise<void> {
  const found = await sql<{ found: number }>`select count(*) as found from information_schema.schemata where schema_name = ${schema}`.execute(db);
  if (Number(found.rows[0]?.found ?? 0) > 0) return;
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
}

export { isPostgresDatabase } from './is-postgres-database.ts';

/**
 * True when the schema of the target holds a kloop notebook: its migration
 * table records an applied migration. Kysely creates that table before it
 * runs the migrations (all of them in one transaction), so a first run killed
 * in between leaves the table empty and no notebook: the next run migrates.
 */
export async function postgresNotebookExists(target: PostgresTarget): Promise<boolean> {
  const pool = createPostgresPool(target, { readonly: true, max: 1 });
  try {
    const result = await pool.query<{ found: number }>("select count(*) as found from information_schema.tables where table_schema = $1 and table_name = 'kysely_migration'", [target.schema]);
    if (Number(result.rows[0]?.found ?? 0) === 0) return false;
    const applied = await pool.query<{ found: boolean }>(`select exists (select 1 from "${target.schema.replace(/"/g, '""')}".kysely_migration) as found`);
    return applied.rows[0]?.found === true;
  } catch (error) {
    throw new StorageError(connectionMessage(target, error), { code: 'storage.connect', cause: error });
  } finally {
    await pool.end().catch(() => undefined);
  }
}
