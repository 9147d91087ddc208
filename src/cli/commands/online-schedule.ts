/**
 * `kloop schedule <study>` on a `mode: online` study: the fast loop and the
 * slow loop on the cadences of `schedule` in kloop.yaml
 * (src/online/study/online-schedule.ts) until the study stops (its report
 * is printed, text or `--json`, with its exit code: src/online/study/stop-reasons.ts)
 * or Ctrl-C / SIGTERM (the report of where it stands, exit 0). `--once
 * fast|slow|all` runs the loops once now and exits (for a system crontab).
 * One `kloop schedule` per study: a second one exits 3.
 */
import { InputError } from '../../errors.ts';
import { createOnlineProposer } from '../../online/proposers/online-proposer.ts';
import { createOnlineLoops } from '../../online/study/online-schedule.ts';
import type { OnlineStudy } from '../../online/study/online-study.ts';
import { openOnlineStudy } from '../../online/study/online-study.ts';
import { currentReport } from '../../online/study/slow-loop.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import type { OnlineLoopName, ScheduleRunRecord } from '../../schedule/schedule.ts';
import { createCronScheduler, startSchedule } from '../../schedule/schedule.ts';
import { print, printJson, progress, table } from '../output.ts';
import type { SessionContext } from '../session/session-runner.ts';
import { runSession } from '../session/session-runner.ts';
import { onlineExitCode, slowLoopReportLines } from './online-report.ts';

/** Parses `--once` for an online study: `all`, `fast`, `slow`, or `fast,slow`. */
export function parseOnlineLoopList(value: string): OnlineLoopName[] {
  const words =
    value.trim().toLowerCase() === 'all' ? ['fast', 'slow'] : value.split(',').map((part) => part.trim().toLowerCase());
  for (const word of words) {
    if (word !== 'fast' && word !== 'slow')
      throw new InputError(`unknown loop "${word}": an online study has two loops: use fast, slow or all`, {
        field: '--once',
      });
  }
  return [...new Set(words)] as OnlineLoopName[];
}

/** Options of `kloop schedule` an online study reads. */
interface OnlineScheduleOptions {
  once?: string;
  json?: boolean;
  quiet?: boolean;
}

/** Runs `kloop schedule` on an online study, in a session of the session runner (src/cli/session/session-runner.ts); sets `process.exitCode`. */
export async function runOnlineSchedule(studyDir: string, options: OnlineScheduleOptions): Promise<void> {
  const once = options.once === undefined ? undefined : parseOnlineLoopList(options.once);
  const study = await openOnlineStudy(studyDir);
  const proposer = await createOnlineProposer(study.config, { db: study.db }).catch(async (error: unknown) => {
    await study.close();
    throw error;
  });
  await runSession(
    {
      quiet: options.quiet === true,
      json: options.json === true,
      lease: {
        db: study.db,
        studyKey: `${study.config.dir}#schedule`,
        location: studyDatabaseLocation(study.config.dir),
        busyAdvice: 'one schedule per study: stop that one first (Ctrl-C or SIGTERM)',
      },
      // The runs in flight finish first (a second Ctrl-C quits at once).
      graceMs: null,
      close: () => study.close(),
    },
    (context) => scheduleOnlineLoops(study, proposer, once, studyDir, options, context),
  );
}

/**
 * The loops once (`--once`) or on their cadences until the study stops or
 * the session is asked to stop; then the report of where the study stands.
 * Returns 1 when a loop failed, else the study's exit code
 * (src/online/study/stop-reasons.ts).
 */
async function scheduleOnlineLoops(
  study: OnlineStudy,
  proposer: Awaited<ReturnType<typeof createOnlineProposer>>,
  once: OnlineLoopName[] | undefined,
  studyDir: string,
  options: OnlineScheduleOptions,
  context: SessionContext,
): Promise<number> {
  const quiet = options.quiet === true;
  const config = study.config;
  const stopped = new AbortController();
  const loops = createOnlineLoops(study, proposer, {
    onSlowReport: (report) => report.stopped !== undefined && stopped.abort(),
    onFastReport: (report) => report.stopped !== undefined && stopped.abort(),
  });
  const runs: ScheduleRunRecord[] = [];
  // A study that has stopped already: its report at once (nothing to schedule).
  if ((await currentReport(study)).stopped !== undefined) stopped.abort();
  const scheduler = createCronScheduler(
    config.schedule.timezone !== undefined ? { timezone: config.schedule.timezone } : {},
  );
  const running = startSchedule({
    db: study.db,
    loops:
      once === undefined
        ? loops.filter((loop) => loop.pattern !== null)
        : loops
            .filter((loop) => once.includes(loop.name as OnlineLoopName))
            .map((loop) => ({ ...loop, pattern: null })),
    scheduler,
    onEvent: (event) => {
      if (event.type === 'start') progress(`kloop: ${event.loop} loop started (run ${event.runId})`, quiet);
      else if (event.type === 'overlap')
        progress(`kloop: ${event.loop} loop still running: tick ${event.scheduledAt} skipped`, quiet);
      else progress(`kloop: ${event.loop} loop ${event.outcome}: ${JSON.stringify(event.detail)}`, quiet);
    },
  });
  if (once !== undefined) {
    for (const loop of once) runs.push(await running.runNow(loop));
  } else {
    const next = running.nextRuns();
    progress(
      `kloop: online schedule for ${config.dir}: ${Object.entries(next)
        .map(([loop, at]) => `${loop} "${loops.find((entry) => entry.name === loop)!.pattern}" next ${at ?? '—'}`)
        .join('; ')} (until the study stops, or Ctrl-C)`,
      quiet,
    );
    await context.untilStopped(stopped.signal);
    progress(
      stopped.signal.aborted
        ? 'kloop: the study stopped: ending the schedule'
        : 'kloop: stopping the schedule (runs in flight finish first)',
      quiet,
    );
  }
  await running.stop();
  return reportOnlineSchedule(study, runs, once, studyDir, options);
}

/** The report of where the study stands (with the runs of `--once`), text or `--json`; returns the exit code. */
async function reportOnlineSchedule(
  study: OnlineStudy,
  runs: ScheduleRunRecord[],
  once: OnlineLoopName[] | undefined,
  studyDir: string,
  options: OnlineScheduleOptions,
): Promise<number> {
  const report = await currentReport(study);
  const failed = runs.some((run) => run.outcome === 'failed');
  const exitCode = failed ? 1 : onlineExitCode(report);
  if (options.json === true)
    printJson({
      mode: 'online',
      simulated: false,
      study: study.config.dir,
      exitCode,
      ...(once === undefined ? {} : { runs }),
      ...report,
    });
  else {
    if (once !== undefined) {
      print(
        table([
          ['loop', 'outcome', 'detail'],
          ...runs.map((run) => [run.loop, run.outcome, JSON.stringify(run.detail)]),
        ]),
      );
      print();
    }
    for (const line of slowLoopReportLines(report, studyDir, false)) print(line);
  }
  return exitCode;
}
