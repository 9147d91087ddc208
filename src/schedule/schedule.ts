/**
 * The two-speed schedule (seeds/002, "Two-Speed Schedule"; DESIGN.md §5):
 * the fast loop runs often, the slow analyses run in batches.
 *
 * | loop | what runs                                   | default cadence          |
 * |------|---------------------------------------------|--------------------------|
 * | B    | the optimization loop (`runStudy`)          | `schedule.fast` (hourly) |
 * | A    | Loop A (`runLoopA`, when the module exists) | `schedule.slow` (Mon 03:00) |
 * | C    | pattern mining → review queue               | `schedule.slow`          |
 * | D    | production-signal report → review queue     | `schedule.slow`          |
 *
 * `schedule.loops.{A,B,C,D}` override a loop's cadence ("off" disables it).
 *
 * No run of a loop overlaps another run of the same loop: croner's `protect`
 * skips a tick while its callback runs, and an in-flight guard per loop
 * (which also covers {@link RunningSchedule.runNow}) records the refused
 * tick as outcome `overlap`. Different loops may run at the same time.
 * Every run is a row of `schedule_runs`: loop, scheduled time, start, end,
 * outcome (`ok`, `failed`, `skipped`, `overlap`) and a JSON detail.
 *
 * Time is injected: a {@link Scheduler} decides when cadences fire and what
 * "now" is. {@link createCronScheduler} is the real one (croner timers);
 * {@link createManualScheduler} computes the same fire times with croner's
 * `nextRun` but only advances when told, for tests and simulations.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Cron } from 'croner';
import { KloopError } from '../errors.ts';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { AdmitExample } from '../signals/governance.ts';
import { runLoopC, runLoopD } from '../signals/loops.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { studyDatabaseLocation } from '../storage/database.ts';
import { acquireLease, releaseLease, startLeaseHeartbeat, StudyBusyError } from '../storage/lease.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import type { ScheduledLoopName, ScheduleRunOutcome, ScheduleRunRecord } from '../storage/notebook/schedule-store.ts';
import { countDecidedExperiments, endScheduleRun, insertScheduleRun } from '../storage/notebook/schedule-store.ts';
import { latestCalibration } from '../calibration/calibration.ts';
import type { ScheduleConfig } from '../config/config.ts';
import { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE } from '../config/config.ts';
import { admitToStudy } from '../loop/corpus-lifecycle.ts';
import { asIntentExamples } from '../corpus/example.ts';
import { isIntentTask } from '../study/compose.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { RunEvent } from '../loop/run-study.ts';
import { runStudy } from '../loop/run-study.ts';
import { createStudyEvaluator } from '../loop/evaluate-partition.ts';
import { FAILED_EXIT_CODE, exitCodeOf } from '../loop/stop-reasons.ts';

/** The loops of the family (DESIGN.md §5). */
export const LOOP_NAMES = ['A', 'B', 'C', 'D'] as const;
export type LoopName = (typeof LOOP_NAMES)[number];
/** The loops of an online study's schedule (src/online/study/online-schedule.ts). */
export type OnlineLoopName = 'fast' | 'slow';
/** Any scheduled loop: the four of an offline study, or an online study's two (stored with each run). */
export type { ScheduledLoopName, ScheduleRunOutcome, ScheduleRunRecord } from '../storage/notebook/schedule-store.ts';
/** Scheduled runs, oldest first (optionally of one loop, the last `limit`). */
export { listScheduleRuns } from '../storage/notebook/schedule-store.ts';

/** Default cadences: fast every hour, slow Mondays at 03:00 (defined with the config's schema). */
export { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE };

/** What a loop job returns. */
export interface LoopJobResult {
  outcome: 'ok' | 'failed' | 'skipped' | 'interrupted';
  detail: Record<string, unknown>;
}

/** One loop job: runs once per tick; `signal` aborts when the schedule stops. */
export type LoopJob = (context: {
  loop: ScheduledLoopName;
  scheduledAt: Date;
  signal: AbortSignal;
  now: () => Date;
}) => Promise<LoopJobResult>;

/** A scheduled task handle. */
export interface ScheduledTask {
  /** The next fire time, or null when stopped or never again. */
  nextRun(): Date | null;
  stop(): void;
}

