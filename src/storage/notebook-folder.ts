/**
 * The folder of a study's SQLite notebook (`<study>/.kloop/`), as every front
 * end creates it: `kloop run` and the commands that write, `kloop view` and
 * `kloop signals` before the first run, and `createStudy`.
 *
 * @module
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Creates the folder of the notebook file `file` (and its parents) if it is
 * missing, with a `.gitignore` of `*` that keeps the notebook out of the
 * user's repository; an existing `.gitignore` is left as it is.
 *
 * @param file the notebook's SQLite file, e.g. `studyDatabasePath(dir)`
 * @throws the file system's error (`EACCES`, `EROFS`, …) when the folder cannot be written
 */
export function createNotebookFolder(file: string): void {
  const folder = path.dirname(file);
  mkdirSync(folder, { recursive: true });
  const ignore = path.join(folder, '.gitignore');
  if (!existsSync(ignore)) writeFileSync(ignore, '*\n', 'utf8');
}
