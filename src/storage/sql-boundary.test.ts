/**
 * The notebook interface's boundary (issue 32, item 2): outside
 * `src/storage/`, no source module imports Kysely or issues SQL. Every read
 * and write of the lab notebook goes through the store modules of
 * `src/storage/notebook/` (and the storage modules beside them), so the
 * storage contract suite, which holds those modules to their documented
 * behaviour on SQLite and PostgreSQL, covers every query kloop runs.
 *
 * What counts as SQL, read from each module's syntax tree (TypeScript's own
 * parser, so a word in a comment or a string is not one):
 *
 * - an import of `kysely` (any form: `import`, `import type`, `export … from`, `import()`);
 * - a call of a query builder's entry point: `selectFrom`, `insertInto`,
 *   `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto`, `selectNoFrom`;
 * - a schema builder (`.schema.createTable(…)` and the like);
 * - a tagged template named `sql` (Kysely's raw SQL).
 *
 * Tests (`*.test.ts`) are left out: a test may build a notebook row by hand
 * to reproduce a damaged or old notebook.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SOURCE = path.resolve(import.meta.dirname, '..');

const QUERY_ENTRY_POINTS = new Set([
  'selectFrom',
  'insertInto',
  'updateTable',
  'deleteFrom',
  'replaceInto',
  'mergeInto',
  'selectNoFrom',
]);
const SCHEMA_BUILDERS = new Set([
  'createTable',
  'alterTable',
  'dropTable',
  'createIndex',
  'dropIndex',
  'createView',
  'createSchema',
]);

/** The source modules under src/ outside src/storage/ (tests and fixtures left out), relative to src/. */
function modulesOutsideStorage(dir = ''): string[] {
  return readdirSync(path.join(SOURCE, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return relative === 'storage' || entry.name === 'fixtures' ? [] : modulesOutsideStorage(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')
      ? [relative]
      : [];
  });
}

/** The SQL a module's text holds, as `line: what` entries (empty: none). */
function sqlIn(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      node.moduleSpecifier.text === 'kysely'
    )
      at(node, "imports 'kysely'");
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) {
        const [specifier] = node.arguments;
        if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text === 'kysely')
          at(node, "imports 'kysely'");
      }
      if (ts.isPropertyAccessExpression(callee)) {
        const name = callee.name.text;
        if (QUERY_ENTRY_POINTS.has(name)) at(node, `.${name}(…)`);
        if (
          SCHEMA_BUILDERS.has(name) &&
          ts.isPropertyAccessExpression(callee.expression) &&
          callee.expression.name.text === 'schema'
        )
          at(node, `.schema.${name}(…)`);
      }
    }
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') at(node, 'sql`…`');
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the notebook boundary: no SQL outside src/storage/', () => {
  it('finds what it looks for (the detector itself)', () => {
    const text = [
      "import { sql } from 'kysely';",
      "import type { Kysely } from 'kysely';",
      "const rows = await db.selectFrom('experiments').selectAll().execute();",
      "await trx.insertInto('runs').values({}).execute();",
      'await sql`select 1`.execute(db);',
      "await db.schema.createTable('t').execute();",
      "const note = 'db.selectFrom(x) in a string is not SQL'; // nor db.deleteFrom(y) in a comment",
      "const kind = await import('kysely');",
    ].join('\n');
    expect(sqlIn('example.ts', text)).toEqual([
      "1: imports 'kysely'",
      "2: imports 'kysely'",
      '3: .selectFrom(…)',
      '4: .insertInto(…)',
      '5: sql`…`',
      '6: .schema.createTable(…)',
      "8: imports 'kysely'",
    ]);
  });

  it('every source module outside src/storage/ is free of it', () => {
    const modules = modulesOutsideStorage();
    expect(modules.length).toBeGreaterThan(100);
    const found = modules.flatMap((module) =>
      sqlIn(module, readFileSync(path.join(SOURCE, module), 'utf8')).map((entry) => `src/${module}:${entry}`),
    );
    expect(found, 'move these queries behind a store module of src/storage/notebook/').toEqual([]);
  });
});
