#!/usr/bin/env node
/**
 * The first half of `npm test`: `npm run typecheck` (tsc --noEmit over src/,
 * tests/, bench/) and `npm run build` (scripts/build.mjs) at the same time.
 * They read the same sources and write nothing the other reads (the type
 * check emits nothing; the build writes dist/ only), and each is mostly one
 * single-threaded tsc, so on two cores running them side by side takes about
 * as long as the slower one instead of both in a row.
 *
 * Each one's output is printed whole when it ends (not interleaved), and the
 * script fails — with the exit code of the first that failed — if either
 * fails.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** Runs `node …args` in the repository folder; resolves with its exit code once its output is printed. */
function run(name, args) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.once('error', (error) => {
      process.stderr.write(`${name}: ${error.message}\n`);
      resolve(1);
    });
    child.once('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      if (output.length > 0) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      const status = code ?? 1;
      process.stdout.write(`${name}: ${status === 0 ? 'ok' : `failed (${signal ?? `exit ${code}`})`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      resolve(status);
    });
  });
}

const codes = await Promise.all([run('typecheck', [tsc, '--noEmit', '-p', '.']), run('build', [path.join(root, 'scripts/build.mjs')])]);
process.exit(codes.find((code) => code !== 0) ?? 0);
