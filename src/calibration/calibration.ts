/**
 * Calibration: how noisy is the evaluator, and can it tell artifacts apart at
 * all? Autonomous operation starts only after both questions have an answer
 * for the current evaluator fingerprint and model (DESIGN.md §3, "Calibration
 * comes first").
 *
 * Noise and signal are estimated **separately**, with their own repeat counts
 * (the seed's lesson: noise needs enough repeats for a stable SD, signal only
 * enough contrast to show the landscape is not flat):
 *
 * - **Noise** — the incumbent is evaluated `noiseRepeats` times (repeat
 *   indices 0..n−1, so stored results are reused and an LLM executor's repeats
 *   are fresh samples) on every non-empty partition. Per partition: the sample
 *   SD (n − 1) of the run-level composites; the optimization partition's is
 *   *the* noise SD. Per example: the SD of its composite across repeats (all
 *   partitions; the gate widens each anchor's tolerance by k × this SD).
 *   A deterministic executor gives exactly 0 for both.
 * - **Signal** — the incumbent and a deliberately different artifact (the
 *   caller's `contrastText`, or {@link ablateArtifact} of the incumbent) are
 *   evaluated `signalRepeats` times on the optimization partition. Cohen's d
 *   is computed on the **per-example mean composites** (over repeats) of the
 *   examples valid for both: incumbent values vs contrast values. Per-example
 *   values, not run-level composites, because one repeat of a deterministic
 *   executor gives one run composite per artifact (no SD, no d), while it
 *   gives n per-example scores; d then reads "how many across-example SDs
 *   apart are the two artifacts", the scale on which the gate's paired test
 *   works. If |d| < `minCohensD` (or d is NaN: no example valid for both) the
 *   calibration FAILS: the evaluator cannot tell artifacts apart, so a loop
 *   would only chase noise. A d of ±∞ (both sides constant, means differ) is
 *   a clear difference and passes.
 * - **Threshold** — τ = k × the rolling **maximum** of the noise SD over the
 *   last W valid calibrations of this fingerprint, this one included (config
 *   `gate.thresholdK`, default k = 2; `gate.calibrationWindow`, default
 *   W = 5). The maximum, not the mean: a mean-based estimate understates the
 *   margin needed in the noisy tail of a session (the seed document).
 *   With a deterministic executor τ = 0, recorded as such: the paired test
 *   on per-example scores (corpus sampling variance) then carries the
 *   decision.
 *
 * Every calibration, failed or not, is stored as one row of `calibrations`
 * (`valid` = 0 for a failure); only valid rows feed the rolling maximum and
 * {@link latestCalibration}.
 *
 * @example
 * ```ts
 * const result = await calibrateStudy({ study, db, model: 'offline', settings: DEFAULT_CALIBRATION_SETTINGS });
 * if (!result.ok) throw new Error(result.message); // the evaluator cannot tell artifacts apart
 * await runStudy({ study, notebook: openNotebook(db), calibration: result.calibration });
 * ```
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { InfrastructureError, InputError } from '../errors.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration } from '../gate/gate.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import { insertCalibration, recentNoiseSds } from '../storage/notebook/calibrations-store.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { withCallStage } from '../providers/call-stage.ts';
import type { CalibrationRecord, CalibrationSettings } from './calibration-store.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { ensureSeedVersion } from '../loop/run-study.ts';
import { createStudyEvaluator } from '../loop/evaluate-partition.ts';
import { ablateArtifact, formatFromPath } from './ablation.ts';
import type { NoiseMeasurement } from './measurements.ts';
import { measureNoise, rollingThreshold, signalEffectSize } from './measurements.ts';
import { openNotebook } from '../storage/notebook/index.ts';

// The stored side (defaults, records, reads), in a module of its own for the commands that only read it.
export { DEFAULT_CALIBRATION_SETTINGS, latestCalibration, listCalibrations } from './calibration-store.ts';
export type { CalibrationRecord, CalibrationSettings } from './calibration-store.ts';
export { ablateArtifact, type ArtifactFormat } from './ablation.ts';
export type { NoiseMeasurement } from './measurements.ts';
export { measureNoise, rollingThreshold, runToRunSd, signalEffectSize } from './measurements.ts';

/** Why a calibration failed. */
export type CalibrationFailureReason =
  /** |d| < minCohensD or d undefined: the evaluator cannot tell artifacts apart. */
  | 'flat_landscape'
  /** The incumbent produced fewer than 2 valid run-level composites on the optimization partition. */
  | 'no_valid_output';

