/**
 * The corpus lifecycle's member rows read synchronously from a SQLite study
 * database file (better-sqlite3, read-only): `loadStudy` (synchronous)
 * resolves partitions with it before any command runs. The queries are the
 * corpus store's (corpus-store.ts); not part of the notebook interface, which
 * binds a database handle.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { StorageError } from '../../errors.ts';
import type { CorpusMemberRow, CorpusMemberRows } from './corpus-store.ts';
import { readHistorySync } from './corpus-store.ts';

/**
 * The member rows of a SQLite study database file, synchronously and
 * read-only: no member when the file or the table does not exist yet (a
 * study that has not run since the lifecycle was added).
 *
 * @throws StorageError naming the file when it exists but cannot be read
 */
export function readCorpusMemberRowsFile(file: string): CorpusMemberRows {
  if (!existsSync(file)) return { members: [], history: null };
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(file, { readonly: true, fileMustExist: true });
    const table = sqlite
      .prepare("select name from sqlite_master where type = 'table' and name = 'corpus_members'")
      .get();
    if (table === undefined) return { members: [], history: null };
    const members = sqlite.prepare('select * from corpus_members order by example_id').all() as CorpusMemberRow[];
    if (members.length === 0) return { members, history: null };
    const open = sqlite;
    return { members, history: readHistorySync(<Row>(text: string): Row[] => open.prepare(text).all() as Row[]) };
  } catch (error) {
    throw new StorageError(`cannot read the corpus lifecycle from ${file}: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  } finally {
    sqlite?.close();
  }
}
