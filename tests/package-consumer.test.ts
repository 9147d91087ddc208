/**
 * kloop as a library, as a user installs it: `npm pack`, the tarball
 * installed into an empty project, and there
 *
 * - plain Node ESM (no tsx, no TypeScript) imports `welchTTest`, the gate and
 *   the study API from `kloop`, every subpath resolves, and a small study
 *   runs to its stopping criterion;
 * - a TypeScript consumer type-checks against the shipped declarations;
 * - the installed `kloop` bin runs.
 *
 * No network: the tarball is unpacked into the project's node_modules and
 * kloop's production dependencies (package-lock.json entries not marked
 * `dev`) are linked from this repository's node_modules, where `npm ci` put
 * them — what `npm install kloop-0.1.0.tgz` would fetch.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './reliability-fixture.ts';

const work = mkdtempSync(path.join(tmpdir(), 'kloop-consumer-'));
const project = path.join(work, 'project');
afterAll(() => rmSync(work, { recursive: true, force: true }));

function node(args: string[], cwd = project): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  // dist/ is built (npm test, or the integration project's global set-up): pack without running `prepare` again.
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const tarball = path.join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
  const modules = path.join(project, 'node_modules');
  mkdirSync(path.join(modules, 'kloop'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', path.join(modules, 'kloop'), '--strip-components=1']);
  // kloop's production dependencies, hoisted as npm installs them.
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  for (const [key, entry] of Object.entries(lock.packages)) {
    const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key)?.[1];
    if (name === undefined || entry.dev === true || !existsSync(path.join(ROOT, key))) continue;
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(path.join(ROOT, key), path.join(modules, name), 'dir');
  }
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify(
      { name: 'consumer', private: true, type: 'module', dependencies: { kloop: `file:${tarball}` } },
      null,
      2,
    ),
  );
  // A small study: the example's playbook and program on a slice of its corpus.
  const study = path.join(project, 'study');
  mkdirSync(path.join(study, 'corpus'), { recursive: true });
  for (const file of ['program.md', 'playbook.yaml'])
    cpSync(path.join(ROOT, 'examples/intent', file), path.join(study, file));
  cpSync(path.join(ROOT, 'examples/intent/corpus/operations.yaml'), path.join(study, 'corpus/operations.yaml'));
  cpSync(path.join(ROOT, 'examples/intent/corpus/extra.jsonl'), path.join(study, 'corpus/extra.jsonl'));
  writeFileSync(
    path.join(study, 'kloop.yaml'),
    readFileSync(path.join(ROOT, 'examples/intent/kloop.yaml'), 'utf8')
      .replace(/maxExperiments: \d+/, 'maxExperiments: 3')
      .replace(/( {2}concurrency: \d+)/, '$1\n  maxEvaluations: 10\n  maxScreened: 100'),
  );
}, 120_000);

describe('the packed package, installed into an empty project', () => {
  it('ships compiled JavaScript and declarations only: no TypeScript source, no tsx', () => {
    const installed = path.join(project, 'node_modules/kloop');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      exports: Record<string, unknown>;
    };
    expect(Object.keys(manifest.dependencies)).not.toContain('tsx');
    expect(existsSync(path.join(installed, 'src'))).toBe(false);
    const files = (readdirSync(path.join(installed, 'dist'), { recursive: true }) as string[]).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.d.ts'),
    );
    expect(files).toEqual([]);
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (typeof target === 'string') continue;
      const conditions = target as { types: string; import: string };
      expect(Object.keys(conditions), subpath).toEqual(['types', 'import']);
      expect(existsSync(path.join(installed, conditions.types)), conditions.types).toBe(true);
      expect(existsSync(path.join(installed, conditions.import)), conditions.import).toBe(true);
    }
  });

  it('ships the library example the README points to, and it runs from the installed package', () => {
    const example = path.join(project, 'node_modules/kloop/examples/library/review-sentiment.mjs');
    expect(existsSync(example)).toBe(true);
    const storage = path.join(work, 'example-study');
    const output = execFileSync(process.execPath, [example, storage], { cwd: project, encoding: 'utf8' });
    expect(output.split('\n')[0]).toBe('optimization accuracy 20.0% → 100.0%');
  });

  it('plain Node imports welchTTest (the issue\'s check prints "function")', () => {
    const result = node(['-e', "import('kloop').then(m => console.log(typeof m.welchTTest))"]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('function\n');
  });

  it('plain Node ESM runs the statistics, the gate and a small study through the public API, and imports every subpath', () => {
    writeFileSync(
      path.join(project, 'consumer.mjs'),
      `import { welchTTest, decide, DEFAULT_GATE_SETTINGS, loadStudy, runStudy, openDatabase, studyDatabasePath, createEvaluator, InputError, StudyBusyError } from 'kloop';
import * as providers from 'kloop/providers';
import * as runtime from 'kloop/runtime';
import * as assembly from 'kloop/assembly';
import * as signals from 'kloop/signals';
import * as importers from 'kloop/importers';

const t = welchTTest([0.61, 0.64, 0.66, 0.63], [0.55, 0.57, 0.56, 0.58], { alternative: 'greater' });
const study = loadStudy('study');
const db = await openDatabase(studyDatabasePath(study.dir));
const events = [];
const outcome = await runStudy({ study, db, onEvent: (event) => events.push(event.type) });
const decided = await db.selectFrom('experiments').select(['decision', 'reason']).execute();
await db.destroy();
console.log(JSON.stringify({
  welch: { statistic: t.statistic, pValue: t.pValue },
  gate: typeof decide, alpha: DEFAULT_GATE_SETTINGS.alpha, evaluator: typeof createEvaluator, errors: typeof InputError, busy: new StudyBusyError(undefined) instanceof Error,
  subpaths: [providers, runtime, assembly, signals, importers].map((module) => Object.keys(module).length > 0),
  stopReason: outcome.stopReason, experiments: decided.length, events: [...new Set(events)],
}));
`,
    );
    const result = node(['consumer.mjs']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      welch: { statistic: number; pValue: number };
      gate: string;
      alpha: number;
      evaluator: string;
      errors: string;
      busy: boolean;
      subpaths: boolean[];
      stopReason: string;
      experiments: number;
      events: string[];
    };
    expect(report.welch.pValue).toBeGreaterThan(0);
    expect(report.welch.pValue).toBeLessThan(0.01);
    expect(report).toMatchObject({
      gate: 'function',
      alpha: 0.05,
      evaluator: 'function',
      errors: 'function',
      busy: true,
      subpaths: [true, true, true, true, true],
      stopReason: 'max_experiments',
      experiments: 3,
    });
    expect(report.events).toEqual(expect.arrayContaining(['start', 'round', 'decision', 'stop']));
  });

  it('a TypeScript consumer type-checks against the shipped declarations', () => {
    writeFileSync(
      path.join(project, 'consumer.ts'),
      `import { welchTTest, decide, DEFAULT_GATE_SETTINGS, loadStudy, type GateDecision, type TTestResult, type Example, type RunEvent } from 'kloop';
import { createLlmStudyPlugins } from 'kloop/providers';

const result: TTestResult = welchTTest([1, 2, 3], [2, 3, 4]);
const p: number = result.pValue;
const alpha: number = DEFAULT_GATE_SETTINGS.alpha;
const describe = (decision: GateDecision): string => decision.accepted ? 'accepted' : decision.reason;
const ids = (examples: readonly Example[]): string[] => examples.map((example) => example.id);
const onEvent = (event: RunEvent): string => event.type;
const study = loadStudy('study', createLlmStudyPlugins({ getDatabase: () => undefined }));
export { p, alpha, describe, ids, onEvent, study, decide };
`,
    );
    // A misuse beside it must be caught: the declarations carry real types, not `any`. One tsc for both
    // files (each run costs seconds of CPU); the consumer is clean when misuse.ts's is the only error.
    writeFileSync(
      path.join(project, 'misuse.ts'),
      "import { welchTTest } from 'kloop';\nconst wrong: string = welchTTest([1, 2], [3, 4]).pValue;\nexport { wrong };\n",
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['consumer.ts', 'misuse.ts'],
      }),
    );
    const tsc = node([path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.stderr).toBe('');
    expect(tsc.code).not.toBe(0);
    expect(tsc.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^misuse\.ts\(2,7\): error TS2322: Type 'number' is not assignable to type 'string'\.$/),
    ]);
  });

  it('the installed bin runs the compiled CLI', () => {
    const result = node([path.join(project, 'node_modules/kloop/bin/kloop.js'), 'status', 'study', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { corpus: { optimization: number } }).corpus.optimization).toBeGreaterThan(0);
  });
});
