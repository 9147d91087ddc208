/** The lock that keeps two processes from migrating one SQLite notebook at once (src/storage/database.ts). */
import { StorageError } from '../errors.ts';

/** A migration lock not refreshed for this long is left over by a crashed process and is taken over. */
const STALE_MIGRATION_LOCK_MS = 30_000;

/**
 * Runs `work` while holding `<file>.migrate.lock` (proper-lockfile: an atomic
 * `mkdir`, refreshed while held, taken over when stale, removed when the
 * process exits), so only one process migrates a database at a time; the
 * others wait (up to about 60 s) and then find the migrations applied. No
 * lock for ':memory:'.
 */
export async function withMigrationLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  if (file === ':memory:') return work();
  let release: () => Promise<void>;
  try {
    // Loaded here, by the commands that open a database for writing: it costs some 15 ms, and patches fs on load (graceful-fs).
    const { default: lockfile } = await import('proper-lockfile');
    release = await lockfile.lock(file, {
      lockfilePath: `${file}.migrate.lock`,
      realpath: false, // the database file may not exist yet
      stale: STALE_MIGRATION_LOCK_MS,
      retries: { retries: 1_200, factor: 1, minTimeout: 50, maxTimeout: 50 },
    });
  } catch (error) {
    throw new StorageError(`cannot take the migration lock ${file}.migrate.lock: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
