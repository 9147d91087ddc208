/**
 * `kloop run`, before round 1 (the study's lease held): the refusals of bad
 * input that change nothing (a calibration required and never made, a
 * budget too small), the corpus files' new records admitted, `--calibrate`,
 * the calibration the gate uses, what the run starts from, and the power
 * check of the partitions.
 */
import path from 'node:path';
import { latestCalibration } from '../../calibration/calibration.ts';
import type { PowerWarning } from '../../calibration/power-check.ts';
import { studyPowerWarnings } from '../../calibration/power-check.ts';
import { InputError, KloopError } from '../../errors.ts';
import { describeCorpusStart, startCorpusLifecycle } from '../../loop/corpus-lifecycle.ts';
import type { StudyEvaluatorOptions } from '../../loop/evaluate-partition.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import { INTERRUPTED_EXIT_CODE } from '../../loop/stop-reasons.ts';
import type { CorpusMark } from '../../report/report.ts';
import { markCorpus } from '../../report/report.ts';
import { hasCalibration } from '../../storage/notebook/run-queries.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { progress } from '../output.ts';
import { calibrate } from './calibrate.ts';
import type { ModelOptions, StudySession } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

/** The options of `kloop run` on an offline study. */
export interface OfflineRunOptions extends ModelOptions {
  json?: boolean;
  calibrate?: boolean;
  maxExperiments?: number;
  wait?: boolean;
  git?: boolean;
  workers?: boolean;
  batchSize?: number;
}

/** A run in progress: the session, the options, and what the phases hand on. */
export interface RunContext {
  session: StudySession;
  options: OfflineRunOptions;
  quiet: boolean;
  /** Stored-results options of every evaluator of the run (`--no-cache`, `--workers`). */
  storedResults: StudyEvaluatorOptions;
  /** When the command started (ms since the epoch): the report's wall time. */
  started: number;
  /** The run's id, once the loop opened its row. */
  runId: number | undefined;
}

/** What a run starts with: the calibration the gate uses (none: τ = 0), the partitions at the start, the power check's warnings. */
export interface RunStart {
  calibration: Awaited<ReturnType<typeof latestCalibration>>;
  corpusAtStart: CorpusMark;
  powerWarnings: PowerWarning[];
}

/**
 * Everything before round 1; returns what the run starts with, or the exit
 * code (130) when an interrupt came first (its line printed; nothing run).
 *
 * @throws InputError the study requires a calibration it does not have; the budget cannot cover a few proposals
 * @throws KloopError (code `calibration`, exit 1) `--calibrate` found the evaluator unfit
 */
export async function startRun(run: RunContext, signal: AbortSignal): Promise<RunStart | number> {
  const { session, options, quiet } = run;
  const study = session.study;
  if (options.maxExperiments !== undefined) study.stopping.maxExperiments = options.maxExperiments;
  // A study that requires a calibration and has never had one is refused before its corpus is admitted:
  // bad input changes nothing (the exact check, for the current evaluator, follows the admission).
  if (options.calibrate !== true && study.gate.requireCalibration && !(await hasCalibration(session.db)))
    throw requiresCalibration(study);
  // A budget that cannot cover a few proposals is bad input: refused before anything is written.
  session.plugins.checkBudget(study);
  // Before round 1: the corpus files' new records are admitted or refused, visibly (docs/corpus.md).
  for (const line of describeCorpusStart(await startCorpusLifecycle(openNotebook(session.db), study, () => new Date())))
    progress(`kloop: ${line}`, quiet);
  // The partitions this run starts with: the report lists what moved after this point.
  const corpusAtStart = await markCorpus(session.db, study);
  const fingerprint = createStudyEvaluator(study).fingerprint;
  if (options.calibrate === true && !(await calibrateFirst(run, signal))) return INTERRUPTED_EXIT_CODE;
  const calibration = await latestCalibration(session.db, fingerprint, undefined, study.gate.calibrationWindow);
  if (calibration === undefined && study.gate.requireCalibration) throw requiresCalibration(study);
  await announceRun(run, calibration);
  const powerWarnings = await checkPower(run, signal);
  if (powerWarnings === undefined) return INTERRUPTED_EXIT_CODE;
  return { calibration, corpusAtStart, powerWarnings };
}

