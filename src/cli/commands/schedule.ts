/**
 * `kloop schedule <study>`: the two-speed schedule. The fast loop (B) and
 * the slow analyses (A, C, D) run on the cadences of `schedule` in
 * `kloop.yaml` until Ctrl-C or SIGTERM; every run is recorded in
 * `schedule_runs`. `--once <loops>` runs loops once, now, and exits (for a
 * system crontab). One `kloop schedule` per study: a second one refuses
 * (exit 3). See src/schedule/schedule.ts and docs/loops-c-d.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { studyModeOf } from '../../online/config.ts';
import { InputError } from '../../errors.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import { loadStudyAsync } from '../../study/load-study.ts';
import type { LoopName, ScheduleRunRecord } from '../../schedule/schedule.ts';
import { createCronScheduler, createStudyLoops, LOOP_NAMES, startSchedule } from '../../schedule/schedule.ts';
import { print, printJson, progress, table } from '../output.ts';
import type { ModelOptions, StudySession } from './study-session.ts';
import { addModelOptions, openStudy } from './study-session.ts';
import { EXIT } from '../session/exit-codes.ts';
import type { SessionContext } from '../session/session-runner.ts';
import { runSession } from '../session/session-runner.ts';

/** Parses `--once`: `all`, `fast` (B), `slow` (A, C, D) or a comma list of A, B, C, D. */
export function parseLoopList(value: string): LoopName[] {
  const word = value.trim().toLowerCase();
  if (word === 'all') return [...LOOP_NAMES];
  if (word === 'fast') return ['B'];
  if (word === 'slow') return ['A', 'C', 'D'];
  const loops = value.split(',').map((part) => part.trim().toUpperCase());
  for (const loop of loops) {
    if (!(LOOP_NAMES as readonly string[]).includes(loop)) {
      throw new InputError(`unknown loop "${loop}": use all, fast, slow or a comma list of ${LOOP_NAMES.join(', ')}`, {
        field: '--once',
      });
    }
  }
  return [...new Set(loops)] as LoopName[];
}

function describeRun(run: ScheduleRunRecord): string {
  return `loop ${run.loop} ${run.outcome}: ${JSON.stringify(run.detail)}`;
}

export function registerScheduleCommand(program: Command): void {
  addModelOptions(
    program
      .command('schedule')
      .description(
        'Run the fast loop (B) and the slow analyses (A, C, D) on the cadences of `schedule` in kloop.yaml, without overlaps.',
      )
      .argument('<study>', 'study folder')
      .option(
        '--once <loops>',
        'run these loops once now and exit: all, fast, slow, or e.g. C,D (an online study: all, fast or slow)',
      )
      .option('--json', 'with --once: print one JSON object on stdout')
      .option('--quiet', 'no progress lines on stderr'),
  ).action(scheduleCommand);
}

/** Options of `kloop schedule`. */
type ScheduleOptions = ModelOptions & { once?: string; json?: boolean; quiet?: boolean };

/**
 * `kloop schedule`'s action: an online study's schedule (./online-schedule.ts),
 * or the offline loops in a session of the session runner
 * (src/cli/session/session-runner.ts), holding the study's schedule lease.
 */
async function scheduleCommand(studyDir: string, options: ScheduleOptions): Promise<void> {
  // An online study (mode: online) has its own two loops: fast and slow (src/cli/commands/online-schedule.ts).
  if (existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online') {
    refuseOfflineFlags(options);
    return (await import('./online-schedule.ts')).runOnlineSchedule(studyDir, options);
  }
  const once = options.once !== undefined ? parseLoopList(options.once) : undefined;
  const session = await openStudy(studyDir, options);
  const study = session.study;
  await runSession(
    {
      quiet: options.quiet === true,
      json: options.json === true,
      // One schedule per study; `schedule` has no --wait, so the CLI's usual advice would mislead.
      lease: {
        db: session.db,
        studyKey: `${study.dir}#schedule`,
        location: studyDatabaseLocation(study.dir),
        busyAdvice: 'one schedule per study: stop that one first (Ctrl-C or SIGTERM)',
      },
      // The runs in flight are asked to stop, and finish (a second Ctrl-C quits at once).
      graceMs: null,
      close: () => session.close(),
    },
    async (context) => {
      const schedule = study.config?.schedule;
      const scheduler = createCronScheduler(schedule?.timezone !== undefined ? { timezone: schedule.timezone } : {});
      const loops = createStudyLoops(
        { db: session.db, loadStudy: () => loadStudyAsync(study.dir, session.plugins) },
        schedule,
      );
      const setting = { session, loops, scheduler, options, context };
      return once !== undefined ? runLoopsOnce(setting, once) : runOnCadence(setting);
    },
  );
}

