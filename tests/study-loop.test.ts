/**
 * The main job end to end on a copy of the reference study: the loop improves
 * the playbook, the shadow confirms it, a second run continues without
 * evaluating anything twice, and the CLI's JSON report has its public fields.
 *
 * The first run (12 experiments, by the compiled CLI) is the shared run of
 * tests/reference-study.ts, which view-cli and view-browser read too; this
 * file continues a copy of it.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_MAX_EXPERIMENTS, copyReferenceStudy, removeStudy, type ReferenceRun } from './reference-study.ts';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..');
const kloop = path.join(repo, 'bin', 'kloop.js');
let dir: string;
let firstRun: ReferenceRun;

beforeAll(async () => {
  ({ dir, run: firstRun } = await copyReferenceStudy('kloop-loop-'));
}, 240_000);
afterAll(() => removeStudy(dir));

interface RunReport {
  baseline: Record<'optimization' | 'anchor' | 'shadow', number>;
  best: Record<'optimization' | 'anchor' | 'shadow', number>;
  experiments: number;
  accepted: number;
  refused: Record<string, number>;
  stopReason: string;
  bestArtifact: string;
  database: string;
  thisRun: { experiments: number };
}

describe('kloop run on the reference study', () => {
  let first: RunReport;
  let latest: RunReport;

  it('improves the optimization composite, and the shadow confirms it', async () => {
    first = JSON.parse(firstRun.stdout) as RunReport;
    latest = first;
    for (const key of [
      'baseline',
      'best',
      'experiments',
      'accepted',
      'refused',
      'stopReason',
      'bestArtifact',
      'database',
    ]) {
      expect(first).toHaveProperty(key);
    }
    expect(first.experiments).toBe(REFERENCE_MAX_EXPERIMENTS);
    expect(first.stopReason).toBe('max_experiments');
    expect(first.accepted).toBeGreaterThan(0);
    expect(first.best.optimization).toBeGreaterThan(first.baseline.optimization);
    expect(first.best.shadow).toBeGreaterThanOrEqual(first.baseline.shadow);
    expect(first.best.anchor).toBeGreaterThanOrEqual(first.baseline.anchor);
    expect(Object.values(first.refused).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    // The report names the folder the run ran in; this file's copy holds the same files.
    expect(first.bestArtifact.startsWith(`${firstRun.ranIn}${path.sep}`), first.bestArtifact).toBe(true);
    expect(readFileSync(path.join(dir, path.relative(firstRun.ranIn, first.bestArtifact)), 'utf8')).toContain(
      'appTypeCues:',
    );
  });

  it('continues on a second run without evaluating any experiment twice', async () => {
    const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').replace(
      /maxExperiments: \d+/,
      'maxExperiments: 18',
    );
    writeFileSync(path.join(dir, 'kloop.yaml'), config);
    const { stdout } = await run(process.execPath, [kloop, 'run', dir, '--json', '--quiet'], { cwd: repo });
    const second = JSON.parse(stdout) as RunReport;
    latest = second;
    expect(second.experiments).toBe(18);
    expect(second.thisRun.experiments).toBe(18 - REFERENCE_MAX_EXPERIMENTS);
    expect(second.best.optimization).toBeGreaterThanOrEqual(first.best.optimization);
    // The notebook: no candidate decided twice, no evaluation stored twice.
    const { stdout: history } = await run(process.execPath, [kloop, 'history', dir, '--json'], { cwd: repo });
    const experiments = (
      JSON.parse(history) as { experiments: Array<{ id: number; delta: string; decision: string; round: number }> }
    ).experiments;
    const decided = experiments.filter((experiment) => experiment.decision !== 'skipped');
    expect(decided).toHaveLength(18);
    expect(new Set(decided.map((experiment) => experiment.delta)).size).toBe(decided.length);
    // A third run has nothing left to do and evaluates nothing.
    const { stdout: third } = await run(process.execPath, [kloop, 'run', dir, '--json', '--quiet'], { cwd: repo });
    expect((JSON.parse(third) as RunReport).thisRun.experiments).toBe(0);
  }, 240_000);

  it('shows one decision with the evidence of every check', async () => {
    const { stdout } = await run(process.execPath, [kloop, 'history', dir, '--json'], { cwd: repo });
    const experiments = (JSON.parse(stdout) as { experiments: Array<{ id: number; decision: string }> }).experiments;
    const accepted = experiments.find((experiment) => experiment.decision === 'accepted')!;
    const { stdout: shown } = await run(process.execPath, [kloop, 'show', dir, String(accepted.id), '--json'], {
      cwd: repo,
    });
    const payload = JSON.parse(shown) as {
      checks: Array<{ name: string; passed: boolean; statistic: number | null; threshold: number | null }>;
    };
    expect(payload.checks.map((check) => check.name)).toEqual([
      'constraints',
      'validity',
      'margin',
      'significance',
      'anchors',
      'shadow',
    ]);
    expect(payload.checks.every((check) => check.passed)).toBe(true);
  });

  it('eval --json reports composite, components, invalid and per-example diagnostics', async () => {
    const { stdout } = await run(process.execPath, [kloop, 'eval', dir, '--partition', 'optimization', '--json'], {
      cwd: repo,
    });
    const payload = JSON.parse(stdout) as {
      composite: number;
      components: Record<string, number>;
      invalid: number;
      examples: Array<{ id: string; composite: number; diagnostics: unknown }>;
    };
    expect(payload.composite).toBeCloseTo(latest.best.optimization, 10);
    expect(Object.keys(payload.components).sort()).toEqual([
      'appType',
      'behaviorCoverage',
      'entityPrecision',
      'entityRecall',
      'relationRecall',
      'roleAccuracy',
    ]);
    expect(payload.invalid).toBe(0);
    expect(payload.examples).toHaveLength(40);
    expect(payload.examples[0]).toHaveProperty('diagnostics');
  });

  it('exits 2 with a clear message on bad usage', async () => {
    await expect(
      run(process.execPath, [kloop, 'eval', dir, '--partition', 'training'], { cwd: repo }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown partition "training"'),
    });
    await expect(run(process.execPath, [kloop, 'run', path.join(dir, 'missing')], { cwd: repo })).rejects.toMatchObject(
      { code: 2 },
    );
  });
});