/** When cadences fire, and what time it is (the contract every scheduler implements). */
export interface Scheduler {
  /** Calls `fire(scheduledAt)` every time `pattern` (cron, 5 or 6 fields) matches, until stopped. */
  schedule(pattern: string, fire: (scheduledAt: Date) => Promise<void>): ScheduledTask;
  now(): Date;
}

/**
 * The real scheduler: one croner job per cadence, `protect: true` (a tick
 * that comes while the previous callback still runs is skipped by croner).
 *
 * @param timezone IANA zone of the cadences; default the system's
 */
export function createCronScheduler(options: { timezone?: string } = {}): Scheduler {
  return {
    schedule(pattern, fire) {
      const job = new Cron(
        pattern,
        { protect: true, catch: true, ...(options.timezone !== undefined ? { timezone: options.timezone } : {}) },
        async (self) => {
          await fire(self.currentRun() ?? new Date());
        },
      );
      return { nextRun: () => job.nextRun(), stop: () => job.stop() };
    },
    now: () => new Date(),
  };
}

/** A scheduler whose clock moves only when told (tests, simulations). */
export interface ManualScheduler extends Scheduler {
  /**
   * Moves the clock to `target`, firing every cadence due on the way in time
   * order (ties in registration order). With `waitForJobs` (default true)
   * each fired job finishes before the clock moves on, as if it took no time;
   * without it, jobs are left running (to provoke overlaps).
   *
   * @returns the number of ticks fired
   */
  advanceTo(target: Date, options?: { waitForJobs?: boolean }): Promise<number>;
  /** Waits for every job fired so far. */
  settle(): Promise<void>;
}

/**
 * Creates a {@link ManualScheduler} starting at `start`. Fire times are
 * croner's own `nextRun` computations, so they match the real scheduler's.
 */
