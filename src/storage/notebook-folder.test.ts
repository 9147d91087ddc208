import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNotebookFolder } from './notebook-folder.ts';

const work = mkdtempSync(path.join(tmpdir(), 'kloop-notebook-folder-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('createNotebookFolder', () => {
  it('creates the notebook folder with a .gitignore of *', () => {
    const file = path.join(work, 'study', '.kloop', 'kloop.db');
    createNotebookFolder(file);
    expect(readFileSync(path.join(work, 'study', '.kloop', '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('leaves a .gitignore the user wrote as it is', () => {
    const folder = path.join(work, 'kept', '.kloop');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, '.gitignore'), 'kloop.db\n');
    createNotebookFolder(path.join(folder, 'kloop.db'));
    expect(readFileSync(path.join(folder, '.gitignore'), 'utf8')).toBe('kloop.db\n');
  });
});