/** Evidence of the signal estimate. */
export interface SignalEvidence {
  /** Where the contrasting artifact came from. */
  contrast: 'given' | 'ablation';
  contrastHash: string;
  /** Optimization examples valid for both artifacts (the d sample size per group). */
  examples: number;
  incumbentComposite: number | null;
  contrastComposite: number | null;
  cohensD: number;
}

/** Evidence of the rolling threshold. */
export interface ThresholdEvidence {
  k: number;
  window: number;
  /** Noise SDs in the window, newest (this calibration) first. */
  noiseSds: number[];
  maximumNoiseSd: number;
}

/** The outcome of {@link calibrateStudy}: a discriminated union, never thrown. */
export type CalibrationResult =
  | {
      ok: true;
      record: CalibrationRecord;
      /** What the gate reads: τ and per-example SDs. */
      calibration: GateCalibration;
      /** True when every measured noise SD is exactly 0. */
      deterministic: boolean;
      signal: SignalEvidence;
      threshold: ThresholdEvidence;
      message: string;
    }
  | {
      ok: false;
      reason: CalibrationFailureReason;
      record: CalibrationRecord;
      signal: SignalEvidence | null;
      message: string;
    };

export interface CalibrateOptions {
  study: LoadedStudy;
  /** The study database: the registry (incumbent), stored evaluations and `calibrations`. */
  db: StudyDatabase;
  /** Default: the study's evaluator with stored results in `db` (`createStudyEvaluator`). */
  evaluator?: Evaluator;
  /** A deliberately different artifact; default {@link ablateArtifact} of the incumbent. */
  contrastText?: string;
  settings: Readonly<CalibrationSettings>;
  /** Model id (or executor id for an offline executor), stored with the row. */
  model: string;
  now?: () => Date;
  signal?: AbortSignal;
}

function validateSettings(settings: Readonly<CalibrationSettings>): void {
  const fail = (field: string, rule: string, value: number): never => {
    throw new RangeError(`calibration setting ${field} must be ${rule}, got ${value}`);
  };
  if (!Number.isInteger(settings.noiseRepeats) || settings.noiseRepeats < 2)
    fail('noiseRepeats', 'an integer ≥ 2', settings.noiseRepeats);
  if (!Number.isInteger(settings.signalRepeats) || settings.signalRepeats < 1)
    fail('signalRepeats', 'an integer ≥ 1', settings.signalRepeats);
  if (!Number.isInteger(settings.calibrationWindow) || settings.calibrationWindow < 1)
    fail('calibrationWindow', 'an integer ≥ 1', settings.calibrationWindow);
  if (!(settings.thresholdK >= 0) || !Number.isFinite(settings.thresholdK))
    fail('thresholdK', 'a finite number ≥ 0', settings.thresholdK);
  if (!(settings.minCohensD >= 0) || !Number.isFinite(settings.minCohensD))
    fail('minCohensD', 'a finite number ≥ 0', settings.minCohensD);
}

const format6 = (value: number): string =>
  Number.isFinite(value) ? String(Math.round(value * 1e6) / 1e6) : String(value);

/**
 * Calibrates the study's evaluator on its active incumbent (created from the
 * seed artifact when the registry is empty) and stores the result. See the
 * module comment for the method.
 *
 * @returns `{ ok: true, calibration, ... }`, or `{ ok: false, reason, message }`
 *   when the evaluator cannot tell the incumbent from the contrast
 *   (`flat_landscape`) or the incumbent has no valid output
 *   (`no_valid_output`); both are stored with `valid` = 0
 * @throws RangeError on settings out of range; InputError when no contrast is
 *   given and the ablation changes nothing (nothing to drop), or when the
 *   optimization partition is empty; executor and storage errors propagate
 */
