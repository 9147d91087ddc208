/**
 * Autonomous mode: with `gate.requireCalibration: true`, `kloop run` refuses
 * (exit 2, clear message, nothing decided) until the current evaluator has a
 * valid calibration; `kloop run --calibrate` calibrates first and runs.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';
import { makeSmallStudy } from './small-intent-study.ts';

const study = makeSmallStudy({
  optimization: 12,
  anchor: 3,
  shadow: 6,
  config: [
    'gate: { requireCalibration: true, noiseRepeats: 2, signalRepeats: 1 }',
    'proposer: { candidatesPerRound: 3, concurrency: 2 }',
    'stopping: { maxExperiments: 3, plateauRounds: 2, maxRounds: 2 }',
  ],
});
afterAll(() => study.cleanup());

/** Rows of a table of the study's notebook (0 when there is no notebook yet). */
function rows(table: 'experiments' | 'corpus_members'): number {
  const file = path.join(study.dir, '.kloop', 'kloop.db');
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('gate.requireCalibration', () => {
  it('refuses an autonomous run without a calibration, then runs after --calibrate', async () => {
    const refused = await kloop('run', study.dir, '--quiet');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('requires a valid calibration for the current evaluator');
    expect(refused.stderr).toContain('gate.requireCalibration');
    expect(rows('experiments')).toBe(0);
    // Refused before the corpus files were admitted: bad input changes nothing.
    expect(rows('corpus_members')).toBe(0);

    const calibrated = await kloop('run', study.dir, '--calibrate', '--json', '--quiet');
    expect(calibrated.code).toBe(0);
    const report = JSON.parse(calibrated.stdout) as { experiments: number };
    expect(report.experiments).toBeGreaterThan(0);

    const status = await kloop('status', study.dir, '--json');
    const payload = JSON.parse(status.stdout) as {
      calibration: { valid: boolean; noiseSd: number; threshold: number; cohensD: number } | null;
    };
    expect(payload.calibration).toMatchObject({ valid: true, noiseSd: 0, threshold: 0 });
    expect(payload.calibration!.cohensD).toBeGreaterThan(0.5);
  });
});

describe('a calibration that fails', () => {
  const strict = makeSmallStudy({
    optimization: 12,
    anchor: 3,
    shadow: 6,
    // No evaluator separates an artifact from its ablation by a Cohen's d of 1000: the calibration fails.
    config: [
      'gate: { requireCalibration: true, noiseRepeats: 2, signalRepeats: 1, minCohensD: 1000 }',
      'stopping: { maxExperiments: 3, plateauRounds: 2, maxRounds: 2 }',
    ],
  });
  afterAll(() => strict.cleanup());

  it('exits 1 from kloop calibrate and from kloop run --calibrate alike, with the message once and no run', async () => {
    const calibrated = await kloop('calibrate', strict.dir, '--quiet');
    expect(calibrated.code, calibrated.stderr).toBe(1);
    expect(calibrated.stdout).toContain('calibration failed: the evaluator cannot tell artifacts apart');
    const run = await kloop('run', strict.dir, '--calibrate', '--quiet');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^kloop: calibration failed: the evaluator cannot tell artifacts apart/m);
    expect(run.stderr).not.toMatch(/calibration failed: calibration failed/);
    const json = await kloop('run', strict.dir, '--calibrate', '--json', '--quiet');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: 'calibration', message: expect.stringMatching(/^calibration failed: /) },
    });
  });
});
