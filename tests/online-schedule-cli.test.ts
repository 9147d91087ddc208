/**
 * `kloop schedule` on an online study through the CLI (in-process), with
 * cadences of seconds in kloop.yaml: the fast loop runs the metric scraper,
 * the slow loop finishes the A/A calibration and, the experiment budget
 * spent, stops the study; the schedule then ends by itself and prints the
 * stop's report (text and --json) with its exit code. `--once fast` runs the
 * fast loop alone: a sample-ratio mismatch in the A/A is a stop it makes at
 * once (calibration_invalid, exit 1), without the slow loop.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createIdeasProposer } from '../src/online/proposers/ideas-proposer.ts';
import { openOnlineStudy } from '../src/online/study/online-study.ts';
import { runSlowLoopStep } from '../src/online/study/slow-loop.ts';
import { openDatabase } from '../src/storage/database.ts';
import { kloop } from './cli-in-process.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

/** An online study whose fast loop ticks every second and slow loop every 2 s; a scraper printing one reply of unit u1. */
function study(extra = ''): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-schedule-'));
  folders.push(folder);
  writeFileSync(
    path.join(folder, 'kloop.yaml'),
    `mode: online\nartifact: strategy.md\nmetrics:\n  primary: reply_rate\n  attributionWindow: 1h\n  windows: { minUnitsPerArm: 100 }\n  scraper: { command: [node, scrape.mjs] }\nschedule: { fast: "* * * * * *", slow: "*/2 * * * * *" }\n${extra}`,
  );
  writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- Ask one question.\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  const at = new Date(Date.now() - 2 * 86_400_000 + 60_000).toISOString();
  writeFileSync(
    path.join(folder, 'scrape.mjs'),
    `console.log(JSON.stringify({ unit: 'u1', metric: 'reply_rate', value: 1, at: '${at}' }));\n`,
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

async function scheduleRuns(folder: string): Promise<Array<{ loop: string; outcome: string }>> {
  const db = await openDatabase(path.join(folder, '.kloop', 'kloop.db'), { readonly: true });
  try {
    return await db.selectFrom('schedule_runs').select(['loop', 'outcome']).orderBy('id').execute();
  } finally {
    await db.destroy();
  }
}

describe('kloop schedule on an online study', () => {
  it("runs both loops on their cadences until the study stops, then prints the stop's report (--json, exit 0)", async () => {
    const folder = study('stopping: { maxExperiments: 0 }\n');
    await calibrationTraffic(folder);
    const result = await kloop('schedule', folder, '--json');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      exitCode: number;
      stopped: { reason: string };
      experiments: Array<{ id: number; status: string }>;
    };
    expect([
      report.exitCode,
      report.stopped.reason,
      report.experiments.map((experiment) => [experiment.id, experiment.status]),
    ]).toEqual([0, 'max_experiments', [[1, 'calibrated']]]);
    const runs = await scheduleRuns(folder);
    // The slow loop made the stop; the fast loop ran the scraper on its own cadence (every run ok).
    expect(runs.filter((run) => run.loop === 'slow').at(-1)).toEqual({ loop: 'slow', outcome: 'ok' });
    expect(new Set(runs.map((run) => run.outcome))).toEqual(new Set(['ok']));
    const handle = await openOnlineStudy(folder);
    try {
      expect(await handle.db.selectFrom('outcomes').select(['unit', 'source']).execute()).toEqual([
        { unit: 'u1', source: 'scraper' },
      ]);
      await expect(handle.assign('late')).rejects.toThrow(/the online study has stopped \(max_experiments\)/);
    } finally {
      await handle.close();
    }
    // A study already stopped: the next schedule prints the same stop at once (text).
    const again = await kloop('schedule', folder);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /^stop reason: max_experiments \(the experiment budget \(stopping.maxExperiments\) is spent\)/m,
    );
  }, 60_000);

  it('--once fast: a sample-ratio mismatch in the A/A stops the study at once (calibration_invalid, exit 1) with its report', async () => {
    const folder = study();
    await calibrationTraffic(folder, true);
    const result = await kloop('schedule', folder, '--once', 'fast', '--json');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      exitCode: number;
      stopped: { reason: string };
      runs: Array<{ loop: string; outcome: string; detail: { action: string } }>;
      experiments: Array<{ status: string; reason: string }>;
    };
    expect([
      report.exitCode,
      report.stopped.reason,
      report.experiments[0]!.status,
      report.experiments[0]!.reason,
    ]).toEqual([1, 'calibration_invalid', 'invalid', 'srm']);
    expect(report.runs.map((run) => [run.loop, run.outcome, run.detail.action])).toEqual([['fast', 'ok', 'srm']]);
  });

  it('--once fast with a scraper that crashes: the run is failed (exit 1), nothing is stored and the cursor stays', async () => {
    const folder = study();
    await calibrationTraffic(folder);
    writeFileSync(
      path.join(folder, 'scrape.mjs'),
      "console.log(JSON.stringify({ unit: 'u1', metric: 'reply_rate', value: 1, at: new Date(Date.now() - 86400000).toISOString() })); process.exit(3);\n",
    );
    const result = await kloop('schedule', folder, '--once', 'fast', '--json');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      exitCode: number;
      runs: Array<{ outcome: string; detail: { scraper: { error: string } } }>;
    };
    expect([report.exitCode, report.runs[0]!.outcome]).toEqual([1, 'failed']);
    expect(report.runs[0]!.detail.scraper.error).toMatch(
      /^the metric scraper exited with code 3; nothing was stored, the cursor stays at 1970-01-01T00:00:00.000Z$/,
    );
    const handle = await openOnlineStudy(folder);
    try {
      expect(await handle.db.selectFrom('outcomes').selectAll().execute()).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('--once refuses a loop an online study does not have (exit 2)', async () => {
    const result = await kloop('schedule', study(), '--once', 'C');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown loop "c": an online study has two loops: use fast, slow or all');
    const model = await kloop('schedule', study(), '--model', 'openai:gpt-4.1-mini');
    expect([model.code, model.stderr.includes('--model applies to offline studies only')]).toEqual([2, true]);
  });
});
