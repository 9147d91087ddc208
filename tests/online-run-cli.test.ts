/**
 * `kloop run` on an online study through the compiled CLI: bad kloop.yaml
 * (exit 2, file, line and field), the first step starting the A/A
 * calibration (exit 0, --json), the stops with their reports and exit codes
 * (max_experiments 0; calibration_invalid 1 when exposures were lost), and
 * an assignment refused once the study stopped.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createIdeasProposer } from '../src/online/proposers/ideas-proposer.ts';
import { openOnlineStudy } from '../src/online/study/online-study.ts';
import { runSlowLoopStep } from '../src/online/study/slow-loop.ts';
import { runKloop } from './reliability-fixture.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function study(extra = ''): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-run-'));
  folders.push(folder);
  writeFileSync(
    path.join(folder, 'kloop.yaml'),
    `mode: online\nartifact: strategy.md\nmetrics:\n  primary: reply_rate\n  attributionWindow: 1h\n  windows: { minUnitsPerArm: 100 }\n${extra}`,
  );
  writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- Ask one question.\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  return folder;
}

/** The A/A started and 2000 units assigned two days ago, so their windows have closed by now. */
async function calibrationTraffic(folder: string, dropCandidates = false): Promise<void> {
  const past = new Date(Date.now() - 2 * 86_400_000);
  const handle = await openOnlineStudy(folder, { now: () => past });
  try {
    await runSlowLoopStep(handle, createIdeasProposer());
    await handle.assignMany(Array.from({ length: 2000 }, (_, index) => `u${index}`));
    if (dropCandidates)
      await handle.db.deleteFrom('exposures').where('arm', '=', 'candidate').where('unit', '<', 'u6').execute();
  } finally {
    await handle.close();
  }
}

describe('kloop run on an online study', () => {
  it('refuses a bad kloop.yaml with exit 2, naming file, line and field', async () => {
    const folder = study('  ramp: [0.5, 0.2]\n');
    const result = await runKloop(['run', folder]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('kloop.yaml:7: metrics.ramp[1]: the ramp must increase step by step');
    const offlineOption = await runKloop(['run', study(), '--max-experiments', '3']);
    expect(offlineOption.code).toBe(2);
    expect(offlineOption.stderr).toContain(
      '--max-experiments: --max-experiments applies to offline studies only; this is an online study (mode: online)',
    );
  });

  it('starts the A/A calibration on the first step and reports where it stands (--json, exit 0)', async () => {
    const folder = study();
    const result = await runKloop(['run', folder, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      simulated: boolean;
      exitCode: number;
      started: number[];
      experiments: Array<{ kind: string; status: string; waitingFor: string }>;
    };
    expect([report.simulated, report.exitCode, report.started]).toEqual([false, 0, [1]]);
    expect(report.experiments.map((experiment) => [experiment.kind, experiment.status, experiment.waitingFor])).toEqual(
      [['aa', 'decision', 'minimum_units']],
    );
  });

  it('stops at stopping.maxExperiments with its report (exit 0), and refuses assignments after', async () => {
    const folder = study('stopping: { maxExperiments: 0 }\n');
    await calibrationTraffic(folder);
    const result = await runKloop(['run', folder]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^experiment 1: calibrated$/m);
    expect(result.stdout).toMatch(
      /^stop reason: max_experiments \(the experiment budget \(stopping.maxExperiments\) is spent\) — 0 experiments run/m,
    );
    const handle = await openOnlineStudy(folder);
    try {
      await expect(handle.assign('late')).rejects.toThrow(/the online study has stopped \(max_experiments\)/);
    } finally {
      await handle.close();
    }
  });

  it('stops as calibration_invalid (exit 1) when the A/A lost exposures of one arm', async () => {
    const folder = study();
    await calibrationTraffic(folder, true);
    const result = await runKloop(['run', folder, '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      exitCode: number;
      stopped: { reason: string };
      experiments: Array<{ status: string; reason: string }>;
    };
    expect([
      report.exitCode,
      report.stopped.reason,
      report.experiments[0]!.status,
      report.experiments[0]!.reason,
    ]).toEqual([1, 'calibration_invalid', 'invalid', 'srm']);
  });
});