export function createManualScheduler(start: Date, options: { timezone?: string } = {}): ManualScheduler {
  let clock = new Date(start.getTime());
  const tasks: Array<{ cron: Cron; next: Date | null; fire: (scheduledAt: Date) => Promise<void> }> = [];
  const running = new Set<Promise<void>>();
  return {
    schedule(pattern, fire) {
      const cron = new Cron(pattern, {
        paused: true,
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
      });
      const task = { cron, next: cron.nextRun(clock), fire };
      tasks.push(task);
      return {
        nextRun: () => task.next,
        stop: () => {
          task.next = null;
          cron.stop();
        },
      };
    },
    now: () => new Date(clock.getTime()),
    async advanceTo(target, advanceOptions = {}) {
      const wait = advanceOptions.waitForJobs !== false;
      let fired = 0;
      for (;;) {
        let due: (typeof tasks)[number] | undefined;
        for (const task of tasks) {
          if (task.next === null || task.next.getTime() > target.getTime()) continue;
          if (due === undefined || task.next.getTime() < due.next!.getTime()) due = task;
        }
        if (due === undefined) break;
        const at = due.next!;
        clock = new Date(at.getTime());
        due.next = due.cron.nextRun(at);
        fired += 1;
        const promise = due.fire(new Date(at.getTime()));
        running.add(promise);
        void promise.finally(() => running.delete(promise));
        if (wait) await promise;
        else await Promise.resolve();
      }
      if (target.getTime() > clock.getTime()) clock = new Date(target.getTime());
      return fired;
    },
    async settle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/** A loop with its cadence and job. */
export interface ScheduledLoop {
  name: ScheduledLoopName;
  /** Cron pattern (5 or 6 fields); null = on no cadence (only {@link RunningSchedule.runNow} runs it). */
  pattern: string | null;
  run: LoopJob;
}

/** Progress of a schedule, for the CLI. */
export type ScheduleEvent =
  | { type: 'start'; loop: ScheduledLoopName; runId: number; scheduledAt: string }
  | { type: 'end'; loop: ScheduledLoopName; runId: number; outcome: ScheduleRunOutcome; detail: unknown }
  | { type: 'overlap'; loop: ScheduledLoopName; runId: number; scheduledAt: string };

/** Options of {@link startSchedule}. */
export interface ScheduleOptions {
  db: StudyDatabase;
  loops: readonly ScheduledLoop[];
  scheduler: Scheduler;
  onEvent?: (event: ScheduleEvent) => void;
}

/** A running schedule. */
export interface RunningSchedule {
  /** Next fire time of each scheduled loop (ISO), null when none. */
  nextRuns(): Partial<Record<ScheduledLoopName, string | null>>;
  /** Runs a loop now (same guard and recording as a tick); an overlapping call is recorded as `overlap`. */
  runNow(loop: ScheduledLoopName): Promise<ScheduleRunRecord>;
  /** Stops the cadences, aborts the runs in flight and waits for them to finish. */
  stop(): Promise<void>;
}

function describeError(error: unknown): Record<string, unknown> {
  if (KloopError.isInstance(error)) return { error: error.message, code: error.code };
  return { error: error instanceof Error ? error.message : String(error) };
}

/**
 * Starts the schedule: registers each loop's cadence with the scheduler,
 * guards against overlapping runs of one loop and records every run.
 */
export function startSchedule(options: ScheduleOptions): RunningSchedule {
  const { db, scheduler } = options;
  const emit = options.onEvent ?? (() => undefined);
  const controller = new AbortController();
  const inFlight = new Map<ScheduledLoopName, Promise<ScheduleRunRecord>>();
  const loops = new Map(options.loops.map((loop) => [loop.name, loop]));
  const iso = (): string => scheduler.now().toISOString();

  const recordOverlap = async (loop: ScheduledLoopName, scheduledAt: Date): Promise<ScheduleRunRecord> => {
    const at = iso();
    const run = await insertScheduleRun(db, {
      loop,
      scheduledAt: scheduledAt.toISOString(),
      startedAt: at,
      endedAt: at,
      outcome: 'overlap',
      detail: { note: `loop ${loop} was still running: this tick was skipped` },
    });
    emit({ type: 'overlap', loop, runId: run.id, scheduledAt: run.scheduledAt });
    return run;
  };

  const execute = async (loop: ScheduledLoop, scheduledAt: Date): Promise<ScheduleRunRecord> => {
    const started = await insertScheduleRun(db, {
      loop: loop.name,
      scheduledAt: scheduledAt.toISOString(),
      startedAt: iso(),
      endedAt: null,
      outcome: 'running',
      detail: {},
    });
    emit({ type: 'start', loop: loop.name, runId: started.id, scheduledAt: started.scheduledAt });
    let result: LoopJobResult;
    try {
      result = await loop.run({ loop: loop.name, scheduledAt, signal: controller.signal, now: () => scheduler.now() });
    } catch (error) {
      result = { outcome: 'failed', detail: describeError(error) };
    }
    const ended = await endScheduleRun(db, started.id, {
      endedAt: iso(),
      outcome: result.outcome,
      detail: result.detail,
    });
    emit({ type: 'end', loop: loop.name, runId: ended.id, outcome: result.outcome, detail: result.detail });
    return ended;
  };

  const trigger = (name: ScheduledLoopName, scheduledAt: Date): Promise<ScheduleRunRecord> => {
    const loop = loops.get(name);
    if (loop === undefined)
      return Promise.reject(new KloopError(`loop ${name} is not scheduled`, { code: 'schedule', exitCode: 2 }));
    if (inFlight.has(name)) return recordOverlap(name, scheduledAt);
    // Registered before the first await: a second trigger in the same tick sees it.
    const run = execute(loop, scheduledAt).finally(() => inFlight.delete(name));
    inFlight.set(name, run);
    return run;
  };

  const tasks = new Map<ScheduledLoopName, ScheduledTask>();
  for (const loop of options.loops) {
    if (loop.pattern === null) continue;
    tasks.set(
      loop.name,
      scheduler.schedule(loop.pattern, async (scheduledAt) => {
        if (controller.signal.aborted) return;
        await trigger(loop.name, scheduledAt).catch(() => undefined);
      }),
    );
  }

  return {
    nextRuns() {
      return Object.fromEntries(
        [...tasks.entries()].map(([name, task]) => [name, task.nextRun()?.toISOString() ?? null]),
      );
    },
    runNow(name) {
      return trigger(name, scheduler.now());
    },
    async stop() {
      for (const task of tasks.values()) task.stop();
      controller.abort(new Error('the schedule was stopped'));
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}

/** The cadence of each loop from the `schedule` section (null = off). */
export function resolveLoopCadences(schedule?: ScheduleConfig): Record<LoopName, string | null> {
  const fast = schedule?.fast ?? DEFAULT_FAST_CADENCE;
  const slow = schedule?.slow ?? DEFAULT_SLOW_CADENCE;
  const pick = (loop: LoopName, fallback: string): string | null => {
    const override = schedule?.loops?.[loop];
    if (override === 'off') return null;
    return override ?? fallback;
  };
  return { A: pick('A', slow), B: pick('B', fast), C: pick('C', slow), D: pick('D', slow) };
}

/** Options of {@link createStudyLoops}. */
export interface StudyLoopsOptions {
  db: StudyDatabase;
  /** Loads the study; called at the start of every run so corpus and config changes are picked up. */
  loadStudy: () => LoadedStudy | Promise<LoadedStudy>;
  /** Hold the study's run lease during Loop B (a `kloop run` in progress makes the tick `skipped`). Default true. */
  useLease?: boolean;
  /** Progress of Loop B runs. */
  onRunEvent?: (event: RunEvent) => void;
  /** Loop A's module; default `./loop-a.ts` beside this file when it exists. */
  loopAModule?: string;
}

interface LoopAModule {
  runLoopA(options: {
    study: LoadedStudy;
    db: StudyDatabase;
    signal?: AbortSignal;
    now?: () => Date;
  }): Promise<{ runId: number; queued: number; refused: number; skipped: number }>;
}

async function importLoopA(specifier: string | undefined): Promise<LoopAModule | undefined> {
  if (specifier !== undefined && specifier.startsWith('file:') && !existsSync(fileURLToPath(specifier)))
    return undefined;
  // A literal specifier for the default, so that tsc (`.ts` → `.js`) and a bundler both see it.
  const module = (
    specifier === undefined ? await import('../loop-a/loop-a.ts') : await import(specifier)
  ) as Partial<LoopAModule>;
  return typeof module.runLoopA === 'function' ? (module as LoopAModule) : undefined;
}

/**
 * Corpus admission for Loop C's complete candidate examples: the study's
 * admission checks, shadow first, recorded as `admitted`/`refused` events
 * with source `loop-c`.
 */
export function createLoopCAdmission(db: StudyDatabase, study: LoadedStudy, now?: () => Date): AdmitExample {
  return async (example) => {
    const outcome = await admitToStudy(db, study, [{ index: 0, id: example.id, example, errors: [] }], {
      source: 'loop-c',
      ...(now !== undefined ? { now } : {}),
    });
    const verdict = outcome.verdicts[0];
    if (outcome.admitted === 1) return { admitted: true };
    return {
      admitted: false,
      reason: verdict?.reasons.map((reason) => `${reason.check}: ${reason.message}`).join('; ') ?? 'refused',
    };
  };
}

/** The outcome of a slow loop that only knows intent studies, on another task: skipped, with a note. */
function intentOnly(loop: string, study: LoadedStudy): { outcome: 'skipped'; detail: { note: string } } {
  return {
    outcome: 'skipped',
    detail: {
      note: `${loop} works on intent studies only (it builds apps from intents); this study's task is ${study.task.id}: skipped`,
    },
  };
}

/**
 * The four loops of a study as scheduled jobs, with their cadences from the
 * study's `schedule` section (a loop that is "off" has pattern null: it runs
 * only when asked with `runNow`).
 *
 * - B: `runStudy` under the study's lease, with the latest calibration of the
 *   current evaluator (refused when `gate.requireCalibration` and none); with
 *   `schedule.experimentsPerCycle`, each run may add that many experiments.
 * - A: `runLoopA` when `src/loop-a/loop-a.ts` exists, else `skipped` with a note.
 * - C: `runLoopC` (optimization and anchor gold only, never shadow); candidate
 *   examples with complete gold go through corpus admission (shadow first),
 *   the others to the review queue.
 * - D: `runLoopD`.
 * C and D only write review items; none of the four slow or fast jobs but B
 * (through its gate) can move the active artifact.
 */
export function createStudyLoops(options: StudyLoopsOptions, schedule?: ScheduleConfig): ScheduledLoop[] {
  const { db } = options;
  const cadences = resolveLoopCadences(schedule);
  const jobs: Record<LoopName, LoopJob> = {
    B: async ({ signal, now }) => {
      const study = await options.loadStudy();
      const perCycle = study.config?.schedule?.experimentsPerCycle;
      if (perCycle !== undefined) study.stopping.maxExperiments = (await countDecidedExperiments(db)) + perCycle;
      const fingerprint = createStudyEvaluator(study).fingerprint;
      const calibration = await latestCalibration(db, fingerprint, undefined, study.gate.calibrationWindow);
      if (calibration === undefined && study.gate.requireCalibration) {
        return {
          outcome: 'failed',
          detail: {
            error:
              'gate.requireCalibration is set and there is no calibration for the current evaluator: run `kloop calibrate`',
          },
        };
      }
      let release = async (): Promise<void> => undefined;
      const controller = new AbortController();
      const onAbort = (): void => controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      if (options.useLease !== false) {
        try {
          const lease = await acquireLease(db, { studyKey: study.dir });
          const heartbeat = startLeaseHeartbeat(db, lease, {
            file: studyDatabaseLocation(study.dir),
            onLost: () => controller.abort(new Error('the study lease was lost')),
          });
          release = async () => {
            await heartbeat.stop();
            await releaseLease(db, lease);
          };
        } catch (error) {
          signal.removeEventListener('abort', onAbort);
          if (StudyBusyError.isInstance(error)) return { outcome: 'skipped', detail: { note: error.message } };
          throw error;
        }
      }
      try {
        const outcome = await runStudy({
          study,
          db,
          ...(calibration !== undefined ? { calibration: calibration.calibration } : {}),
          signal: controller.signal,
          now,
          ...(options.onRunEvent !== undefined ? { onEvent: options.onRunEvent } : {}),
        });
        return {
          outcome:
            outcome.stopReason === 'interrupted'
              ? 'interrupted'
              : exitCodeOf(outcome.stopReason) === FAILED_EXIT_CODE
                ? 'failed'
                : 'ok',
          detail: {
            runId: outcome.runId,
            stopReason: outcome.stopReason,
            stopDetail: outcome.stopDetail,
            newExperiments: outcome.newExperiments,
          },
        };
      } finally {
        signal.removeEventListener('abort', onAbort);
        await release();
      }
    },
    A: async ({ signal, now }) => {
      const loopA = await importLoopA(options.loopAModule);
      if (loopA === undefined)
        return {
          outcome: 'skipped',
          detail: { note: 'Loop A is not available in this build (no src/loop-a/loop-a.ts): skipped' },
        };
      const study = await options.loadStudy();
      if (!isIntentTask(study.task)) return intentOnly('Loop A', study);
      const outcome = await loopA.runLoopA({ study, db, signal, now });
      return {
        outcome: 'ok',
        detail: { runId: outcome.runId, queued: outcome.queued, refused: outcome.refused, skipped: outcome.skipped },
      };
    },
    C: async ({ now }) => {
      const study = await options.loadStudy();
      if (!isIntentTask(study.task)) return intentOnly('Loop C', study);
      const result = await runLoopC({
        db,
        settings: study.config?.signals ?? DEFAULT_SIGNALS_CONFIG,
        patterns: loadStudyPatternLibrary(study.dir).patterns,
        corpus: asIntentExamples([...study.partitions.optimization, ...study.partitions.anchor]),
        now,
        admitExample: createLoopCAdmission(db, study, now),
      });
      return {
        outcome: 'ok',
        detail: {
          shapes: result.report.shapes.length,
          candidatePatterns: result.report.candidatePatterns.length,
          candidateExamples: result.report.candidateExamples.length,
          signalsWithoutShape: result.report.signalsWithoutShape,
          ...result.enqueued,
        },
      };
    },
    D: async ({ now }) => {
      const study = await options.loadStudy();
      if (!isIntentTask(study.task)) return intentOnly('Loop D', study);
      const library = loadStudyPatternLibrary(study.dir);
      const active = await getRegistryVersion(db);
      const result = await runLoopD({
        db,
        settings: study.config?.signals ?? DEFAULT_SIGNALS_CONFIG,
        patterns: library.patterns,
        corpus: asIntentExamples([...study.partitions.optimization, ...study.partitions.anchor]),
        artifactText: active?.text ?? study.artifactText,
        now,
      });
      return {
        outcome: 'ok',
        detail: {
          window: result.report.window,
          signals: result.report.signals,
          lowConfidence: result.report.lowConfidence,
          clusters: result.report.clusters.length,
          ...result.enqueued,
        },
      };
    },
  };
  return LOOP_NAMES.map((name) => ({ name, pattern: cadences[name], run: jobs[name] }));
}
