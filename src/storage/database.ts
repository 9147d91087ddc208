/**
 * Opening the study database: SQLite in `<study>/.kloop/kloop.db` (WAL,
 * busy timeout), behind Kysely so the same queries can target PostgreSQL.
 */
import { mkdirSync } from 'node:fs';
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
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) {
      await db.destroy();
      throw new StorageError(`cannot migrate the study database ${file}: ${String((error as Error).message ?? error)}`, { file });
    }
  }
  return db;
}

/** ISO 8601 UTC timestamp of `now()`. */
export function isoNow(now: () => Date = () => new Date()): string {
  return now().toISOString();
}
