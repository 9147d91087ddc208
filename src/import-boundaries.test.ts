/**
 * Import boundaries between the engine's folders (issue 12, "The engine
 * behind it"): composition happens in one place (src/study/compose.ts), so
 *
 * - `src/providers/` imports neither `src/study/` nor `src/proposers/`;
 * - `src/tasks/` imports neither `src/gate/` nor `src/study/`;
 * - the loop, the evaluator, the gate and the storage (`src/loop/`,
 *   `src/evaluator/`, `src/gate/`, `src/storage/`) import no task: of
 *   `src/tasks/` only the contract, `src/tasks/task.ts` and the score shapes
 *   of `src/tasks/example-score.ts` (their tests may use real tasks as
 *   fixtures).
 *
 * Every module of those folders counts (tests too, but for the engine's
 * rule), and every kind of
 * import: `import` and `import type`, `export … from`, `import()` and
 * `require()` — as TypeScript's own pre-processor lists them
 * (`ts.preProcessFile`), so a path in a comment or a string is not one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The modules of src/tasks/ that are the task contract: types and pure helpers, no task. */
const TASK_CONTRACT = ['tasks/task.ts', 'tasks/example-score.ts'];

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
  ...['loop', 'evaluator', 'gate', 'storage'].map((from) => ({
    from,
    forbidden: ['tasks'],
    allowed: TASK_CONTRACT,
    sourceOnly: true,
  })),
];

