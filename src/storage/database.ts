/**
 * Opening the study database: SQLite in `<study>/.kloop/kloop.db` (WAL,
 * busy timeout), behind Kysely so the same queries can target PostgreSQL.
 */
import { accessSync, closeSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import lockfile from 'proper-lockfile';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely';
import { StorageError } from '../errors.ts';
import { MIGRATIONS } from './migrations.ts';
import type { KloopDatabase } from './schema.ts';

export type StudyDatabase = Kysely<KloopDatabase>;

/** Where a study keeps its database: `<study>/.kloop/kloop.db`. */
export function studyDatabasePath(studyDir: string): string {
  return path.join(studyDir, '.kloop', 'kloop.db');
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export interface OpenDatabaseOptions {
  /** Open without creating or migrating (read-only commands). Default false. */
  readonly?: boolean;
  /** SQLite busy timeout in milliseconds. Default 10 000. */
  busyTimeoutMs?: number;
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
      throw new StorageError(`cannot read the study database ${file}: ${(error as Error).message}`, { file, cause: error });
    }
    snapshots.set(file, snapshot);
  }
  return snapshot;
}

/**
 * Opens (creating and migrating when needed) a SQLite study database.
 *
 * @param file path of the database file, or ':memory:'
 * @throws StorageError when the file cannot be opened or migrated
 */
export async function openDatabase(file: string, options: OpenDatabaseOptions = {}): Promise<StudyDatabase> {
  let sqlite: Database.Database;
  try {
    if (file !== ':memory:' && options.readonly !== true) mkdirSync(path.dirname(file), { recursive: true });
    // Read-only: in place, or from a snapshot when the folder forbids even that (see readableDatabaseFile).
    sqlite = options.readonly === true ? new Database(readableDatabaseFile(file), { readonly: true, fileMustExist: true }) : new Database(file);
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    if (options.readonly !== true) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
    }
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new StorageError(`cannot open the study database ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  const db = new Kysely<KloopDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  if (options.readonly !== true) {
    const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
    // Kysely takes no lock for SQLite migrations, so two processes opening a new
    // study at once would both create its tables: migrate under a lock file.
    const { error } = await withMigrationLock(file, () => migrator.migrateToLatest());
    if (error !== undefined) {
      await db.destroy();
      throw new StorageError(`cannot migrate the study database ${file}: ${String((error as Error).message ?? error)}`, { file });
    }
  }
  return db;
}

/** A migration lock not refreshed for this long is left over by a crashed process and is taken over. */
const STALE_MIGRATION_LOCK_MS = 30_000;

/**
 * Runs `work` while holding `<file>.migrate.lock` (proper-lockfile: an atomic
 * `mkdir`, refreshed while held, taken over when stale, removed when the
 * process exits), so only one process migrates a database at a time; the
 * others wait (up to about 60 s) and then find the migrations applied. No
 * lock for ':memory:'.
 */
async function withMigrationLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  if (file === ':memory:') return work();
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      lockfilePath: `${file}.migrate.lock`,
      realpath: false, // the database file may not exist yet
      stale: STALE_MIGRATION_LOCK_MS,
      retries: { retries: 1_200, factor: 1, minTimeout: 50, maxTimeout: 50 },
    });
  } catch (error) {
    throw new StorageError(`cannot take the migration lock ${file}.migrate.lock: ${(error as Error).message}`, { file, cause: error });
  }
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}

/** ISO 8601 UTC timestamp of `now()`. */
export function isoNow(now: () => Date = () => new Date()): string {
  return now().toISOString();
}