/** The model flags of offline studies would do nothing on an online study: refused, never ignored (the online proposer's model is proposer: in kloop.yaml). */
function refuseOfflineFlags(options: ScheduleOptions): void {
  for (const [key, flag] of [
    ['model', '--model'],
    ['baseUrl', '--base-url'],
    ['proposerBaseUrl', '--proposer-base-url'],
    ['maxCostUsd', '--max-cost-usd'],
    ['maxTokens', '--max-tokens'],
    ['deterministic', '--deterministic'],
  ] as const) {
    if (options[key] !== undefined)
      throw new InputError(
        `${flag} applies to offline studies only; an online study's proposer and its budget are proposer: and stopping.maxCostUsd in kloop.yaml (docs/online.md)`,
        { field: flag },
      );
  }
}

/** What the schedule's two ways of running share. */
interface ScheduleSetting {
  session: StudySession;
  loops: ReturnType<typeof createStudyLoops>;
  scheduler: ReturnType<typeof createCronScheduler>;
  options: ScheduleOptions;
  context: SessionContext;
}

/**
 * `--once`: every requested loop runs now, whatever its cadence (even
 * "off"); nothing is put on a cadence. An interrupt asks the run in flight
 * to stop and runs no further loop. Returns 1 when a loop failed, 130 when
 * interrupted, else 0.
 */
async function runLoopsOnce(setting: ScheduleSetting, once: readonly LoopName[]): Promise<number> {
  const { session, options, context } = setting;
  const quiet = options.quiet === true;
  const running = startSchedule({
    db: session.db,
    loops: setting.loops
      .filter((loop) => (once as readonly string[]).includes(loop.name))
      .map((loop) => ({ ...loop, pattern: null })),
    scheduler: setting.scheduler,
  });
  context.signal.addEventListener('abort', () => void running.stop(), { once: true });
  const runs: ScheduleRunRecord[] = [];
  for (const loop of once) {
    if (context.interrupted) break;
    progress(`kloop: running loop ${loop}`, quiet);
    const run = await running.runNow(loop);
    runs.push(run);
    progress(`kloop: ${describeRun(run)}`, quiet);
  }
  await running.stop();
  if (options.json === true) printJson({ runs });
  else
    print(
      table([['loop', 'outcome', 'detail'], ...runs.map((run) => [run.loop, run.outcome, JSON.stringify(run.detail)])]),
    );
  if (runs.some((run) => run.outcome === 'failed')) return EXIT.failed;
  return context.interrupted ? EXIT.interrupted : EXIT.ok;
}

/** The loops on their cadences until Ctrl-C, SIGTERM or a closed output; then the runs in flight are asked to stop (exit 0). */
async function runOnCadence(setting: ScheduleSetting): Promise<number> {
  const { session, options, context } = setting;
  const quiet = options.quiet === true;
  const study = session.study;
  const scheduled = setting.loops.filter((loop) => loop.pattern !== null);
  if (scheduled.length === 0)
    throw new InputError('every loop is "off" in schedule.loops: nothing to schedule', {
      file: study.config?.configPath ?? study.dir,
      field: 'schedule.loops',
    });
  const running = startSchedule({
    db: session.db,
    loops: scheduled,
    scheduler: setting.scheduler,
    onEvent: (event) => {
      if (event.type === 'start') progress(`kloop: loop ${event.loop} started (run ${event.runId})`, quiet);
      else if (event.type === 'overlap')
        progress(`kloop: loop ${event.loop} still running: tick ${event.scheduledAt} skipped`, quiet);
      else progress(`kloop: loop ${event.loop} ${event.outcome}: ${JSON.stringify(event.detail)}`, quiet);
    },
  });
  const next = running.nextRuns();
  progress(
    `kloop: schedule for ${study.dir}: ${scheduled.map((loop) => `${loop.name} "${loop.pattern}" next ${next[loop.name] ?? '—'}`).join('; ')} (Ctrl-C to stop)`,
    quiet,
  );
  await context.untilStopped();
  progress('kloop: stopping the schedule (runs in flight are asked to stop)', quiet);
  await running.stop();
  return EXIT.ok;
}
