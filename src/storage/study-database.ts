/**
 * The study database handle, as every store and the engine see it: a Kysely
 * database over the notebook's tables ({@link StudyDatabase}), on SQLite or
 * PostgreSQL, and the helpers that need no driver (which backend a handle is
 * on, its tables, the time stamp the notebook writes). Opening one is
 * src/storage/database.ts's (it loads the drivers); this module loads none,
 * so the loop, which takes a handle, reaches no driver
 * (src/import-boundaries.test.ts).
 *
 * @module
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { StorageBackendName } from './location.ts';
import { isPostgresDatabase } from './is-postgres-database.ts';
import type { KloopDatabase } from './schema.ts';

export type StudyDatabase = Kysely<KloopDatabase>;

/** The backend of a database (or of a transaction on one). */
export function backendOf(db: StudyDatabase | Kysely<any>): StorageBackendName {
  return isPostgresDatabase(db) ? 'postgres' : 'sqlite';
}

/** The tables of a study database (SQLite's `sqlite_master`, PostgreSQL's schema on the search path). */
export async function listTables(db: StudyDatabase | Kysely<any>): Promise<Set<string>> {
  const rows = isPostgresDatabase(db)
    ? (
        await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db)
      ).rows
    : (
        await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'table' and substr(name, 1, 7) <> 'sqlite_'`.execute(db)
      ).rows;
  return new Set(rows.map((row) => row.name));
}

/** ISO 8601 UTC timestamp of `now()`. */
export function isoNow(now: () => Date = () => new Date()): string {
  return now().toISOString();
}
