/**
 * `kloop export` (DESIGN.md §6: "the artifact saved as best, reloaded in a
 * fresh process and re-evaluated, gives the score that was reported"): the
 * exported best artifact, scored by `kloop eval --artifact FILE --json --no-cache`
 * in a fresh process, has exactly the composite per partition that
 * `kloop run --json` reported as `best`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeStudy, runKloop, snapshotDatabase } from './reliability-fixture.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface RunReport {
  best: Record<'optimization' | 'anchor' | 'shadow', number | null>;
  baseline: Record<'optimization' | 'anchor' | 'shadow', number | null>;
  bestVersion: number;
  baselineVersion: number;
  exitCode: number;
}

describe('kloop export', () => {
  it('the exported best artifact, re-evaluated in a fresh process, scores exactly what the run reported', async () => {
    const study = makeStudy(cleanups, { maxExperiments: 6 });
    const unrun = makeStudy(cleanups);
    const [before, run] = await Promise.all([
      runKloop(['export', unrun]),
      runKloop(['run', study, '--json', '--quiet']),
    ]);
    expect(before.code).toBe(2);
    expect(before.stderr.trim()).toMatch(/this study has no database yet: run `kloop run` first$/);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as RunReport;
    expect(report.bestVersion).not.toBe(report.baselineVersion); // something was accepted: the export is not the seed

    const exported = await runKloop(['export', study, '--json']);
    expect(exported.code, exported.stderr).toBe(0);
    const described = JSON.parse(exported.stdout) as { file: string; version: number; best: boolean; hash: string };
    expect(described).toMatchObject({ version: report.bestVersion, best: true });
    expect(described.file).toBe(path.join(study, '.kloop', 'exports', `playbook.v${report.bestVersion}.yaml`));
    expect(readFileSync(described.file, 'utf8')).toBe(snapshotDatabase(study).active);
    expect(readdirSync(path.dirname(described.file)).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const seedFile = path.join(study, 'seed-copy.yaml');
    writeFileSync(seedFile, 'an older export, overwritten whole');
    const [evaluation, seed, stdout, missing, nowhere] = await Promise.all([
      // A fresh process, a fresh evaluation (no stored results): the reported scores, exactly.
      runKloop(['eval', study, '--artifact', described.file, '--json', '--quiet', '--no-cache']),
      // --version, --out FILE and --out - (stdout); a version that does not exist; a folder that does not exist.
      runKloop(['export', study, '--version', String(report.baselineVersion), '--out', seedFile]),
      runKloop(['export', study, '--best', '--out', '-']),
      runKloop(['export', study, '--version', '999']),
      runKloop(['export', study, '--out', path.join(study, 'no-such-folder', 'x.yaml')]),
    ]);
    expect(evaluation.code, evaluation.stderr).toBe(0);
    const partitions = (JSON.parse(evaluation.stdout) as { partitions: Record<string, { composite: number | null }> })
      .partitions;
    for (const name of ['optimization', 'anchor', 'shadow'] as const)
      expect(partitions[name]!.composite).toBe(report.best[name]);
    expect(report.best.optimization).not.toBe(report.baseline.optimization);

    expect(seed.code, seed.stderr).toBe(0);
    expect(seed.stdout).toMatch(
      new RegExp(
        `^exported version ${report.baselineVersion} \\(seed, \\d+ bytes, hash [0-9a-f]{12}\\) to ${seedFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );
    expect(readFileSync(seedFile)).toEqual(readFileSync(path.join(study, 'playbook.yaml')));
    expect(stdout.code, stdout.stderr).toBe(0);
    expect(stdout.stdout).toBe(readFileSync(described.file, 'utf8'));
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe('kloop: --version: no artifact version 999 in this study (see `kloop history`)');
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr.trim()).toMatch(
      /no-such-folder\/x\.yaml: cannot write the export: its folder does not exist$/,
    );
    expect(existsSync(path.join(study, 'no-such-folder'))).toBe(false);
  }, 240_000);
});
