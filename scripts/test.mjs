#!/usr/bin/env node
/**
 * `npm test`: the lint (`biome ci`, biome.jsonc: the formatter and the
 * linter; about a second), the type check (`tsc --noEmit` over src/, tests/,
 * bench/) and the test suite (`vitest run`, both projects) at the same time.
 * Arguments after `npm test --` go to vitest (`npm test -- tests/lease.test.ts`).
 *
 * The suite needs the compiled CLI in dist/: `npm ci` builds it (the
 * `prepare` script), and the integration project's global set-up
 * (tests/global-setup.ts) rebuilds it first when it is not the build of the
 * sources as they are (`scripts/build.mjs --if-stale`), so a clone that was
 * just installed does not build twice.
 *
 * Why side by side: the type check is one single-threaded tsc of about 25
 * CPU-seconds (incremental: about 8 when nothing changed since the last
 * `npm test`) that nothing in the suite reads, and the suite keeps the cores
 * busy but not full (its integration files wait on the processes they start);
 * run in a row they cost the sum of both, side by side about a dozen seconds
 * more than the suite alone (measured on 2 cores, December 2026).
 *
 * vitest's output streams as it runs; the lint's and the type check's are
 * held and printed whole after it, so they never interleave. The exit code is
 * vitest's when it failed, else the type check's, else the lint's: any of the
 * three failing fails `npm test`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const biome = require.resolve('@biomejs/biome/bin/biome');
const vitestPackage = require.resolve('vitest/package.json');
const vitest = path.join(path.dirname(vitestPackage), require(vitestPackage).bin.vitest);

/** Runs `node …args` in the repository folder; resolves with its exit code and, unless `inherit`, its output. */
function run(args, inherit) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, args, { cwd: root, stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout?.on('data', (chunk) => chunks.push(chunk));
    child.stderr?.on('data', (chunk) => chunks.push(chunk));
    child.once('error', (error) => resolve({ code: 1, output: `${error.message}\n`, seconds: 0 }));
    child.once('close', (code, signal) => {
      resolve({
        code: code ?? 1,
        signal,
        output: Buffer.concat(chunks).toString('utf8'),
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

// Incremental: the next `npm test` re-checks only what changed since (about 8 CPU-seconds instead of 25 when
// nothing did). The state lives in node_modules/.cache, which a fresh clone does not have.
const buildInfo = path.join(root, 'node_modules', '.cache', 'kloop', 'typecheck.tsbuildinfo');
const typecheck = run([tsc, '--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', buildInfo], false);
const lint = run([biome, 'ci', '.', '--colors=off', '--diagnostic-level=error'], false);
const suite = await run([vitest, 'run', ...process.argv.slice(2)], true);
const linted = await lint;
if (linted.code !== 0) process.stdout.write(linted.output.endsWith('\n') ? linted.output : `${linted.output}\n`);
process.stdout.write(
  `lint: ${linted.code === 0 ? 'ok' : `failed (${linted.signal ?? `exit ${linted.code}`}; npm run lint:fix formats and fixes what is safe)`} in ${linted.seconds.toFixed(1)} s\n`,
);
const checked = await typecheck;
if (checked.output.length > 0)
  process.stdout.write(checked.output.endsWith('\n') ? checked.output : `${checked.output}\n`);
process.stdout.write(
  `typecheck: ${checked.code === 0 ? 'ok' : `failed (${checked.signal ?? `exit ${checked.code}`})`} in ${checked.seconds.toFixed(1)} s\n`,
);
process.exit(suite.code !== 0 ? suite.code : checked.code !== 0 ? checked.code : linted.code);
