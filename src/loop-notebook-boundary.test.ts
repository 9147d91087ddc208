/**
 * The loop depends on the notebook interface, not on a database handle
 * (issue 32, item 2): a module of src/loop/ (its tests apart) imports of
 * src/storage/ only the interface, src/storage/notebook/index.ts (`Notebook`),
 * and src/storage/registry.ts (the `ArtifactVersion` record and the
 * context-local artifact override, which touch no database); no store module
 * (src/storage/notebook/*-store.ts, or any other module of the notebook's
 * folder) and no handle type: no `StudyDatabase`, no `CorpusDatabase`. The
 * handle is bound once, by `openNotebook(db)`, outside the loop.
 *
 * Imports are listed by TypeScript's pre-processor (`ts.preProcessFile`:
 * `import`, `import type`, `export … from`, `import()`, `require()`), and the
 * names by TypeScript's parser, so a path or a name in a comment or a string
 * is not one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SOURCE = import.meta.dirname;

/** What a module of src/loop/ may import of src/storage/. */
const STORAGE_ALLOWED = ['storage/notebook/index.ts', 'storage/registry.ts'];

/** The names of a database handle. */
const HANDLE_TYPES = ['StudyDatabase', 'CorpusDatabase'];

/** The source modules of src/loop/ (tests apart), as paths relative to src/. */
function loopSources(): string[] {
  return readdirSync(path.join(SOURCE, 'loop'))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => `loop/${name}`);
}

/** The violations of `module` (path relative to src/, text `text`): `module → what` lines. */
function violationsOf(module: string, text: string): string[] {
  const found: string[] = [];
  for (const file of ts.preProcessFile(text, true, true).importedFiles) {
    if (!file.fileName.startsWith('.')) continue;
    const imported = path.posix.normalize(path.posix.join(path.posix.dirname(module), file.fileName));
    if (imported.startsWith('storage/') && !STORAGE_ALLOWED.includes(imported))
      found.push(`src/${module} → src/${imported}`);
  }
  const source = ts.createSourceFile(module, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && HANDLE_TYPES.includes(node.text)) found.push(`src/${module} → ${node.text}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...new Set(found)];
}

describe('src/loop/ depends on the notebook interface, not on a database handle', () => {
  it('imports of src/storage/ only the notebook interface and the registry record, and names no handle type', () => {
    const modules = loopSources();
    expect(modules.length).toBeGreaterThan(20);
    const found = modules.flatMap((module) => violationsOf(module, readFileSync(path.join(SOURCE, module), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the scan finds a store module, the handle module and a handle type, and not a name in a comment or a string', () => {
    const text = [
      "import { insertExperiment } from '../storage/notebook/experiments-store.ts';",
      "import type { StudyDatabase } from '../storage/study-database.ts';",
      "export type { CorpusDatabase } from '../corpus/lifecycle-store.ts';",
      "import type { Notebook } from '../storage/notebook/index.ts';",
      "import { withArtifactOverride } from '../storage/registry.ts';",
      "// StudyDatabase in a comment, '../storage/schema.ts' in a string:",
      "const note = 'StudyDatabase';",
    ].join('\n');
    expect(violationsOf('loop/made-up.ts', text)).toEqual([
      'src/loop/made-up.ts → src/storage/notebook/experiments-store.ts',
      'src/loop/made-up.ts → src/storage/study-database.ts',
      'src/loop/made-up.ts → StudyDatabase',
      'src/loop/made-up.ts → CorpusDatabase',
    ]);
  });
});
