/**
 * The defaults of a study's run settings that are not a plain schema default
 * of one key: written once here, read by the `kloop.yaml` schema
 * (src/config/config.ts), the study builder (src/study/study-settings.ts, the
 * one place both `kloop run` and `createStudy` compose their settings) and
 * `kloop config` (src/report/effective-config.ts).
 *
 * The gate's and the stopping criteria's own defaults (`gate.alpha` 0.05,
 * `stopping.maxExperiments` 60, …) are the schema's (`studyConfigSchema`),
 * which both front ends parse with.
 *
 * @module
 */

/** Candidates a proposer is asked for per round (`proposer.candidatesPerRound`; `candidatesPerRound` of `createStudy`). */
export const DEFAULT_CANDIDATES_PER_ROUND = 6;

/** Candidates evaluated at once (`proposer.concurrency`; `concurrency` of `createStudy`). */
export const DEFAULT_PROPOSER_CONCURRENCY = 4;

/** Seed of every random choice (`seed`). */
export const DEFAULT_SEED = 1;

/** Noise repeats of the incumbent during calibration (`gate.noiseRepeats`). */
export const DEFAULT_NOISE_REPEATS = 8;

/** Signal repeats of incumbent and ablated artifact during calibration (`gate.signalRepeats`). */
export const DEFAULT_SIGNAL_REPEATS = 3;

/** Calibrations the rolling maximum of the noise looks back over (`gate.calibrationWindow`). */
export const DEFAULT_CALIBRATION_WINDOW = 5;

/** Smallest Cohen's d between the incumbent and an ablated artifact (`gate.minCohensD`, Cohen's "medium"). */
export const DEFAULT_MIN_COHENS_D = 0.5;

/** The incumbent of a stochastic executor is evaluated with at most this many times `gate.repeats` repeats. */
export const INCUMBENT_REPEATS_PER_REPEAT = 4;

/**
 * `gate.requireCalibration` when it is not set: true for an executor that may
 * sample (its run-to-run noise must be measured before τ means anything),
 * false for a deterministic one (its noise is 0 by construction).
 */
export function defaultRequireCalibration(deterministic: boolean): boolean {
  return !deterministic;
}

/**
 * Whether `gate.racing` is on when it is not set (or set without `enabled`):
 * on for an executor that may sample (every evaluation is paid for), off for
 * a deterministic one.
 */
export function defaultRacingEnabled(deterministic: boolean): boolean {
  return !deterministic;
}

/**
 * `gate.incumbentRepeats` when it is not set: {@link INCUMBENT_REPEATS_PER_REPEAT}
 * × `repeats` for an executor that may sample; `repeats` for a deterministic
 * one (its repeats are identical, so it is never topped up).
 */
export function defaultIncumbentRepeats(repeats: number, deterministic: boolean): number {
  return deterministic ? repeats : INCUMBENT_REPEATS_PER_REPEAT * repeats;
}
