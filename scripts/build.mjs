#!/usr/bin/env node
/**
 * `npm run build` (also run by `prepare`, so `npm ci` in a clone builds):
 * compiles src/ to dist/ with tsc (JavaScript and declaration files, see
 * tsconfig.build.json), then copies the non-TypeScript files the code reads at
 * run time (the built-in pattern library's YAML files). dist/ is emptied
 * first, so a deleted source leaves no stale module behind.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
/** Folders of src/ whose non-TypeScript files are copied beside the compiled code. */
const ASSET_FOLDERS = ['assembly/patterns'];

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write('build: tsc failed\n');
  process.exit(compiled.status ?? 1);
}
for (const folder of ASSET_FOLDERS) {
  const from = path.join(root, 'src', folder);
  for (const name of readdirSync(from)) {
    const file = path.join(from, name);
    if (statSync(file).isFile() && !name.endsWith('.ts')) cpSync(file, path.join(dist, folder, name));
  }
}
// Read by the integration tests' global set-up (tests/global-setup.ts) to tell a stale build.
writeFileSync(path.join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