/** Every `.ts` file under `dir` (src/ itself for ''), as paths relative to src/ with `/` separators. */
function modulesUnder(dir: string): string[] {
  return readdirSync(path.join(SOURCE, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
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
function violations(
  boundary: Boundary,
  modules: readonly string[] = modulesUnder(boundary.from),
  read?: (module: string) => string,
): string[] {
  const found: string[] = [];
  for (const module of modules) {
    if (boundary.sourceOnly === true && module.endsWith('.test.ts')) continue;
    for (const imported of importsOf(module, read?.(module))) {
      if (boundary.allowed?.includes(imported)) continue;
      if (boundary.forbidden.some((folder) => imported === folder || imported.startsWith(`${folder}/`)))
        found.push(`src/${module} → src/${imported}`);
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
    expect(importsOf(module, source)).toEqual([
      'study/a.ts',
      'gate/gate.ts',
      'study/c.ts',
      'proposers/d.ts',
      'study/e.ts',
      'tasks/custom/h.ts',
      'tasks/task.ts',
    ]);
    expect(violations({ from: 'tasks', forbidden: ['gate', 'study'] }, [module], () => source)).toEqual([
      'src/tasks/custom/example.ts → src/study/a.ts',
      'src/tasks/custom/example.ts → src/gate/gate.ts',
      'src/tasks/custom/example.ts → src/study/c.ts',
      'src/tasks/custom/example.ts → src/study/e.ts',
    ]);
    // The engine may import the task contract and nothing else of src/tasks/.
    const engine =
      "import type { Task } from '../tasks/task.ts';\nimport { createIntentTask } from '../tasks/intent/intent-task.ts';\n";
    expect(
      violations({ from: 'loop', forbidden: ['tasks'], allowed: ['tasks/task.ts'] }, ['loop/engine.ts'], () => engine),
    ).toEqual(['src/loop/engine.ts → src/tasks/intent/intent-task.ts']);
  });
});

/**
 * The whole import graph of src/'s sources (tests, fixtures and
 * src/test-support/ left out): every kind of import, as above, `import type`
 * included — a type is a dependency of the design even when it is erased.
 */
function sourceGraph(): Map<string, string[]> {
  const modules = modulesUnder('').filter(
    (module) => !module.endsWith('.test.ts') && !module.startsWith('test-support/'),
  );
  const known = new Set(modules);
  return new Map(
    modules.map((module) => [
      module,
      [...new Set(importsOf(module))].filter(
        (imported) => known.has(imported) || !existsSync(path.join(SOURCE, imported)),
      ),
    ]),
  );
}

/** A module's folder: its first directory under src/, or for a file of src/ itself its name (`errors`, `index`). */
function folderOf(module: string): string {
  return module.includes('/') ? module.slice(0, module.indexOf('/')) : module.replace(/\.ts$/, '');
}

/** The folder-level edges of a graph, `from → to` by folder. */
function folderEdges(graph: ReadonlyMap<string, readonly string[]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [module, imports] of graph) {
    for (const imported of imports) {
      const from = folderOf(module);
      const to = folderOf(imported);
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** The folder cycles: strongly connected components of more than one folder (Tarjan 1972), each sorted, in sorted order. */
function folderCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (folder: string): void => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    onStack.add(folder);
    for (const next of edges.get(folder) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(folder, Math.min(low.get(folder)!, index.get(next)!));
    }
    if (low.get(folder) !== index.get(folder)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== folder);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const folder of [...edges.keys()].sort()) if (!index.has(folder)) visit(folder);
  return cycles.sort((a, b) => a.join().localeCompare(b.join()));
}

/** Every module `start` reaches through imports, transitively (itself left out), sorted. */
function reachableFrom(graph: ReadonlyMap<string, readonly string[]>, start: string): string[] {
  const seen = new Set([start]);
  const pending = [start];
  while (pending.length > 0) {
    for (const next of graph.get(pending.pop()!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      pending.push(next);
    }
  }
  seen.delete(start);
  return [...seen].sort();
}

/**
 * Each folder edge allowed today, by importing folder (a folder not listed
 * imports no other). A new edge fails the test: add it here only when it
 * points the way DESIGN.md §8 says dependencies go (cli → study → {proposers,
 * evaluator, gate, corpus, storage} → {tasks, stats, providers}); an edge that
 * is gone fails it too, until it is removed here, so the list stays true.
 */
const ALLOWED_FOLDER_EDGES: Record<string, string[]> = {
  api: [
    'artifact',
    'config',
    'corpus',
    'errors',
    'evaluator',
    'executors',
    'gate',
    'loop',
    'program',
    'proposers',
    'storage',
    'study',
    'tasks',
  ],
  artifact: [],
  assembly: ['errors', 'tasks'],
  calibration: [
    'artifact',
    'config',
    'corpus',
    'errors',
    'evaluator',
    'gate',
    'loop',
    'providers',
    'report',
    'stats',
    'storage',
    'tasks',
  ],
  cli: [
    'artifact',
    'assembly',
    'calibration',
    'config',
    'corpus',
    'doctor',
    'errors',
    'evaluator',
    'init',
    'loop',
    'loop-a',
    'online',
    'providers',
    'report',
    'review',
    'runtime',
    'schedule',
    'signals',
    'storage',
    'study',
    'text',
    'view',
  ],
  config: ['assembly', 'errors', 'gate', 'program', 'providers', 'storage'],
  corpus: ['errors', 'gate', 'stats', 'storage', 'tasks', 'text'],
  doctor: [
    'artifact',
    'calibration',
    'config',
    'corpus',
    'errors',
    'executors',
    'loop',
    'program',
    'proposers',
    'storage',
    'study',
    'text',
  ],
  errors: ['text'],
  evaluator: ['artifact', 'errors', 'executors', 'storage', 'tasks', 'text'],
  executors: ['artifact', 'errors', 'program', 'providers', 'text'],
  gate: ['errors', 'evaluator', 'stats'],
  index: [
    'api',
    'corpus',
    'errors',
    'evaluator',
    'executors',
    'gate',
    'loop',
    'online',
    'proposers',
    'stats',
    'storage',
    'study',
    'tasks',
  ],
  init: ['errors'],
  loop: [
    'artifact',
    'config',
    'corpus',
    'errors',
    'evaluator',
    'executors',
    'gate',
    'proposers',
    'providers',
    'stats',
    'storage',
    'tasks',
  ],
  'loop-a': [
    'artifact',
    'assembly',
    'corpus',
    'evaluator',
    'executors',
    'loop',
    'proposers',
    'review',
    'runtime',
    'storage',
    'study',
    'tasks',
    'text',
  ],
  online: ['artifact', 'config', 'errors', 'loop', 'program', 'providers', 'schedule', 'signals', 'stats', 'storage'],
  program: ['errors', 'text'],
  proposers: ['artifact', 'config', 'corpus', 'evaluator', 'executors', 'providers', 'stats', 'tasks', 'text'],
  providers: ['artifact', 'errors', 'storage', 'text'],
  'providers-subpath': ['artifact', 'proposers', 'providers', 'study', 'tasks'],
  report: [
    'artifact',
    'config',
    'corpus',
    'errors',
    'evaluator',
    'loop',
    'program',
    'proposers',
    'providers',
    'stats',
    'storage',
    'study',
    'tasks',
    'text',
  ],
  review: ['artifact', 'assembly', 'errors', 'storage'],
  runtime: ['artifact', 'assembly', 'errors', 'executors', 'loop', 'signals', 'storage', 'study', 'tasks'],
  schedule: ['calibration', 'config', 'corpus', 'errors', 'loop', 'loop-a', 'runtime', 'signals', 'storage', 'study'],
  signals: ['assembly', 'config', 'corpus', 'errors', 'review', 'storage', 'tasks', 'text'],
  stats: [],
  storage: ['artifact', 'errors', 'stats', 'text'],
  study: [
    'artifact',
    'config',
    'corpus',
    'errors',
    'executors',
    'loop',
    'program',
    'proposers',
    'providers',
    'storage',
    'tasks',
  ],
  tasks: ['artifact', 'errors', 'executors', 'providers', 'text'],
  text: [],
  view: ['artifact', 'calibration', 'corpus', 'errors', 'review', 'storage'],
};

/** A shortest import chain from `start` to `target` (both included), or undefined when `start` does not reach it. */
function chainTo(graph: ReadonlyMap<string, readonly string[]>, start: string, target: string): string[] | undefined {
  const previous = new Map<string, string | undefined>([[start, undefined]]);
  const pending = [start];
  for (let index = 0; index < pending.length; index++) {
    const module = pending[index]!;
    if (module === target) {
      const chain = [module];
      for (let step = previous.get(module); step !== undefined; step = previous.get(step)) chain.unshift(step);
      return chain;
    }
    for (const next of graph.get(module) ?? []) {
      if (previous.has(next)) continue;
      previous.set(next, module);
      pending.push(next);
    }
  }
  return undefined;
}

/** Packages that open or drive a database connection (SQLite, PostgreSQL, the PostgreSQL job queue). */
const DRIVER_PACKAGES = ['better-sqlite3', 'pg', 'graphile-worker'];

/**
 * The storage backend drivers: the modules of src/storage/ that import a
 * driver package (in any form, a type too) or a Kysely dialect or driver
 * (`SqliteDialect`, `PostgresDriver`, `Driver`, …). Not a driver: Kysely's
 * query builder itself, and `is-postgres-database.ts` (an `instanceof` test
 * of a handle's introspector, which loads no driver).
 */
function storageDrivers(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph.keys()]
    .filter((module) => folderOf(module) === 'storage')
    .filter((module) => {
      const text = readFileSync(path.join(SOURCE, module), 'utf8');
      const packages = ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName.split('/')[0]!);
      return (
        packages.some((name) => DRIVER_PACKAGES.includes(name)) ||
        /import[^;]*\b\w*(Dialect|Driver)\b[^;]*from 'kysely'/.test(text)
      );
    })
    .sort();
}

/** Folders a pure module may not reach, even through others. */
const IO_FOLDERS = ['storage', 'executors', 'tasks', 'providers'];

describe('the import graph, transitively', () => {
  const graph = sourceGraph();
  const edges = folderEdges(graph);

  it('resolves every relative import to a module of src/', () => {
    const unresolved = [...graph].flatMap(([module, imports]) =>
      imports.filter((imported) => !graph.has(imported)).map((imported) => `src/${module} → src/${imported}`),
    );
    expect(unresolved).toEqual([]);
  });

  it('has only the folder edges listed, and every one listed', () => {
    const actual = [...edges].flatMap(([from, targets]) => [...targets].map((to) => `${from} → ${to}`)).sort();
    const allowed = Object.entries(ALLOWED_FOLDER_EDGES)
      .flatMap(([from, targets]) => targets.map((to) => `${from} → ${to}`))
      .sort();
    const why = (edge: string): string => {
      const [from, to] = edge.split(' → ') as [string, string];
      const example = [...graph].find(
        ([module, imports]) => folderOf(module) === from && imports.some((imported) => folderOf(imported) === to),
      );
      return `${edge} (e.g. src/${example![0]} → src/${example![1].find((imported) => folderOf(imported) === to)})`;
    };
    expect(actual.filter((edge) => !allowed.includes(edge)).map(why), 'new folder edges').toEqual([]);
    expect(
      allowed.filter((edge) => !actual.includes(edge)),
      'listed edges that are gone: remove them from ALLOWED_FOLDER_EDGES',
    ).toEqual([]);
  });

  // Issue 32 found two folder cycles, {corpus, evaluator, executors, providers, storage, tasks} and {loop, runtime,
  // signals, study}; both are gone, and a new one fails here.
  it('has no folder cycle', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('src/gate/gate.ts reaches no storage, executor, task or provider module: decide is pure', () => {
    const reached = reachableFrom(graph, 'gate/gate.ts');
    // The one module of an I/O folder it reaches holds the score shapes: types with no imports at all.
    expect(reached.filter((module) => IO_FOLDERS.includes(folderOf(module)))).toEqual(['tasks/example-score.ts']);
    expect(graph.get('tasks/example-score.ts')).toEqual([]);
    expect(reached.filter((module) => folderOf(module) !== 'stats')).toEqual([
      'evaluator/partition-score.ts',
      'gate/gate-checks.ts',
      'gate/gate-defaults.ts',
      'gate/paired-comparison.ts',
      'gate/sequential.ts',
      'gate/shadow-check.ts',
      'tasks/example-score.ts',
    ]);
  });

  // Issue 32 found the evaluator reaching 25 modules of src/tasks/intent/ through src/corpus/example.ts: it now takes
  // examples structurally, and the gate and the evaluator reach only the contracts of tasks and executors.
  it('src/evaluator/ and src/gate/ reach no task, executor or proposer module but the contracts', () => {
    const contracts = ['tasks/task.ts', 'tasks/example-score.ts', 'executors/executor.ts'];
    const engine = [...graph.keys()].filter((module) => ['evaluator', 'gate'].includes(folderOf(module)));
    expect(engine.length).toBeGreaterThan(10);
    expect(
      engine.flatMap((module) =>
        reachableFrom(graph, module)
          .filter((reached) => ['tasks', 'executors', 'proposers', 'corpus'].includes(folderOf(reached)))
          .filter((reached) => !contracts.includes(reached))
          .map((reached) => `src/${module} → src/${reached}`),
      ),
    ).toEqual([]);
  });

  // Issue 32 found src/loop/ reaching src/tasks/intent/ (through the corpus's example shape, example format and
  // admission), a proposer (through the config's search space) and the drivers (through the database handle's type).
  // The study builder (src/study/compose.ts) injects the task, its example format and the proposer into the
  // LoadedStudy; the loop takes the notebook interface (src/storage/notebook/index.ts), which loads no driver, and
  // no database handle (src/loop-notebook-boundary.test.ts).
  it('src/loop/ reaches no task, executor or proposer module but the contracts, and no storage driver', () => {
    const contracts = ['tasks/task.ts', 'tasks/example-score.ts', 'executors/executor.ts', 'proposers/proposer.ts'];
    const drivers = storageDrivers(graph);
    expect(drivers).toEqual([
      'storage/connections.ts',
      'storage/database.ts',
      'storage/evaluation-queue.ts',
      'storage/evaluation-worker.ts',
      'storage/graphile-loader.ts',
      'storage/lease-release-sync.ts',
      'storage/notebook/corpus-members-file.ts',
      'storage/postgres-driver.ts',
      'storage/postgres.ts',
      'storage/queue-listener.ts',
      'storage/queue-notices.ts',
      'storage/worker-sweep.ts',
      'storage/write-fence.ts',
    ]);
    const forbidden = (module: string): boolean =>
      drivers.includes(module) ||
      (['tasks', 'executors', 'proposers'].includes(folderOf(module)) && !contracts.includes(module));
    const loop = [...graph.keys()].filter((module) => folderOf(module) === 'loop');
    expect(loop.length).toBeGreaterThan(20);
    // One chain per forbidden module reached: the shortest from any module of src/loop/.
    const shortest = new Map<string, string[]>();
    for (const module of loop) {
      for (const reached of reachableFrom(graph, module).filter(forbidden)) {
        const chain = chainTo(graph, module, reached)!;
        if ((shortest.get(reached)?.length ?? Number.POSITIVE_INFINITY) > chain.length) shortest.set(reached, chain);
      }
    }
    const chains = [...shortest.values()].map((chain) => chain.map((step) => `src/${step}`).join(' → ')).sort();
    expect(chains).toEqual([]);
    // The contracts it reaches import no task, executor, proposer or driver in turn.
    for (const contract of contracts.filter((module) => graph.has(module)))
      expect(reachableFrom(graph, contract).filter(forbidden), contract).toEqual([]);
  });

  it('src/stats/ reaches nothing outside src/stats/', () => {
    const stats = [...graph.keys()].filter((module) => folderOf(module) === 'stats');
    expect(stats.length).toBeGreaterThan(10);
    expect(
      stats.flatMap((module) =>
        reachableFrom(graph, module)
          .filter((reached) => folderOf(reached) !== 'stats')
          .map((reached) => `src/${module} → src/${reached}`),
      ),
    ).toEqual([]);
  });

  it('the graph helpers find a cycle through three folders, what a module reaches and by which chain, and no cycle in a chain', () => {
    const made = new Map<string, string[]>([
      ['a/one.ts', ['b/two.ts']],
      ['b/two.ts', ['c/three.ts']],
      ['c/three.ts', ['a/other.ts']],
      ['a/other.ts', []],
      ['d/four.ts', ['a/one.ts']],
    ]);
    expect(folderCycles(folderEdges(made))).toEqual([['a', 'b', 'c']]);
    expect(reachableFrom(made, 'd/four.ts')).toEqual(['a/one.ts', 'a/other.ts', 'b/two.ts', 'c/three.ts']);
    expect(chainTo(made, 'd/four.ts', 'a/other.ts')).toEqual([
      'd/four.ts',
      'a/one.ts',
      'b/two.ts',
      'c/three.ts',
      'a/other.ts',
    ]);
    expect(chainTo(made, 'a/other.ts', 'd/four.ts')).toBeUndefined();
    made.set('c/three.ts', []);
    expect(folderCycles(folderEdges(made))).toEqual([]);
  });
});
