/**
 * Global set-up of the integration project: the tests that spawn the CLI run
 * the compiled `dist/` (through `bin/kloop.js`), so it must exist and be
 * newer than every source file. `npm test` builds first; a developer running
 * `npx vitest` directly gets the build done here when dist/ is missing or
 * stale (about 20 s).
 *
 * It also makes the folder of this run's shared reference study
 * (tests/reference-study.ts: built by the first test that asks for it) and
 * the CLI's cache folder for this run (`KLOOP_CACHE_DIR`), and removes both
 * when the run ends.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './reference-study.ts'; // its ProvidedContext entry

const ROOT = path.resolve(import.meta.dirname, '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');

/** Newest modification time (ms) of the files the build reads. */
function newestSourceMtimeMs(): number {
  let newest = 0;
  const visit = (target: string): void => {
    const stat = statSync(target);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(target)) visit(path.join(target, entry));
      return;
    }
    if (!target.endsWith('.test.ts')) newest = Math.max(newest, stat.mtimeMs);
  };
  visit(path.join(ROOT, 'src'));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs']) newest = Math.max(newest, statSync(path.join(ROOT, file)).mtimeMs);
  return newest;
}

export default function setup(project: TestProject): () => void {
  if (!existsSync(STAMP) || statSync(STAMP).mtimeMs < newestSourceMtimeMs()) {
    process.stderr.write(`kloop tests: dist/ is ${existsSync(STAMP) ? 'older than the sources' : 'missing'}: building it (npm run build)\n`);
    const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed: the integration tests need the compiled CLI in dist/');
  }
  const referenceStudyRoot = mkdtempSync(path.join(tmpdir(), 'kloop-reference-study-'));
  project.provide('referenceStudyRoot', referenceStudyRoot);
  // The CLI's goal analyses (src/tasks/intent/offline/analysis-store.ts) are kept for this run only, shared by
  // every CLI process the tests start: the first analyses each goal, the others read it; the developer's own cache is
  // left alone. A test that sets KLOOP_CACHE_DIR itself is not affected.
  const previousCacheDir = process.env['KLOOP_CACHE_DIR'];
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'kloop-test-cache-'));
  process.env['KLOOP_CACHE_DIR'] = cacheDir;
  return () => {
    rmSync(referenceStudyRoot, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
    if (previousCacheDir === undefined) delete process.env['KLOOP_CACHE_DIR'];
    else process.env['KLOOP_CACHE_DIR'] = previousCacheDir;
  };
}
