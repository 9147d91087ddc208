/**
 * `kloop view` on an online study: `GET /api/online` returns every
 * experiment's standing with the series of its looks, as the notebook stored
 * them when the gate looked (`online_looks`, migration 0010). On a short
 * SIMULATED run of examples/outreach (seed 7, 9 simulated days, run through
 * the CLI): the series equals the stored rows, each decision-window look's
 * units and means are what the stored exposures and outcomes give at that
 * look's time, and the A/A calibration's deciding look has its exact values.
 * The page itself is drawn in Chromium by tests/view-browser.test.ts.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOnlineConfig } from '../src/online/config.ts';
import { loadOnlineView, type OnlineView } from '../src/online/study/online-view.ts';
import { openDatabase } from '../src/storage/database.ts';
import { type StudyDatabase } from '../src/storage/study-database.ts';
import { armStatistics } from '../src/storage/online-store.ts';
import { createViewApp } from '../src/view/view-server.ts';
import { kloop } from './cli-in-process.ts';

const repo = path.resolve(import.meta.dirname, '..');
let folder: string;
let study: string;
let db: StudyDatabase;
let view: OnlineView;

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-view-'));
  study = path.join(folder, 'outreach');
  cpSync(path.join(repo, 'examples', 'outreach'), study, {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}.kloop`),
  });
  const run = await kloop('run', study, '--simulate', '--days', '9', '--quiet', '--json');
  expect(run.code, run.stderr).toBe(0);
  db = await openDatabase(path.join(study, '.kloop', 'simulated.db'), { readonly: true });
  const config = loadOnlineConfig(study);
  const app = createViewApp({
    db,
    studyDir: study,
    token: null,
    simulated: true,
    loadOnline: () => loadOnlineView(db, config, { simulated: true }),
  });
  try {
    const response = await app.app.request('/api/online', { headers: { Host: '127.0.0.1' } });
    expect(response.status).toBe(200);
    view = (await response.json()) as OnlineView;
    const about = (await (await app.app.request('/api/study', { headers: { Host: '127.0.0.1' } })).json()) as {
      online: boolean;
      simulated: boolean;
      writable: boolean;
    };
    expect([about.online, about.simulated]).toEqual([true, true]);
  } finally {
    app.close();
  }
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  rmSync(folder, { recursive: true, force: true });
});

describe('GET /api/online on a simulated outreach run', () => {
  it('lists the experiments with arms, units, lift and interval, labelled simulated', () => {
    expect([view.mode, view.simulated, view.at, view.primary.name, view.stopped]).toEqual([
      'online',
      true,
      '2026-01-14T00:00:00.000Z',
      'reply_rate',
      null,
    ]);
    expect(
      view.experiments.map((experiment) => [experiment.id, experiment.kind, experiment.status, experiment.reason]),
    ).toEqual([
      [1, 'aa', 'calibrated', 'calibrated'],
      [2, 'ab', 'decision', null],
    ]);
    const calibration = view.experiments[0]!;
    expect(calibration.primary).toEqual({
      metric: 'reply_rate',
      incumbentMean: 284 / 6060,
      candidateMean: 319 / 5940,
      delta: 319 / 5940 - 284 / 6060,
      relativeLift: (319 / 5940 - 284 / 6060) / (284 / 6060),
      interval: { lower: -0.005276, upper: 0.018954, level: 0.95 },
      analysedUnits: 12000,
    });
  });

  it('returns the series of looks exactly as stored in online_looks', async () => {
    const rows = await db.selectFrom('online_looks').selectAll().orderBy('experiment_id').orderBy('look').execute();
    expect(
      view.experiments.flatMap((experiment) =>
        experiment.series.map((look) => [
          experiment.id,
          look.look,
          look.at,
          look.units.incumbent,
          look.units.candidate,
          look.delta,
          look.interval?.lower ?? null,
          look.outcome,
        ]),
      ),
    ).toEqual(
      rows.map((row) => [
        row.experiment_id,
        row.look,
        row.at,
        row.incumbent_units,
        row.candidate_units,
        row.delta,
        row.lower,
        row.outcome,
      ]),
    );
    // One look a simulated day from the day after each experiment started; the A/A decided at its 4th look.
    expect(view.experiments.map((experiment) => experiment.series.map((look) => look.at.slice(5, 10)))).toEqual([
      ['01-06', '01-07', '01-08', '01-09'],
      ['01-10', '01-11', '01-12', '01-13', '01-14'],
    ]);
    expect(view.experiments[0]!.series.at(-1)).toEqual({
      look: 4,
      at: '2026-01-09T00:00:00.000Z',
      window: 'decision',
      units: { incumbent: 6060, candidate: 5940 },
      incumbentMean: 284 / 6060,
      candidateMean: 319 / 5940,
      delta: 319 / 5940 - 284 / 6060,
      interval: { lower: -0.005276, upper: 0.018954, level: 0.95 },
      pValue: expect.closeTo(0.797873, 6) as unknown as number,
      outcome: 'calibrated',
      reason: null,
      checks: [
        { name: 'srm', verdict: 'pass' },
        { name: 'harm', verdict: 'pass' },
        { name: 'minimum_units', verdict: 'pass' },
        { name: 'primary', verdict: 'wait' },
      ],
    });
  });

  it('each decision-window look holds what the stored exposures and outcomes give at its time', async () => {
    let checked = 0;
    for (const experiment of view.experiments) {
      for (const look of experiment.series.filter((entry) => entry.window === 'decision')) {
        const arms = await armStatistics(db, {
          experimentId: experiment.id,
          metric: 'reply_rate',
          kind: 'binary',
          window: 'decision',
          closedBy: look.at,
        });
        expect([look.units.incumbent, look.units.candidate, look.incumbentMean, look.candidateMean]).toEqual([
          arms.incumbent.units,
          arms.candidate.units,
          arms.incumbent.units === 0 ? 0 : arms.incumbent.sum / arms.incumbent.units,
          arms.candidate.units === 0 ? 0 : arms.candidate.sum / arms.candidate.units,
        ]);
        checked += 1;
      }
    }
    expect(checked).toBe(9);
    // The units grow look by look: every look counts the attribution windows (48 h) closed by then, none at the first.
    const units = view.experiments[1]!.series.map((look) => look.units.incumbent + look.units.candidate);
    expect(units).toEqual([...units].sort((a, b) => a - b));
    expect([units[0], units.at(-1)! > 0]).toEqual([0, true]);
  });
});

describe('kloop view --simulated', () => {
  it('refuses an offline study and an online study with no simulated run (exit 2)', async () => {
    const offline = await kloop('view', path.join(repo, 'examples', 'intent'), '--simulated', '--port', '0');
    expect([offline.code, offline.stderr.includes('--simulated applies to online studies only')]).toEqual([2, true]);
    const fresh = path.join(folder, 'fresh');
    cpSync(path.join(repo, 'examples', 'outreach'), fresh, {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}.kloop`),
    });
    const none = await kloop('view', fresh, '--simulated', '--port', '0');
    expect([none.code, none.stderr.includes('no simulated run yet')]).toEqual([2, true]);
  });
});
