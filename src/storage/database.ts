/**
 * Opening the study database: SQLite in `<study>/.kloop/kloop.db` (WAL,
 * busy timeout, the embedded default) or PostgreSQL (a `postgres://` URL:
 * src/storage/postgres.ts, loaded with its driver only for such a URL), both behind Kysely: the same queries and the same
 * migrations run on both (src/storage/migrations.ts), and the storage test
 * suite (src/storage/storage-contract.test.ts) holds every backend to the
 * same behaviour.
 *
 * On a writable connection every transaction begins with `BEGIN IMMEDIATE`:
 * it takes the write lock first, waiting for it under the busy timeout, so a
 * transaction that reads and then writes can never find its snapshot stale
 * (`SQLITE_BUSY_SNAPSHOT`, which no busy timeout retries: src/storage/busy.ts).
 * Migrations run in one such transaction.
 */
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, SqliteAdapter, SqliteDialect, SqliteDriver } from 'kysely';
import type {
  DatabaseConnection,
  DialectAdapter,
  Driver,
  Migration,
  MigrationProvider,
  SqliteDialectConfig,
  TransactionSettings,
} from 'kysely';
import { StorageError } from '../errors.ts';
import { isDatabaseBusy, retryWhileBusy } from './busy.ts';
import { StudyBusyError } from './lease.ts';
import type { StorageTarget } from './location.ts';
import { describeTarget, isPostgresUrl, parseStorageTarget, sqliteStudyFile, studyStorage } from './location.ts';
import { MIGRATIONS } from './migrations.ts';
import { withMigrationLock } from './migration-lock.ts';
import { FenceHolder, FencedDriver, registerFenceHolder } from './write-fence.ts';
import type { KloopDatabase } from './schema.ts';
import type { StudyDatabase } from './study-database.ts';

// The handle's type and the helpers that need no driver live in study-database.ts (the engine reaches no driver).
export { backendOf, isoNow, listTables, type StudyDatabase } from './study-database.ts';

/** Where a study keeps its SQLite database: `<study>/.kloop/kloop.db` (whatever its `storage`: see {@link studyDatabaseLocation}). */
export function studyDatabasePath(studyDir: string): string {
  return sqliteStudyFile(studyDir);
}

/**
 * Where a study's notebook is, as {@link openDatabase} takes it: `--db`, else
 * kloop.yaml's `storage` (a `postgres://` URL), else the SQLite file
 * `<study>/.kloop/kloop.db` (src/storage/location.ts).
 */
export function studyDatabaseLocation(studyDir: string): string {
  return studyStorage(studyDir);
}

/**
 * True when a notebook exists at `location`: the SQLite file, or a migrated
 * schema in the PostgreSQL database.
 *
 * @throws StorageError when the PostgreSQL server cannot be reached
 */
export async function databaseExists(location: string): Promise<boolean> {
  const target = parseStorageTarget(location);
  if (target.kind === 'sqlite') return target.file === ':memory:' || existsSync(target.file);
  return (await import('./postgres.ts')).postgresNotebookExists(target);
}

/** How a location is named in messages (a PostgreSQL URL without its password). */
export function describeLocation(location: string): string {
  return describeTarget(parseStorageTarget(location));
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * better-sqlite3's driver, but a transaction begins with `BEGIN IMMEDIATE`
 * (the write lock first) unless it is marked read-only
 * (`db.transaction().setAccessMode('read only')`: a plain, deferred `BEGIN`).
 */
class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(
      CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'),
    );
  }
}

/** Kysely's SQLite adapter, but migrations run in a transaction: SQLite's DDL is transactional, so a migration that fails leaves nothing half done. */
class TransactionalMigrationAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** The dialect of a writable study database: immediate transactions and transactional migrations. */
class WritableSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  /** The fences of the lease this connection holds (src/storage/write-fence.ts): checked by every write. */
  readonly fences = new FenceHolder(() => '?');

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new FencedDriver(new ImmediateTransactionDriver(this.#config), this.fences);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalMigrationAdapter();
  }
}

