/**
 * Global set-up of the integration project: the tests that spawn the CLI run
 * the compiled `dist/` (through `bin/kloop.js`), so it must be the build of
 * the sources as they are. `npm ci` builds it; a developer running `npm test`
 * or `npx vitest` after changing a source gets it rebuilt here
 * (`scripts/build.mjs --if-stale`: about 20 s when stale, a hash of the
 * sources when not).
 *
 * It also makes the folder of this run's shared reference study
 * (tests/reference-study.ts: built by the first test that asks for it) and
 * the CLI's cache folder for this run (`KLOOP_CACHE_DIR`), and removes both
 * when the run ends.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './reference-study.ts'; // its ProvidedContext entry

const ROOT = path.resolve(import.meta.dirname, '..');

export default function setup(project: TestProject): () => void {
  // Builds only when dist/ is not the build of the sources as they are (scripts/build.mjs, `--if-stale`).
  const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--if-stale'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('npm run build failed: the integration tests need the compiled CLI in dist/');
  const referenceStudyRoot = mkdtempSync(path.join(tmpdir(), 'kloop-reference-study-'));
  project.provide('referenceStudyRoot', referenceStudyRoot);
  // The CLI's goal analyses (src/tasks/intent/offline/analysis-store.ts) are kept for this run only, shared by
  // every CLI process the tests start: the first analyses each goal, the others read it; the developer's own cache is
  // left alone. A test that sets KLOOP_CACHE_DIR itself is not affected.
  const previousCacheDir = process.env.KLOOP_CACHE_DIR;
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'kloop-test-cache-'));
  process.env.KLOOP_CACHE_DIR = cacheDir;
  return () => {
    rmSync(referenceStudyRoot, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
    if (previousCacheDir === undefined) delete process.env.KLOOP_CACHE_DIR;
    else process.env.KLOOP_CACHE_DIR = previousCacheDir;
  };
}