export async function calibrateStudy(options: CalibrateOptions): Promise<CalibrationResult> {
  const { study, db, settings } = options;
  validateSettings(settings);
  const now = options.now ?? (() => new Date());
  const evaluator = options.evaluator ?? createStudyEvaluator(study, openNotebook(db));
  const incumbent = await ensureSeedVersion(openNotebook(db), study, now);
  if (study.partitions.optimization.length === 0) {
    throw new InputError('cannot calibrate: the optimization partition is empty', {
      studyPath: study.dir,
      partition: 'optimization',
      code: 'input.corpus',
    });
  }
  const contrast = resolveContrast(study, incumbent.text, options.contrastText);
  const evaluate = calibrationEvaluate(evaluator, study, options.signal);
  const noise = await measureIncumbentNoise(evaluate, study, incumbent.text, settings.noiseRepeats);
  const noiseSd = noise.partitionSds.optimization;
  // Earlier valid calibrations of this fingerprint, newest first (the rolling window).
  const earlier = await recentNoiseSds(db, evaluator.fingerprint, settings.calibrationWindow - 1);
  const store = (row: StoredVerdict): Promise<CalibrationRecord> =>
    insertCalibration(db, {
      fingerprint: evaluator.fingerprint,
      model: options.model,
      artifactHash: incumbent.hash,
      noiseRepeats: settings.noiseRepeats,
      signalRepeats: settings.signalRepeats,
      ...row,
      exampleSds: noise.exampleSds,
      partitionSds: noise.partitionSds,
      createdAt: isoNow(now),
    });

  if (noiseSd === undefined) {
    const message = `calibration failed: the incumbent produced fewer than 2 valid run-level composites on the optimization partition over ${settings.noiseRepeats} repeats, so no noise SD could be measured (stored as 0, τ 0, invalid); fix the executor or the artifact first`;
    const record = await store({ noiseSd: 0, cohensD: null, threshold: 0, valid: false, message });
    return { ok: false, reason: 'no_valid_output', record, signal: null, message };
  }
  const signal = await measureSignal(evaluate, incumbent.text, contrast, settings.signalRepeats);
  const windowSds = [noiseSd, ...earlier];
  const threshold = rollingThreshold(settings.thresholdK, windowSds);
  const dText = describeSignal(signal, settings.signalRepeats);
  if (Number.isNaN(signal.cohensD) || Math.abs(signal.cohensD) < settings.minCohensD) {
    const message =
      `calibration failed: the evaluator cannot tell artifacts apart — ${dText}, |d| below the minimum ${settings.minCohensD}` +
      (Number.isNaN(signal.cohensD) ? ' (undefined: fewer than 2 examples valid for both)' : '') +
      '. A loop on this evaluator would chase noise: make the corpus or the scorer more discriminating, or give a more different contrasting artifact.';
    const cohensD = Number.isNaN(signal.cohensD) ? null : signal.cohensD;
    const record = await store({ noiseSd, cohensD, threshold, valid: false, message });
    return { ok: false, reason: 'flat_landscape', record, signal, message };
  }
  const deterministic =
    Object.values(noise.partitionSds).every((sd) => sd === 0) &&
    Object.values(noise.exampleSds).every((sd) => sd === 0);
  const message = calibratedMessage({ noiseSd, dText, windowSds, threshold, settings, deterministic, study });
  const record = await store({ noiseSd, cohensD: signal.cohensD, threshold, valid: true, message });
  return {
    ok: true,
    record,
    calibration: { noiseSd: Math.max(...windowSds), exampleSds: noise.exampleSds, noiseRepeats: settings.noiseRepeats },
    deterministic,
    signal,
    threshold: {
      k: settings.thresholdK,
      window: settings.calibrationWindow,
      noiseSds: windowSds,
      maximumNoiseSd: Math.max(...windowSds),
    },
    message,
  };
}

/** What a calibration's verdict stores beside its settings and noise maps. */
type StoredVerdict = Pick<CalibrationRecord, 'noiseSd' | 'cohensD' | 'threshold' | 'valid' | 'message'>;

/** One evaluation of a calibration: an artifact on a partition, `repeats` times from repeat 0. */
type CalibrationEvaluate = (artifactText: string, partition: PartitionName, repeats: number) => Promise<PartitionScore>;

/** The calibration's evaluations: `evaluator` under the `calibration` call stage and the artifact's override. */
function calibrationEvaluate(
  evaluator: Evaluator,
  study: LoadedStudy,
  signal: AbortSignal | undefined,
): CalibrationEvaluate {
  return (artifactText, partition, repeats) =>
    withCallStage('calibration', () =>
      withArtifactOverride(artifactText, () =>
        evaluator.evaluate({
          artifactText,
          partition,
          examples: study.partitions[partition],
          repeats,
          firstRepeat: 0,
          ...(signal !== undefined ? { signal } : {}),
        }),
      ),
    );
}

/**
 * The contrasting artifact: the given one, or the ablated incumbent.
 *
 * @throws InputError when it equals the incumbent
 */
