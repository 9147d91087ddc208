import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

// The custom task as it ships: kloop compiled to JavaScript, run by plain Node 20 with no
// loader (no tsx, no --import, no NODE_OPTIONS), loading a user's TypeScript scorer.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
// Inside the worktree, so the compiled module's package imports (zod, esbuild) resolve from node_modules.
const cache = join(ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const OUT = mkdtempSync(join(cache, 'kloop-custom-task-'));

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('the custom task on plain Node, kloop compiled to JavaScript', () => {
  it('loads a TypeScript scorer, scores, and exits', async () => {
    const bundle = join(OUT, 'custom-task.mjs');
    await build({
      entryPoints: [fileURLToPath(new URL('./custom-task.ts', import.meta.url))],
      outfile: bundle,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    });
    const script = [
      `const { loadCustomTask } = await import(${JSON.stringify(pathToFileURL(bundle).href)});`,
      `const task = await loadCustomTask({ studyFolder: ${JSON.stringify(FIXTURES)}, module: 'route-score.ts' });`,
      "const score = task.score({ label: 'technical', priority: 'low' }, { label: 'billing', priority: 'low' }, 'text', { label: 3, priority: 1 });",
      "const invalid = task.schemas.output.safeParse({ label: 'billing', priority: 'urgent' }).success;",
      'console.log(JSON.stringify({ id: task.id, composite: score.composite, feedback: score.feedback, invalid, loaders: process.execArgv }));',
    ].join('\n');
    const main = join(OUT, 'main.mjs');
    writeFileSync(main, script, 'utf8');
    const environment = { ...process.env };
    delete environment.NODE_OPTIONS;
    const stdout = execFileSync(process.execPath, [main], {
      cwd: OUT,
      env: environment,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result).toEqual({
      id: expect.stringMatching(/^custom@[0-9a-f]{16}$/),
      composite: 0.25,
      feedback: 'expected billing, routed to technical',
      invalid: false,
      loaders: [],
    });
  });
});
