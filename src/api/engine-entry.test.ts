import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { createLoopEngine, runStudy } from '../index.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { openNotebook } from '../storage/notebook/index.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { loadStudy } from '../study/load-study.ts';

const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'examples', 'intent');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A copy of examples/intent (offline, deterministic) and its notebook's database. */
async function exampleStudy(): Promise<{ dir: string; db: StudyDatabase }> {
  const root = mkdtempSync(path.join(tmpdir(), 'kloop-entry-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'intent');
  cpSync(EXAMPLE, dir, { recursive: true, filter: (source) => !source.includes(`${path.sep}.kloop`) });
  const db = await openDatabase(studyDatabasePath(dir));
  cleanups.push(() => db.destroy());
  return { dir, db };
}

describe("the package's runStudy and createLoopEngine", () => {
  it('take the database handle as earlier releases did, or the notebook', async () => {
    const { dir, db } = await exampleStudy();
    const byHandle = await createLoopEngine({ study: loadStudy(dir), db });
    expect(await byHandle.openRound()).toEqual({ kind: 'round', round: 1, resumed: false });
    await byHandle.finish('interrupted', 'test');
    const byNotebook = await createLoopEngine({ study: loadStudy(dir), notebook: openNotebook(db) });
    // The round the first engine opened and left is resumed: both reached the same notebook.
    expect(await byNotebook.openRound()).toMatchObject({ kind: 'round', round: 1 });
    await byNotebook.finish('interrupted', 'test');
  });

  it('refuse both or neither, by name', async () => {
    const { dir, db } = await exampleStudy();
    const study = loadStudy(dir);
    const both = { study, db, notebook: openNotebook(db) } as unknown as Parameters<typeof runStudy>[0];
    await expect(runStudy(both)).rejects.toBeInstanceOf(InputError);
    const neither = { study } as unknown as Parameters<typeof createLoopEngine>[0];
    await expect(createLoopEngine(neither)).rejects.toThrow(/exactly one of `db`.*and `notebook`/);
  });
});
