/**
 * The corpus lifecycle's members read from a study database location, not a
 * handle: `loadStudy` resolves partitions with them before any command
 * runs, synchronously from the SQLite file ({@link readCorpusMembersFile}) or
 * by opening the PostgreSQL notebook ({@link readCorpusMembersAt}).
 *
 * @module
 */
import { databaseExists, openDatabase } from '../storage/database.ts';
import { isPostgresUrl } from '../storage/location.ts';
import { readCorpusMemberRowsFile } from '../storage/notebook/corpus-members-file.ts';
import type { CorpusMember } from './lifecycle.ts';
import { membersOf, readCorpusMembers } from './lifecycle-store.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/**
 * Reads the members from a study database location (a SQLite file or a
 * PostgreSQL URL: src/storage/location.ts), read-only. Returns an empty list
 * when there is no notebook there yet.
 *
 * @throws StorageError when the notebook exists but cannot be read
 */
export async function readCorpusMembersAt(location: string): Promise<CorpusMember[]> {
  if (!isPostgresUrl(location)) return readCorpusMembersFile(location);
  if (!(await databaseExists(location))) return [];
  const db = await openDatabase(location, { readonly: true });
  try {
    return await readCorpusMembers(openNotebook(db));
  } finally {
    await db.destroy();
  }
}

/**
 * Reads the members from a SQLite study database file, synchronously and
 * read-only. Returns an empty list when the file or the table does not exist
 * yet (a study that has not run since the lifecycle was added).
 *
 * @throws StorageError when the file exists but cannot be read
 */
export function readCorpusMembersFile(file: string): CorpusMember[] {
  return membersOf(readCorpusMemberRowsFile(file));
}
