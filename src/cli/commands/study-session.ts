/**
 * Opening a study for a command: load and validate the folder, then open its
 * database. Bad input fails before the database is touched.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/database.ts';
import { openDatabase, studyDatabasePath } from '../../storage/database.ts';
import type { LoadedStudy } from '../../study/loaded-study.ts';
import { loadStudy } from '../../study/load-study.ts';

export interface StudySession {
  study: LoadedStudy;
  db: StudyDatabase;
  close(): Promise<void>;
}

/**
 * Loads the study and opens its database.
 *
 * @param readonly open an existing database read-only (no file created); when
 *   none exists, `db` is an in-memory database with the schema
 */
export async function openStudy(studyDir: string, options: { readonly?: boolean } = {}): Promise<StudySession> {
  if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
  const study = loadStudy(studyDir);
  const file = studyDatabasePath(study.dir);
  let db: StudyDatabase;
  if (options.readonly === true) {
    db = existsSync(file) ? await openDatabase(file, { readonly: true }) : await openDatabase(':memory:');
  } else {
    const folder = path.dirname(file);
    mkdirSync(folder, { recursive: true });
    const ignore = path.join(folder, '.gitignore');
    if (!existsSync(ignore)) writeFileSync(ignore, '*\n', 'utf8');
    db = await openDatabase(file);
  }
  return { study, db, close: () => db.destroy() };
}
