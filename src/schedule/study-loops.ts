/**
 * The four loops of an offline study (A, B, C, D: DESIGN.md §5) as scheduled
 * jobs for src/schedule/schedule.ts, with their cadences from kloop.yaml's
 * `schedule` section.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { AdmitExample } from '../signals/governance.ts';
import { runLoopC, runLoopD } from '../signals/loops.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { studyDatabaseLocation } from '../storage/database.ts';
import { acquireLease, releaseLease, startLeaseHeartbeat, StudyBusyError } from '../storage/lease.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import { countDecidedExperiments } from '../storage/notebook/schedule-store.ts';
import { latestCalibration } from '../calibration/calibration.ts';
import type { ScheduleConfig } from '../config/config.ts';
import { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE } from '../config/config.ts';
import { admitToStudy } from '../loop/corpus-lifecycle.ts';
import { asIntentExamples } from '../corpus/intent-example.ts';
import { isIntentTask } from '../study/compose.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { RunEvent } from '../loop/run-study.ts';
import { runStudy } from '../loop/run-study.ts';
import { createStudyEvaluator } from '../loop/evaluate-partition.ts';
import { FAILED_EXIT_CODE, exitCodeOf } from '../loop/stop-reasons.ts';
import type { LoopJob, LoopJobResult, LoopName, ScheduledLoop } from './loop-job.ts';
import { LOOP_NAMES } from './loop-job.ts';
import { openNotebook } from '../storage/notebook/index.ts';

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
    const outcome = await admitToStudy(openNotebook(db), study, [{ index: 0, id: example.id, example, errors: [] }], {
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
  const cadences = resolveLoopCadences(schedule);
  const jobs: Record<LoopName, LoopJob> = {
    A: (context) => runLoopAJob(options, context),
    B: (context) => runLoopBJob(options, context),
    C: (context) => runLoopCJob(options, context),
    D: (context) => runLoopDJob(options, context),
  };
  return LOOP_NAMES.map((name) => ({ name, pattern: cadences[name], run: jobs[name] }));
}

/** What a loop job is given (src/schedule/loop-job.ts). */
type LoopJobContext = Parameters<LoopJob>[0];

/** The study's run lease held for one Loop B run, or the reason the tick is skipped (a run holds it). */
type LoopBLease =
  | { held: true; controller: AbortController; release: () => Promise<void> }
  | { held: false; result: LoopJobResult };

/**
 * Takes the study's lease (unless `useLease` is false) with its heartbeat; a
 * lost lease or the schedule's stop aborts the returned controller. A study
 * busy with another run makes the tick `skipped`.
 */
async function holdLoopBLease(
  options: StudyLoopsOptions,
  study: LoadedStudy,
  signal: AbortSignal,
): Promise<LoopBLease> {
  const { db } = options;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const stopListening = async (): Promise<void> => signal.removeEventListener('abort', onAbort);
  if (options.useLease === false) return { held: true, controller, release: stopListening };
  try {
    const lease = await acquireLease(db, { studyKey: study.dir });
    const heartbeat = startLeaseHeartbeat(db, lease, {
      file: studyDatabaseLocation(study.dir),
      onLost: () => controller.abort(new Error('the study lease was lost')),
    });
    const release = async (): Promise<void> => {
      await stopListening();
      await heartbeat.stop();
      await releaseLease(db, lease);
    };
    return { held: true, controller, release };
  } catch (error) {
    await stopListening();
    if (StudyBusyError.isInstance(error))
      return { held: false, result: { outcome: 'skipped', detail: { note: error.message } } };
    throw error;
  }
}

/** Loop B: `runStudy` under the study's lease, with the latest calibration of the current evaluator. */
async function runLoopBJob(options: StudyLoopsOptions, { signal, now }: LoopJobContext): Promise<LoopJobResult> {
  const { db } = options;
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
  const lease = await holdLoopBLease(options, study, signal);
  if (!lease.held) return lease.result;
  try {
    const outcome = await runStudy({
      study,
      notebook: openNotebook(db),
      ...(calibration !== undefined ? { calibration: calibration.calibration } : {}),
      signal: lease.controller.signal,
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
    await lease.release();
  }
}

/** Loop A: `runLoopA` when its module exists, else `skipped` with a note. */
async function runLoopAJob(options: StudyLoopsOptions, { signal, now }: LoopJobContext): Promise<LoopJobResult> {
  const loopA = await importLoopA(options.loopAModule);
  if (loopA === undefined)
    return {
      outcome: 'skipped',
      detail: { note: 'Loop A is not available in this build (no src/loop-a/loop-a.ts): skipped' },
    };
  const study = await options.loadStudy();
  if (!isIntentTask(study.task)) return intentOnly('Loop A', study);
  const outcome = await loopA.runLoopA({ study, db: options.db, signal, now });
  return {
    outcome: 'ok',
    detail: { runId: outcome.runId, queued: outcome.queued, refused: outcome.refused, skipped: outcome.skipped },
  };
}

/** Loop C: pattern mining on optimization and anchor gold; complete candidate examples go through corpus admission. */
async function runLoopCJob(options: StudyLoopsOptions, { now }: LoopJobContext): Promise<LoopJobResult> {
  const { db } = options;
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
}

/** Loop D: the production-signal report against the active artifact. */
async function runLoopDJob(options: StudyLoopsOptions, { now }: LoopJobContext): Promise<LoopJobResult> {
  const { db } = options;
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
}
