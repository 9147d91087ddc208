/**
 * `kloop run <study> --simulate`: the production app of an online study,
 * played against the **simulated** cold-email audience
 * (src/online/simulation/audience-world.ts) on a simulated clock, offline.
 *
 * Each simulated day, in hourly ticks: the day's recipients
 * (`unitsPerDay`, with the audience's weekday traffic) are spread over the
 * working hours; each hour's batch is assigned through the study handle as a
 * sending app does (`study.assignMany`, which records the exposures), "sent" the variant it
 * got, and the audience decides whether and when it replies or
 * unsubscribes; every outcome is sent back as an NDJSON line once its
 * simulated time has come (the path of `POST /outcomes`). The slow loop runs
 * once a day at midnight. Nothing reaches the network and no model is
 * called unless the study's proposer is `reflective` (its model writes the
 * variants); a month of traffic takes seconds.
 *
 * The notebook is `.kloop/simulated.db` in the study folder, made afresh
 * each run (the study's real notebook is never touched), so a run is exact
 * for its seed.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../storage/database.ts';
import { loadOnlineConfig } from '../config.ts';
import { createOnlineProposer } from '../proposers/online-proposer.ts';
import { createAudienceWorld, DAY_MS, HOUR_MS, unitsOnDay } from '../simulation/audience-world.ts';
import { createOnlineStudy } from '../study/online-study.ts';
import { runSlowLoopStep, type SlowLoopReport } from '../study/slow-loop.ts';

/** Default simulated days of `--simulate`. */
export const DEFAULT_SIMULATED_DAYS = 42;
/** Default mean recipients per simulated day. */
export const DEFAULT_SIMULATED_UNITS_PER_DAY = 5000;
/** The simulated clock's first day: Monday 5 January 2026, 00:00 UTC. */
export const SIMULATION_START_MS = Date.UTC(2026, 0, 5);
/** Hours of a simulated day in which emails are sent (08:00 to 17:59 UTC). */
const SENDING_HOURS = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17];

/** Settings of a simulated run. */
export interface SimulateOptions {
  /** Simulated days (default 42). */
  days?: number;
  /** Mean recipients per day (default 5000). */
  unitsPerDay?: number;
  /** Seed of the audience (default the study's `seed`). */
  seed?: number;
  /** Called after each daily slow-loop step. */
  onStep?: (report: SlowLoopReport, day: number) => void;
}

/** What a simulated run did. */
export interface SimulationResult {
  simulated: true;
  days: number;
  units: number;
  outcomes: { stored: number; duplicates: number; refused: number };
  /** The last slow-loop step's report. */
  report: SlowLoopReport;
  /** The notebook file of the run. */
  notebook: string;
}

/** The notebook of a simulated run: `.kloop/simulated.db`, removed first. */
function freshNotebook(studyDir: string): string {
  const folder = path.join(studyDir, '.kloop');
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'simulated.db');
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) rmSync(file + suffix);
  return file;
}

/** Runs the study against the simulated audience (see the module's description). */
export async function simulateOnlineStudy(studyDir: string, options: SimulateOptions = {}): Promise<SimulationResult> {
  const config = loadOnlineConfig(studyDir);
  const days = options.days ?? DEFAULT_SIMULATED_DAYS;
  const world = createAudienceWorld({ seed: options.seed ?? config.seed });
  const notebook = freshNotebook(config.dir);
  const db = await openDatabase(notebook);
  const clock = { now: SIMULATION_START_MS };
  const study = createOnlineStudy(config, db, () => new Date(clock.now));
  const proposer = await createOnlineProposer(config, { db }).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const pending: { unit: string; metric: string; value: number; at: number }[] = [];
  const totals = { stored: 0, duplicates: 0, refused: 0 };
  let units = 0;
  const deliver = async (): Promise<void> => {
    const due = pending.filter((outcome) => outcome.at <= clock.now);
    if (due.length === 0) return;
    const waiting = pending.filter((outcome) => outcome.at > clock.now);
    pending.splice(0, pending.length, ...waiting);
    const lines = due.map((outcome) =>
      JSON.stringify({
        unit: outcome.unit,
        metric: outcome.metric,
        value: outcome.value,
        at: new Date(outcome.at).toISOString(),
      }),
    );
    const batch = await study.recordOutcomeLines(lines.join('\n'), 'simulated');
    totals.stored += batch.stored;
    totals.duplicates += batch.duplicates;
    totals.refused += batch.refused.length;
  };
  let report: SlowLoopReport | undefined;
  try {
    for (let day = 0; day < days; day += 1) {
      const dayStart = SIMULATION_START_MS + day * DAY_MS;
      clock.now = dayStart;
      await deliver();
      report = await runSlowLoopStep(study, proposer);
      options.onStep?.(report, day);
      if (report.stopped !== undefined) break;
      const count = unitsOnDay(dayStart, options.unitsPerDay ?? DEFAULT_SIMULATED_UNITS_PER_DAY);
      for (let hour = 0; hour < 24; hour += 1) {
        const hourStart = dayStart + hour * HOUR_MS;
        const index = SENDING_HOURS.indexOf(hour);
        if (index >= 0) {
          const inHour =
            Math.floor(((index + 1) * count) / SENDING_HOURS.length) -
            Math.floor((index * count) / SENDING_HOURS.length);
          // The app sends the hour's batch at the top of the hour: one assignment call for the batch.
          clock.now = hourStart;
          const batch = Array.from({ length: inHour }, (_, slot) => `sim-d${day}-r${units + slot}`);
          units += inHour;
          const assignments = await study.assignMany(batch);
          assignments.forEach((assignment, slot) => {
            for (const outcome of world.outcomesFor(batch[slot]!, assignment.text, clock.now))
              pending.push({ unit: batch[slot]!, ...outcome });
          });
        }
        clock.now = hourStart + HOUR_MS - 1;
        await deliver();
      }
    }
    clock.now = SIMULATION_START_MS + days * DAY_MS;
    await deliver();
    report = await runSlowLoopStep(study, proposer);
  } finally {
    await study.close();
  }
  return { simulated: true, days, units, outcomes: totals, report, notebook };
}
