/**
 * `kloop run <study>` on a `mode: online` study: one step of the slow loop
 * (src/online/study/slow-loop.ts), then the report (text, or one JSON object
 * with `--json`) and the exit code of src/online/study/stop-reasons.ts
 * (0 when an experiment keeps running). One step at a time per study: it
 * holds the study's lease (a second run exits 3, or waits with `--wait`), in a
 * session of the session runner (src/cli/session/session-runner.ts). `--simulate` plays the study against
 * the simulated audience instead (src/online/simulate/).
 */
import { InputError } from '../../errors.ts';
import { createOnlineProposer } from '../../online/proposers/online-proposer.ts';
import type { OnlineStudy } from '../../online/study/online-study.ts';
import { openOnlineStudy } from '../../online/study/online-study.ts';
import { runSlowLoopStep } from '../../online/study/slow-loop.ts';
import { runScraper } from '../../online/scraper/run-scraper.ts';
import { print, printJson } from '../output.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import { runSession } from '../session/session-runner.ts';
import { onlineExitCode, slowLoopReportLines } from './online-report.ts';

/** Options of `kloop run` an online study reads. */
export interface OnlineRunOptions {
  json?: boolean;
  quiet?: boolean;
  simulate?: boolean;
  wait?: boolean;
  seed?: number;
  days?: number;
}

/** Runs `kloop run` on an online study; sets `process.exitCode`. */
export async function runOnlineCommand(
  studyDir: string,
  options: OnlineRunOptions & {
    calibrate?: unknown;
    maxExperiments?: unknown;
    loop?: unknown;
    workers?: unknown;
    batchSize?: unknown;
    git?: unknown;
  },
): Promise<void> {
  // Options of the offline loop would do nothing here: refused, never ignored.
  for (const [key, flag] of [
    ['calibrate', '--calibrate'],
    ['maxExperiments', '--max-experiments'],
    ['loop', '--loop'],
    ['workers', '--workers'],
    ['batchSize', '--batch-size'],
    ['git', '--git'],
  ] as const) {
    if (options[key] !== undefined)
      throw new InputError(
        `${flag} applies to offline studies only; this is an online study (mode: online): docs/online.md`,
        { field: flag },
      );
  }
  if (options.simulate === true) {
    const { runSimulateCommand } = await import('./online-simulate.ts');
    return runSimulateCommand(studyDir, options);
  }
  if (options.days !== undefined)
    throw new InputError('--days sets the length of a --simulate run: give --simulate too', { field: '--days' });
  const study = await openOnlineStudy(studyDir);
  // One slow-loop step at a time per study (a second `kloop run` exits 3, or waits with --wait): two steps at once could start two experiments.
  await runSession(
    {
      quiet: options.quiet === true,
      json: options.json === true,
      lease: {
        db: study.db,
        studyKey: study.config.dir,
        location: studyDatabaseLocation(study.config.dir),
        wait: options.wait === true,
      },
      close: () => study.close(),
    },
    () => runSlowLoopCommandStep(study, studyDir, options),
  );
}

/** One step: the scraper's outcomes, then the slow loop's step and its report; returns the exit code. */
async function runSlowLoopCommandStep(
  study: OnlineStudy,
  studyDir: string,
  options: OnlineRunOptions,
): Promise<number> {
  // The fast loop's part first: outcomes from the metric scraper, when the study has one.
  const scrape = await runScraper(study);
  const report = await runSlowLoopStep(study, await createOnlineProposer(study.config, { db: study.db }));
  // A failed scrape is a problem, not a result: exit 1 once the step's report is printed.
  const exitCode = scrape?.outcome === 'failed' ? 1 : onlineExitCode(report);
  if (options.json === true)
    printJson({
      mode: 'online',
      simulated: false,
      study: study.config.dir,
      exitCode,
      ...(scrape === undefined ? {} : { scraper: scrape }),
      ...report,
    });
  else {
    if (scrape !== undefined)
      print(
        scrape.outcome === 'ok'
          ? `scraper: ${scrape.stored} outcomes stored, ${scrape.duplicates} already stored, ${scrape.refused} refused (since ${scrape.since}; cursor now ${scrape.cursor})`
          : `scraper: FAILED — ${scrape.error}`,
      );
    for (const issue of scrape?.outcome === 'ok' ? scrape.issues : [])
      print(`  scraper line ${issue.line}: ${issue.reason}`);
    for (const line of slowLoopReportLines(report, studyDir, false)) print(line);
  }
  return exitCode;
}
