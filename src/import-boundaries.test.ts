/**
 * Import boundaries between the engine's folders (issue 12, "The engine
 * behind it"): composition happens in one place (src/study/compose.ts), so
 *
 * - `src/providers/` imports neither `src/study/` nor `src/proposers/`;
 * - `src/tasks/` imports neither `src/gate/` nor `src/study/`;
 * - the loop, the evaluator, the gate and the storage (`src/loop/`,
 *   `src/evaluator/`, `src/gate/`, `src/storage/`) import no task: of
 *   `src/tasks/` only the contract, `src/tasks/task.ts` (their tests may
 *   use real tasks as fixtures).
 *
 * Every module of those folders counts (tests too, but for the engine's
 * rule), and every kind of
 * import: `import` and `import type`, `export … from`, `import()` and
 * `require()` — as TypeScript's own pre-processor lists them
 * (`ts.preProcessFile`), so a path in a comment or a string is not one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SOURCE = import.meta.dirname;

/** A rule: modules under `from` may not import modules under any of `forbidden`, except the `allowed` files. */
interface Boundary {
  from: string;
  forbidden: string[];
  allowed?: string[];
  /** Leave the folder's tests (`*.test.ts`) out. Default false. */
  sourceOnly?: boolean;
}

const BOUNDARIES: Boundary[] = [
  { from: 'providers', forbidden: ['study', 'proposers'] },
  { from: 'tasks', forbidden: ['gate', 'study'] },
  ...['loop', 'evaluator', 'gate', 'storage'].map((from) => ({ from, forbidden: ['tasks'], allowed: ['tasks/task.ts'], sourceOnly: true })),
];

/** Every `.ts` file under `dir`, as paths relative to src/ with `/` separators. */
function modulesUnder(dir: string): string[] {
  return readdirSync(path.join(SOURCE, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : modulesUnder(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The modules of src/ a module imports (relative specifiers only), as paths relative to src/. */
function importsOf(module: string, text: string = readFileSync(path.join(SOURCE, module), 'utf8')): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles
    .map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(module), specifier)));
}

/** The violations of `boundary`: `module → imported` lines. */
function violations(boundary: Boundary, modules: readonly string[] = modulesUnder(boundary.from), read?: (module: string) => string): string[] {
  const found: string[] = [];
  for (const module of modules) {
    if (boundary.sourceOnly === true && module.endsWith('.test.ts')) continue;
    for (const imported of importsOf(module, read?.(module))) {
      if (boundary.allowed?.includes(imported)) continue;
      if (boundary.forbidden.some((folder) => imported === folder || imported.startsWith(`${folder}/`))) found.push(`src/${module} → src/${imported}`);
    }
  }
  return found;
}

describe('import boundaries', () => {
  for (const boundary of BOUNDARIES) {
    it(`src/${boundary.from}/${boundary.sourceOnly === true ? ' (its sources)' : ''} imports nothing of ${boundary.forbidden.map((folder) => `src/${folder}/`).join(' or ')}${boundary.allowed !== undefined ? ` but src/${boundary.allowed.join(', src/')}` : ''}`, () => {
      expect(modulesUnder(boundary.from).length).toBeGreaterThan(0);
      expect(violations(boundary)).toEqual([]);
    });
  }

  it('the scan sees every kind of import, and not a path in a comment or a string', () => {
    const source = [
      "import { a } from '../../study/a.ts';",
      "import type { B } from '../../gate/gate.ts';",
      "export { c } from '../../study/c.ts';",
      "const d = await import('../../proposers/d.ts');",
      "const e = require('../../study/e.ts');",
      "// import { f } from '../../study/f.ts';",
      "const g = 'from ../../study/g.ts';",
      "import { h } from './h.ts';",
      "import { t } from '../task.ts';",
      "import { z } from 'zod';",
    ].join('\n');
    const module = 'tasks/custom/example.ts';
    expect(importsOf(module, source)).toEqual(['study/a.ts', 'gate/gate.ts', 'study/c.ts', 'proposers/d.ts', 'study/e.ts', 'tasks/custom/h.ts', 'tasks/task.ts']);
    expect(violations({ from: 'tasks', forbidden: ['gate', 'study'] }, [module], () => source)).toEqual([
      'src/tasks/custom/example.ts → src/study/a.ts',
      'src/tasks/custom/example.ts → src/gate/gate.ts',
      'src/tasks/custom/example.ts → src/study/c.ts',
      'src/tasks/custom/example.ts → src/study/e.ts',
    ]);
    // The engine may import the task contract and nothing else of src/tasks/.
    const engine = "import type { Task } from '../tasks/task.ts';\nimport { createIntentTask } from '../tasks/intent/intent-task.ts';\n";
    expect(violations({ from: 'loop', forbidden: ['tasks'], allowed: ['tasks/task.ts'] }, ['loop/engine.ts'], () => engine)).toEqual(['src/loop/engine.ts → src/tasks/intent/intent-task.ts']);
  });
});
