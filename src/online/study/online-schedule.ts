/**
 * The two-speed schedule of an online study (`kloop schedule` on a
 * `mode: online` study; docs/online.md):
 *
 * | loop   | what runs                                                        | cadence (kloop.yaml)            |
 * |--------|------------------------------------------------------------------|---------------------------------|
 * | `fast` | the scraper; harm and sample-ratio stops; ramp steps (`runFastLoopStep`) | `schedule.fast` (hourly)  |
 * | `slow` | the scraper; decide what is ripe; ask the proposer; start the next experiment (`runSlowLoopStep`, one `kloop run`) | `schedule.slow` (daily 00:00) |
 *
 * The two jobs never run at once (one queue for both), and each holds the
 * study's lease while it runs, so a `kloop run` in progress makes a tick
 * `skipped` (and a tick makes `kloop run` exit 3). Runs are recorded in
 * `schedule_runs` (loop `fast` or `slow`) by src/schedule/schedule.ts, whose
 * scheduler (croner, or a manual clock in tests) fires the cadences.
 */
import { acquireLease, releaseLease, StudyBusyError } from '../../storage/lease.ts';
import type { LoopJobResult, ScheduledLoop } from '../../schedule/schedule.ts';
import type { OnlineProposer } from '../proposers/ideas-proposer.ts';
import { runScraper } from '../scraper/run-scraper.ts';
import { runFastLoopStep, type FastLoopReport } from './fast-loop.ts';
import type { OnlineStudy } from './online-study.ts';
import { runSlowLoopStep, type SlowLoopReport } from './slow-loop.ts';

/** Options of {@link createOnlineLoops}. */
export interface OnlineLoopsOptions {
  /** Hold the study's lease during each run (a `kloop run` in progress makes the tick `skipped`). Default true. */
  useLease?: boolean;
  /** Called after every slow step with its report (the CLI prints the report of the step that stopped the study). */
  onSlowReport?: (report: SlowLoopReport) => void;
  /** Called after every fast step with its report. */
  onFastReport?: (report: FastLoopReport) => void;
}

/** The fast and slow loops of an online study as scheduled jobs, with the cadences of its `schedule` section (`fast: off` leaves it on no cadence). */
export function createOnlineLoops(
  study: OnlineStudy,
  proposer: OnlineProposer,
  options: OnlineLoopsOptions = {},
): ScheduledLoop[] {
  let queue: Promise<unknown> = Promise.resolve();
  // One job at a time: the fast and the slow loop both look at the running experiment.
  const serialized = <T>(job: () => Promise<T>): Promise<T> => {
    const run = queue.then(job, job);
    queue = run.catch(() => undefined);
    return run;
  };
  const underLease = async (job: () => Promise<LoopJobResult>): Promise<LoopJobResult> => {
    if (options.useLease === false) return job();
    let lease;
    try {
      lease = await acquireLease(study.db, { studyKey: study.config.dir });
    } catch (error) {
      if (StudyBusyError.isInstance(error)) return { outcome: 'skipped', detail: { note: error.message } };
      throw error;
    }
    try {
      return await job();
    } finally {
      await releaseLease(study.db, lease);
    }
  };
  const fast = (): Promise<LoopJobResult> =>
    serialized(() =>
      underLease(async () => {
        const report = await runFastLoopStep(study);
        options.onFastReport?.(report);
        return fastJobResult(report);
      }),
    );
  const slow = (): Promise<LoopJobResult> =>
    serialized(() =>
      underLease(async () => {
        const scrape = await runScraper(study);
        const report = await runSlowLoopStep(study, proposer);
        options.onSlowReport?.(report);
        return {
          outcome: scrape?.outcome === 'failed' ? 'failed' : 'ok',
          detail: {
            at: report.at,
            decided: report.decided,
            started: report.started,
            activeVersionId: report.activeVersionId,
            ...(scrape?.outcome === 'failed' ? { scraper: { error: scrape.error } } : {}),
            ...(report.stopped === undefined ? {} : { stopped: report.stopped.reason }),
          },
        };
      }),
    );
  const cadences = study.config.schedule;
  return [
    { name: 'fast', pattern: cadences.fast === 'off' ? null : cadences.fast, run: fast },
    { name: 'slow', pattern: cadences.slow, run: slow },
  ];
}

/** A fast step's report as the schedule records it (`failed` when its scraper failed). */
function fastJobResult(report: FastLoopReport): LoopJobResult {
  const failed = report.scraper?.outcome === 'failed';
  return {
    outcome: failed ? 'failed' : 'ok',
    detail: {
      at: report.at,
      looked: report.looked,
      action: report.action,
      ...(report.scraper === undefined
        ? {}
        : {
            scraper:
              report.scraper.outcome === 'ok'
                ? {
                    stored: report.scraper.stored,
                    duplicates: report.scraper.duplicates,
                    refused: report.scraper.refused,
                  }
                : { error: report.scraper.error },
          }),
      ...(report.running === null ? {} : { units: report.running.units }),
      ...(report.stopped === undefined ? {} : { stopped: report.stopped.reason }),
    },
  };
}