export interface OpenDatabaseOptions {
  /** Open without creating or migrating (read-only commands). Default false. */
  readonly?: boolean;
  /** SQLite busy timeout in milliseconds. Default 10 000. */
  busyTimeoutMs?: number;
  /**
   * PostgreSQL: how long the server lets a session sit idle inside a
   * transaction before it ends it (a paused process), in milliseconds.
   * Default the lease's staleness, 15 000 (src/storage/postgres.ts).
   */
  idleInTransactionMs?: number;
}

/** True when this process may write `target` (a file or a folder). */
export function isWritable(target: string): boolean {
  try {
    accessSync(target, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when the SQLite file's header says it is in WAL mode (bytes 18 and 19 are 2). */
function isWalDatabase(file: string): boolean {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    return readSync(fd, header, 0, 20, 0) === 20 && header[18] === 2 && header[19] === 2;
  } finally {
    closeSync(fd);
  }
}

const snapshots = new Map<string, string>();

/**
 * The file to read a study database from: the database itself, or — when it
 * cannot be read in place — a private copy of it.
 *
 * SQLite reads a WAL-mode database only with its `-shm` index beside it, and
 * creates that file on open: in a folder this process may not write (a study
 * on read-only media, or another user's), with no `-shm` left there (a run
 * that ended cleanly removes it), even a read-only open fails
 * (SQLITE_READONLY_DIRECTORY). Such a database is copied, with its `-wal`
 * when there is one, to a temporary folder removed when the process exits;
 * the read-only commands then read that snapshot. A missing file is returned
 * as is.
 */
export function readableDatabaseFile(file: string): string {
  if (file === ':memory:' || !existsSync(file)) return file;
  const folder = path.dirname(file);
  if (isWritable(folder) || existsSync(`${file}-shm`) || !isWalDatabase(file)) return file;
  let snapshot = snapshots.get(file);
  if (snapshot === undefined) {
    const directory = mkdtempSync(path.join(tmpdir(), 'kloop-read-only-'));
    process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
    snapshot = path.join(directory, path.basename(file));
    try {
      copyFileSync(file, snapshot);
      if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${snapshot}-wal`);
    } catch (error) {
      throw new StorageError(`cannot read the study database ${file}: ${(error as Error).message}`, {
        file,
        cause: error,
      });
    }
    snapshots.set(file, snapshot);
  }
  return snapshot;
}

/**
 * Opens (creating and migrating when needed) a study database: a SQLite file
 * or, for a `postgres://` URL, a PostgreSQL schema ({@link openPostgresDatabase}).
 *
 * A writable connection begins every transaction with `BEGIN IMMEDIATE` (see
 * the module comment) and applies the pending migrations, if any, in one such
 * transaction, under a lock file. Opening and migrating are tried again
 * ({@link retryWhileBusy}: 3 tries) while SQLite reports the database busy,
 * each try waiting up to the busy timeout.
 *
 * @param file path of the database file, ':memory:', or a `postgres://` URL
 * @throws StudyBusyError (exit code 3) when the database stayed locked by another process through every try
 * @throws StorageError when the file cannot be opened or migrated, or the PostgreSQL server cannot be reached
 */
export async function openDatabase(file: string, options: OpenDatabaseOptions = {}): Promise<StudyDatabase> {
  if (isPostgresUrl(file)) {
    const target = parseStorageTarget(file);
    if (target.kind === 'postgres') return openPostgresDatabase(target, options);
  }
  const started = Date.now();
  try {
    return await retryWhileBusy(() => openDatabaseOnce(file, options));
  } catch (error) {
    if (!isDatabaseBusy(error)) throw error;
    const seconds = Math.round((Date.now() - started) / 1000);
    throw new StudyBusyError(undefined, {
      message: `the study database ${file} stayed locked by another process for ${seconds} s while it was being opened; try again when that process is done`,
      cause: error,
    });
  }
}

/** One try of {@link openDatabase}; a busy failure is thrown as SQLite's own error (for the retry). */
async function openDatabaseOnce(file: string, options: OpenDatabaseOptions): Promise<StudyDatabase> {
  const writable = options.readonly !== true;
  let sqlite: Database.Database;
  try {
    if (file !== ':memory:' && writable) mkdirSync(path.dirname(file), { recursive: true });
    // Read-only: in place, or from a snapshot when the folder forbids even that (see readableDatabaseFile).
    sqlite = writable
      ? new Database(file)
      : new Database(readableDatabaseFile(file), { readonly: true, fileMustExist: true });
  } catch (error) {
    if (StorageError.isInstance(error)) throw error;
    throw new StorageError(`cannot open the study database ${file}: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  try {
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    if (writable) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
    }
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite.close();
    if (isDatabaseBusy(error)) throw error;
    throw new StorageError(`cannot open the study database ${file}: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  const config: SqliteDialectConfig = { database: sqlite };
  const dialect = writable ? new WritableSqliteDialect(config) : new SqliteDialect(config);
  const db = new Kysely<KloopDatabase>({ dialect });
  if (dialect instanceof WritableSqliteDialect) registerFenceHolder(db, dialect.fences);
  if (writable) {
    const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
    const migrate = async (): Promise<unknown> => {
      // Up to date (a plain read): no lock and no write transaction needed.
      if ((await migrator.getMigrations()).every((migration) => migration.executedAt !== undefined)) return undefined;
      // Kysely takes no lock for SQLite migrations, so two processes opening a new
      // study at once would both create its tables: migrate under a lock file.
      return (await withMigrationLock(file, () => migrator.migrateToLatest())).error;
    };
    const error = await migrate().catch((caught: unknown) => caught ?? new Error('unknown error'));
    if (error !== undefined) {
      await db.destroy();
      if (isDatabaseBusy(error)) throw error;
      if (StorageError.isInstance(error)) throw error;
      throw new StorageError(
        `cannot migrate the study database ${file}: ${String((error as Error).message ?? error)}`,
        { file, cause: error },
      );
    }
  }
  return db;
}

/**
 * Opens a PostgreSQL study database: connects, and on a writable open
 * creates the schema when needed and applies the pending migrations (in one
 * transaction), under the schema's migration lock (an advisory lock:
 * src/storage/postgres.ts `withSchemaLock`): concurrent openers wait, then
 * find them applied; a reader asking whether the notebook exists waits too. While the study's writer lock stays taken through every
 * try, the study is busy (exit code 3), as on SQLite.
 *
 * @throws StorageError naming the URL (without its password) when the server cannot be reached or the schema cannot be migrated
 */
async function openPostgresDatabase(
  target: Extract<StorageTarget, { kind: 'postgres' }>,
  options: OpenDatabaseOptions,
): Promise<StudyDatabase> {
  // The PostgreSQL driver (pg) loads only for a notebook kept there.
  const { ensureSchema, openPostgresKysely, withSchemaLock } = await import('./postgres.ts');
  const db = await openPostgresKysely(target, {
    readonly: options.readonly === true,
    busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
    ...(options.idleInTransactionMs !== undefined ? { idleInTransactionMs: options.idleInTransactionMs } : {}),
  });
  if (options.readonly === true) return db;
  const started = Date.now();
  // The migration table in the study's own schema: Kysely looks for it in every schema otherwise.
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(), migrationTableSchema: target.schema });
  const upToDate = async (): Promise<boolean> =>
    (await migrator.getMigrations()).every((migration) => migration.executedAt !== undefined);
  try {
    // Up to date (a plain read): no lock. Else create and migrate under the schema's migration lock, so
    // processes started together on a fresh schema wait for one another, and readers wait for them.
    if (!(await upToDate().catch(() => false))) {
      await withSchemaLock(target, 'exclusive', () =>
        retryWhileBusy(async () => {
          await ensureSchema(db, target.schema);
          if (await upToDate()) return;
          const { error } = await migrator.migrateToLatest();
          if (error !== undefined) throw error;
        }),
      );
    }
  } catch (error) {
    await db.destroy();
    if (isDatabaseBusy(error)) {
      throw new StudyBusyError(undefined, {
        message: `the study database ${target.display} stayed locked by another process for ${Math.round((Date.now() - started) / 1000)} s while it was being opened; try again when that process is done`,
        cause: error,
      });
    }
    if (StorageError.isInstance(error) || StudyBusyError.isInstance(error)) throw error;
    throw new StorageError(
      `cannot migrate the study database ${target.display}: ${String((error as Error).message ?? error)}`,
      { cause: error },
    );
  }
  return db;
}
