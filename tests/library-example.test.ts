/**
 * The library example runs with plain `node` on plain JavaScript (importing
 * `kloop` from the compiled package) and records its experiments in a
 * notebook that `kloop history` and `kloop report` read.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'kloop-library-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function node(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, args, {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('examples/library/review-sentiment.mjs', () => {
  it('optimizes the keyword list and leaves a notebook kloop history reads', () => {
    const storage = path.join(work, 'reviews');
    const run = node(['examples/library/review-sentiment.mjs', storage]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n').slice(0, 4)).toEqual([
      'optimization accuracy 20.0% → 100.0%',
      'anchor       accuracy 100.0% → 100.0%',
      'shadow       accuracy 0.0% → 100.0%',
      'stopped: no_new_proposals (2 rounds in a row brought nothing new to evaluate (every candidate was tried before or a near-duplicate): the proposer has run out of new ideas); 3 experiment(s); active version 2',
    ]);
    const history = node(['bin/kloop.js', 'history', storage, '--json']);
    expect(history.status).toBe(0);
    const experiments = (JSON.parse(history.stdout) as { experiments: Array<{ decision: string; reason: string }> })
      .experiments;
    expect(experiments.map((experiment) => `${experiment.decision} ${experiment.reason}`)).toEqual([
      'accepted accepted',
      'refused below_margin',
      'refused below_margin',
    ]);
    // `kloop report` reads the same notebook, although the folder has no kloop.yaml (docs/any-workflow.md says so).
    const csv = node(['bin/kloop.js', 'report', storage, '--format', 'csv']);
    expect(csv.stderr).toBe('');
    expect(csv.status).toBe(0);
    expect(csv.stdout.split('\n')[0]).toMatch(/^id,run,round,proposer,decision,reason,/);
    expect(csv.stdout.match(/^\d+,1,\d+,[^,]+,(accepted|refused),/gm)).toHaveLength(3);
    const json = node(['bin/kloop.js', 'report', storage, '--format', 'json']);
    expect(json.status).toBe(0);
    expect((JSON.parse(json.stdout) as { study: string; experiments: unknown[] }).study).toBe(storage);
    // --json promises one JSON object on stdout: a csv report there would break it, so it needs --out.
    const mixed = node(['bin/kloop.js', 'report', storage, '--format', 'csv', '--json']);
    expect(mixed.status).toBe(2);
    expect(JSON.parse(mixed.stdout)).toMatchObject({
      error: { message: expect.stringContaining('--json with --format csv needs --out FILE') },
    });
    const summary = node([
      'bin/kloop.js',
      'report',
      storage,
      '--format',
      'csv',
      '--json',
      '--out',
      path.join(work, 'experiments.csv'),
    ]);
    expect(summary.status).toBe(0);
    expect(JSON.parse(summary.stdout)).toMatchObject({ format: 'csv', experiments: 3 });
  });
});