function resolveContrast(
  study: LoadedStudy,
  incumbentText: string,
  given: string | undefined,
): { source: SignalEvidence['contrast']; text: string } {
  const source: SignalEvidence['contrast'] = given === undefined ? 'ablation' : 'given';
  const text = given ?? ablateArtifact(incumbentText, formatFromPath(study.artifactPath));
  if (text === incumbentText) {
    throw new InputError(
      source === 'ablation'
        ? 'cannot calibrate: the automatic ablation of the incumbent changes nothing (no section body or cue list to drop); give a contrasting artifact'
        : 'cannot calibrate: the contrasting artifact is identical to the incumbent',
      { studyPath: study.dir, code: 'input.calibration' },
    );
  }
  return { source, text };
}

/**
 * Noise: the incumbent, `repeats` times, on every non-empty partition.
 *
 * @throws InfrastructureError when every example-repeat of a partition failed
 *   in the infrastructure (nothing is stored, later partitions are not run)
 */
async function measureIncumbentNoise(
  evaluate: CalibrationEvaluate,
  study: LoadedStudy,
  incumbentText: string,
  repeats: number,
): Promise<NoiseMeasurement> {
  const noiseScores: PartitionScore[] = [];
  for (const partition of PARTITIONS) {
    if (study.partitions[partition].length === 0) continue;
    const score = await evaluate(incumbentText, partition, repeats);
    if (score.total > 0 && score.transient === score.total) {
      // Every call failed in the infrastructure (a server answering 500, a network down): that says nothing about the
      // evaluator, so nothing is stored, and the other partitions are not paid for.
      const first = score.examples.find((record) => !record.valid);
      throw new InfrastructureError(
        `calibration stopped: all ${score.total} example-repeats of the ${partition} partition failed in the infrastructure after the retries${first !== undefined && !first.valid ? ` (${first.message})` : ''}; nothing was stored`,
      );
    }
    noiseScores.push(score);
  }
  return measureNoise(noiseScores);
}

/** Signal: incumbent vs contrast, `repeats` times, on the optimization partition. */
async function measureSignal(
  evaluate: CalibrationEvaluate,
  incumbentText: string,
  contrast: { source: SignalEvidence['contrast']; text: string },
  repeats: number,
): Promise<SignalEvidence> {
  const incumbentSignal = await evaluate(incumbentText, 'optimization', repeats);
  const contrastSignal = await evaluate(contrast.text, 'optimization', repeats);
  const effect = signalEffectSize(incumbentSignal, contrastSignal);
  return {
    contrast: contrast.source,
    contrastHash: contentHash(contrast.text),
    examples: effect.examples,
    incumbentComposite: incumbentSignal.composite,
    contrastComposite: contrastSignal.composite,
    cohensD: effect.cohensD,
  };
}

/** The signal estimate in words: d, both composites, the examples and repeats it rests on. */
function describeSignal(signal: SignalEvidence, repeats: number): string {
  const contrastName = signal.contrast === 'ablation' ? 'ablated incumbent' : 'given contrasting artifact';
  return `Cohen's d = ${format6(signal.cohensD)} (incumbent ${format6(signal.incumbentComposite ?? Number.NaN)} vs ${contrastName} ${format6(signal.contrastComposite ?? Number.NaN)}, per-example means of ${signal.examples} optimization examples, ${repeats} repeat(s))`;
}

/** The message of a valid calibration: noise, signal, τ, and what a deterministic (or surprising) executor means. */
function calibratedMessage(input: {
  noiseSd: number;
  dText: string;
  windowSds: readonly number[];
  threshold: number;
  settings: Readonly<CalibrationSettings>;
  deterministic: boolean;
  study: LoadedStudy;
}): string {
  const { settings, windowSds } = input;
  let message =
    `calibrated: noise SD ${format6(input.noiseSd)} (optimization, ${settings.noiseRepeats} repeats); ${input.dText}; ` +
    `τ = ${settings.thresholdK} × rolling max noise SD ${format6(Math.max(...windowSds))} over ${windowSds.length} of the last ${settings.calibrationWindow} calibration(s) = ${format6(input.threshold)}`;
  if (input.deterministic) {
    message +=
      '. Deterministic executor: run-to-run noise is 0 and τ = 0; the paired test on per-example scores carries the decision';
    if (!input.study.executor.deterministic)
      message +=
        ' (the executor is declared stochastic but every repeat gave the same scores: are its repeats cached or its temperature 0?)';
  } else if (input.study.executor.deterministic) {
    message += '. Warning: the executor is declared deterministic but its repeats differ';
  }
  return message;
}
