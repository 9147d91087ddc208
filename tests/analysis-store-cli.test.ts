/**
 * The compiled CLI keeps goal analyses on disk between processes
 * (src/tasks/intent/offline/analysis-store.ts): a second run of a study reads
 * them instead of analysing the goals again and decides exactly as the first;
 * `KLOOP_CACHE_DIR=off` keeps none.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeStudy, runKloop } from './reliability-fixture.ts';

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function cacheFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-cache-cli-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** A run's JSON report without what differs between two copies of one study (their folders, the wall time). */
async function run(study: string, env: NodeJS.ProcessEnv): Promise<unknown> {
  const result = await runKloop(['run', study, '--json', '--quiet', '--max-experiments', '3'], {
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout.split(study).join('<study>')) as Record<string, unknown>;
  delete report.wallTimeMs;
  return report;
}

describe('goal analyses kept between CLI processes', () => {
  it('the first run writes one file per goal; a run of a copy reads them and reports the same; off keeps none', async () => {
    const cacheDir = cacheFolder();
    const first = await run(makeStudy(cleanups), { KLOOP_CACHE_DIR: cacheDir });
    const [identity, ...others] = readdirSync(path.join(cacheDir, 'goal-analyses'));
    expect(others).toEqual([]);
    const folder = path.join(cacheDir, 'goal-analyses', identity!);
    const files = readdirSync(folder).sort();
    // The fixture study's corpus: operations.yaml and extra.jsonl.
    expect(files.length).toBeGreaterThanOrEqual(20);
    const inodes = files.map((file) => statSync(path.join(folder, file)).ino);
    expect(await run(makeStudy(cleanups), { KLOOP_CACHE_DIR: cacheDir })).toEqual(first);
    // Read, not written again (a write replaces the file through a rename: a new inode).
    expect(readdirSync(folder).sort()).toEqual(files);
    expect(files.map((file) => statSync(path.join(folder, file)).ino)).toEqual(inodes);

    // off: nothing under the default places either.
    const home = cacheFolder();
    expect(
      await run(makeStudy(cleanups), { KLOOP_CACHE_DIR: 'off', HOME: home, XDG_CACHE_HOME: path.join(home, 'xdg') }),
    ).toEqual(first);
    expect(readdirSync(home)).toEqual([]);
    // Unset: $XDG_CACHE_HOME/kloop.
    expect(
      await run(makeStudy(cleanups), { KLOOP_CACHE_DIR: '', HOME: home, XDG_CACHE_HOME: path.join(home, 'xdg') }),
    ).toEqual(first);
    expect(readdirSync(path.join(home, 'xdg', 'kloop', 'goal-analyses', identity!)).sort()).toEqual(files);
  });
});
