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
import { KloopError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { ScheduledLoopName, ScheduleRunOutcome, ScheduleRunRecord } from '../storage/notebook/schedule-store.ts';
import { endScheduleRun, insertScheduleRun } from '../storage/notebook/schedule-store.ts';
import type { LoopJobResult, ScheduledLoop } from './loop-job.ts';
import type { ScheduledTask, Scheduler } from './scheduler.ts';

/** Any scheduled loop: the four of an offline study, or an online study's two (stored with each run). */
export type { ScheduledLoopName, ScheduleRunOutcome, ScheduleRunRecord } from '../storage/notebook/schedule-store.ts';
/** Scheduled runs, oldest first (optionally of one loop, the last `limit`). */
export { listScheduleRuns } from '../storage/notebook/schedule-store.ts';
/** Default cadences: fast every hour, slow Mondays at 03:00 (defined with the config's schema). */
export { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE } from '../config/config.ts';
export type { LoopJob, LoopJobResult, LoopName, OnlineLoopName, ScheduledLoop } from './loop-job.ts';
export { LOOP_NAMES } from './loop-job.ts';
export type { ManualScheduler, ScheduledTask, Scheduler } from './scheduler.ts';
export { createCronScheduler, createManualScheduler } from './scheduler.ts';
export type { StudyLoopsOptions } from './study-loops.ts';
export { createLoopCAdmission, createStudyLoops, resolveLoopCadences } from './study-loops.ts';

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

/** The state of a running schedule, shared by its triggers. */
interface ScheduleState {
  db: StudyDatabase;
  scheduler: Scheduler;
  emit: (event: ScheduleEvent) => void;
  controller: AbortController;
  inFlight: Map<ScheduledLoopName, Promise<ScheduleRunRecord>>;
  loops: Map<ScheduledLoopName, ScheduledLoop>;
}

/** Records a tick refused because the loop was still running (outcome `overlap`). */
async function recordOverlap(
  state: ScheduleState,
  loop: ScheduledLoopName,
  scheduledAt: Date,
): Promise<ScheduleRunRecord> {
  const at = state.scheduler.now().toISOString();
  const run = await insertScheduleRun(state.db, {
    loop,
    scheduledAt: scheduledAt.toISOString(),
    startedAt: at,
    endedAt: at,
    outcome: 'overlap',
    detail: { note: `loop ${loop} was still running: this tick was skipped` },
  });
  state.emit({ type: 'overlap', loop, runId: run.id, scheduledAt: run.scheduledAt });
  return run;
}

/** Runs one loop's job, recording its start and its end (a thrown error is outcome `failed`). */
async function executeLoop(state: ScheduleState, loop: ScheduledLoop, scheduledAt: Date): Promise<ScheduleRunRecord> {
  const { db, scheduler } = state;
  const started = await insertScheduleRun(db, {
    loop: loop.name,
    scheduledAt: scheduledAt.toISOString(),
    startedAt: scheduler.now().toISOString(),
    endedAt: null,
    outcome: 'running',
    detail: {},
  });
  state.emit({ type: 'start', loop: loop.name, runId: started.id, scheduledAt: started.scheduledAt });
  let result: LoopJobResult;
  try {
    result = await loop.run({
      loop: loop.name,
      scheduledAt,
      signal: state.controller.signal,
      now: () => scheduler.now(),
    });
  } catch (error) {
    result = { outcome: 'failed', detail: describeError(error) };
  }
  const ended = await endScheduleRun(db, started.id, {
    endedAt: scheduler.now().toISOString(),
    outcome: result.outcome,
    detail: result.detail,
  });
  state.emit({ type: 'end', loop: loop.name, runId: ended.id, outcome: result.outcome, detail: result.detail });
  return ended;
}

/** Runs a loop unless it is running already (then the tick is recorded as an overlap). */
function triggerLoop(state: ScheduleState, name: ScheduledLoopName, scheduledAt: Date): Promise<ScheduleRunRecord> {
  const loop = state.loops.get(name);
  if (loop === undefined)
    return Promise.reject(new KloopError(`loop ${name} is not scheduled`, { code: 'schedule', exitCode: 2 }));
  if (state.inFlight.has(name)) return recordOverlap(state, name, scheduledAt);
  // Registered before the first await: a second trigger in the same tick sees it.
  const run = executeLoop(state, loop, scheduledAt).finally(() => state.inFlight.delete(name));
  state.inFlight.set(name, run);
  return run;
}

/**
 * Starts the schedule: registers each loop's cadence with the scheduler,
 * guards against overlapping runs of one loop and records every run.
 */
export function startSchedule(options: ScheduleOptions): RunningSchedule {
  const { scheduler } = options;
  const state: ScheduleState = {
    db: options.db,
    scheduler,
    emit: options.onEvent ?? (() => undefined),
    controller: new AbortController(),
    inFlight: new Map(),
    loops: new Map(options.loops.map((loop) => [loop.name, loop])),
  };
  const tasks = new Map<ScheduledLoopName, ScheduledTask>();
  for (const loop of options.loops) {
    if (loop.pattern === null) continue;
    tasks.set(
      loop.name,
      scheduler.schedule(loop.pattern, async (scheduledAt) => {
        if (state.controller.signal.aborted) return;
        await triggerLoop(state, loop.name, scheduledAt).catch(() => undefined);
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
      return triggerLoop(state, name, scheduler.now());
    },
    async stop() {
      for (const task of tasks.values()) task.stop();
      state.controller.abort(new Error('the schedule was stopped'));
      await Promise.allSettled([...state.inFlight.values()]);
    },
  };
}