/** `--calibrate`: the calibration before the run; false when it was interrupted (nothing stored, nothing run). */
async function calibrateFirst(run: RunContext, signal: AbortSignal): Promise<boolean> {
  const { session, quiet } = run;
  let result: Awaited<ReturnType<typeof calibrate>>;
  try {
    result = await calibrate(session.study, session.db, quiet, run.storedResults, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
    // Ctrl-C during the calibration that precedes the run: its calls are aborted, and no run was started.
    progress('kloop: interrupted during the calibration; nothing was run (the calibration was not stored)', quiet);
    return false;
  }
  // A failed calibration is a finding about the evaluator, as `kloop calibrate` reports it (exit 1), not bad input.
  if (!result.ok)
    throw new KloopError(result.message, { code: 'calibration', exitCode: 1, studyPath: session.study.dir });
  progress(`kloop: ${result.message}`, quiet);
  return true;
}

/** The lines that say what the run starts from: an edited seed file, the study, the calibration (or why τ = 0). */
async function announceRun(run: RunContext, calibration: RunStart['calibration']): Promise<void> {
  const { session, quiet } = run;
  const study = session.study;
  // The artifact file seeds a new study only: once the notebook holds a seed, an edit of the file is not read. Say so.
  const seed = await getRegistryVersion(session.db, 'seed');
  if (seed !== undefined && seed.text !== study.artifactText) {
    const active = await getRegistryVersion(session.db);
    progress(
      `kloop: NOTE: ${path.basename(study.artifactPath)} differs from the seed this study started from (version ${seed.id}); the file seeds a new study only, and this run continues from the active version ${active?.id ?? seed.id}. To start afresh from the file: kloop reset ${study.dir}`,
      quiet,
    );
  }
  progress(
    `kloop: ${study.dir} — ${study.corpus.length} examples (optimization ${study.partitions.optimization.length}, anchor ${study.partitions.anchor.length}, shadow ${study.partitions.shadow.length}), executor ${study.executor.id}, proposer ${study.proposer.id}`,
    quiet,
  );
  if (calibration !== undefined)
    progress(
      `kloop: calibration ${calibration.record.createdAt}: noise SD ${calibration.record.noiseSd.toFixed(6)} (rolling max ${calibration.calibration.noiseSd.toFixed(6)}), τ = thresholdK ${study.gate.thresholdK} × ${calibration.calibration.noiseSd.toFixed(6)} = ${(study.gate.thresholdK * calibration.calibration.noiseSd).toFixed(6)}`,
      quiet,
    );
  else if (study.executor.deterministic)
    progress(
      'kloop: deterministic executor, no calibration stored: run-to-run noise is 0, τ = 0; the paired test carries the decision',
      quiet,
    );
  else
    progress(
      'kloop: WARNING: stochastic executor without a calibration: τ = 0 and no per-example tolerance; run `kloop calibrate` first',
      quiet,
    );
}

/**
 * Before round 1: can any change reach significance on these partitions?
 * (src/calibration/power-check.ts). Its warnings, printed; undefined when
 * an interrupt came (nothing run).
 */
async function checkPower(run: RunContext, signal: AbortSignal): Promise<PowerWarning[] | undefined> {
  const { session, quiet } = run;
  let powerWarnings: PowerWarning[] = [];
  try {
    powerWarnings = await studyPowerWarnings({
      study: session.study,
      evaluator: createStudyEvaluator(session.study, openNotebook(session.db), run.storedResults),
      incumbentText: (await getRegistryVersion(session.db))?.text ?? session.study.artifactText,
      db: session.db,
      signal,
    });
  } catch (error) {
    if (signal.aborted) {
      progress('kloop: interrupted before round 1; nothing was run', quiet);
      return undefined;
    }
    // The loop meets the same failure at its first evaluation and stops with its own reason.
    progress(
      `kloop: WARNING: the power check could not evaluate the incumbent (${(error as Error).message}); skipped`,
      quiet,
    );
  }
  for (const warning of powerWarnings) progress(`kloop: WARNING: ${warning.message}`, quiet);
  return powerWarnings;
}

/** The refusal of a run that needs a calibration for its evaluator and has none (gate.requireCalibration). */
function requiresCalibration(study: LoadedStudy): InputError {
  return new InputError(
    'this study requires a valid calibration for the current evaluator (gate.requireCalibration): run `kloop calibrate` first, or `kloop run --calibrate`',
    {
      file: study.config?.configPath ?? study.dir,
      field: 'gate.requireCalibration',
    },
  );
}
