/**
 * Opening the study database: SQLite in `<study>/.kloop/kloop.db` (WAL,
 * busy timeout), behind Kysely so the same queries can target PostgreSQL.
 */
import { closeSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
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
    sqlite = new Database(file, { readonly: options.readonly === true, fileMustExist: options.readonly === true });
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    if (options.readonly !== true) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
    }
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    throw new StorageError(`cannot open the study database ${file}: ${(error as Error).message}`, { file });
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

/** A lock file older than this is left over by a crashed process and is removed. */
const STALE_MIGRATION_LOCK_MS = 30_000;

/**
 * Runs `work` while holding `<file>.migrate.lock` (created with O_EXCL), so
 * only one process migrates a database at a time; the others wait (up to
 * 60 s) and then find the migrations applied. No lock for ':memory:'.
 */
async function withMigrationLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  if (file === ':memory:') return work();
  const lock = `${file}.migrate.lock`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_MIGRATION_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // the holder removed it meanwhile
      }
      if (Date.now() > deadline) throw new StorageError(`another process holds ${lock} for more than 60 s`, { file });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** ISO 8601 UTC timestamp of `now()`. */
export function isoNow(now: () => Date = () => new Date()): string {
  return now().toISOString();
}
