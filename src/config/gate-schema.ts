/** `gate:` of `kloop.yaml` (src/config/config.ts): the gate's settings, with racing. */
import { z } from 'zod';
import {
  DEFAULT_ADAPTIVE_REPEATS,
  DEFAULT_EARLY_ACCEPTANCE,
  DEFAULT_EARLY_TEST,
  DEFAULT_GATE_SETTINGS,
  DEFAULT_RETRIALS,
} from '../gate/gate-defaults.ts';
import type { EarlyAcceptanceRule, EarlyAcceptanceTest } from '../gate/sequential.ts';
import { count, nonNegative } from './schema-numbers.ts';
import {
  DEFAULT_CALIBRATION_WINDOW,
  DEFAULT_MIN_COHENS_D,
  DEFAULT_NOISE_REPEATS,
  DEFAULT_SIGNAL_REPEATS,
  defaultRacingEnabled,
} from './study-defaults.ts';

/** Default `gate.racing.batchSize`: example-repeats per batch. */
export const DEFAULT_RACING_BATCH_SIZE = 20;
/** Default `gate.racing.futilityLevel`: stop when the final test's predictive power is below this. */
export const DEFAULT_FUTILITY_LEVEL = 0.05;

/**
 * `gate.racing`: sequential evaluation in seeded batches with a futility
 * stop, and racing of a round's candidates (docs/gate.md, "Racing"). `true`
 * or `false`, or the settings. Default: on for a non-deterministic executor
 * (a sampled model: every evaluation is paid for), off for a deterministic one.
 */
const racingSchema = z.union([
  z.boolean(),
  z.strictObject({
    /** Race the candidates. Default: true for a non-deterministic executor, false for a deterministic one. */
    enabled: z.boolean().optional(),
    /** Example-repeats of the optimization partition per batch (integer ≥ 1). Default 20. */
    batchSize: count(1).default(DEFAULT_RACING_BATCH_SIZE),
    /**
     * Stop a candidate for futility when the predictive power of the final
     * gate test (the chance it would still pass, given the batches so far) is
     * below this, in [0, 1). 0 = only when the anytime-valid bound lies below
     * the margin. Default 0.05.
     */
    futilityLevel: z.number().min(0).lt(1).default(DEFAULT_FUTILITY_LEVEL),
    /**
     * Early acceptance on the optimization partition: interim looks at the end
     * of each complete repeat k (2 ≤ k < repeats) at levels from an α-spending
     * rule, the final look at what they left, so the false-accept rate stays ≤
     * alpha over the looks taken (src/gate/sequential.ts). `off`,
     * `obrien-fleming` or `haybittle-peto`. Default `off`.
     */
    earlyAcceptance: z.enum(['off', 'obrien-fleming', 'haybittle-peto']).default(DEFAULT_EARLY_ACCEPTANCE),
    /**
     * The test at an interim look: `gate` (the paired t-test and Welch's test
     * on the k run-level composites, as the final gate) or `shared-variance`
     * (the paired t-test with the calibrated run-shared noise in its
     * variance). Default `shared-variance`.
     */
    earlyTest: z.enum(['gate', 'shared-variance']).default(DEFAULT_EARLY_TEST),
  }),
]);

/** The racing settings a study runs with (early acceptance only when it is on). */
export interface StudyRacingSettings {
  batchSize: number;
  futilityLevel: number;
  earlyAcceptance?: EarlyAcceptanceRule;
  earlyTest?: EarlyAcceptanceTest;
}

export const gateSchema = z.strictObject({
  /** Significance level of the one-sided tests on the optimization partition, in (0, 1). Default 0.05. */
  alpha: z.number().gt(0).lt(1).default(DEFAULT_GATE_SETTINGS.alpha),
  /**
   * Level of the one-sided paired t-test on the shadow partition, in (0, 1):
   * the most a true zero shadow effect may confirm a gain by chance, per
   * decision that reaches the shadow. Default 0.05.
   */
  shadowAlpha: z.number().gt(0).lt(1).default(DEFAULT_GATE_SETTINGS.shadowAlpha),
  /** Evaluation repeats per artifact and partition. Default 1. */
  repeats: count(1).default(1),
  /** γ: required Δshadow / Δoptimization. Default 0.5. */
  generalizationRatio: nonNegative.default(DEFAULT_GATE_SETTINGS.generalizationRatio),
  /** m = this × SE of the shadow paired differences. Default 1. */
  shadowMarginSe: nonNegative.default(DEFAULT_GATE_SETTINGS.shadowMarginSe),
  /** Allowed per-example drop on anchors beyond measured noise, composite units. Default 0. */
  anchorTolerance: nonNegative.max(1).default(DEFAULT_GATE_SETTINGS.anchorTolerance),
  /** Smallest bigram Jaccard distance from every earlier delta, in [0, 1]. Default 0.2. */
  minDeltaDistance: z.number().min(0).max(1).default(0.2),
  /**
   * Times a delta refused by a noisy test (`not_significant`,
   * `not_confirmed`, `futility`) may be judged again when it comes back
   * against a changed incumbent; each re-trial is judged at α/K and
   * shadowAlpha/K (K = this), so the re-trials of a delta spend at most one
   * more α (src/loop/retrials.ts). 0: never. Default 2.
   */
  retrials: z.number().int().min(0).max(20).default(DEFAULT_RETRIALS),
  /** k in τ = k × rolling max noise SD (the gate compares Δ with τ·√(2/R)). Default 1. */
  thresholdK: nonNegative.default(DEFAULT_GATE_SETTINGS.thresholdK),
  /** An anchor may drop by anchorTolerance + anchorK × its per-example SD × √(2/R). Default 3. */
  anchorK: nonNegative.default(DEFAULT_GATE_SETTINGS.anchorK),
  /** Calibrations the rolling maximum looks back over. Default 5. */
  calibrationWindow: count(1).default(DEFAULT_CALIBRATION_WINDOW),
  /**
   * Most repeats the incumbent of a stochastic executor is evaluated with: it
   * starts at `repeats` and is topped up by `repeats` fresh samples each round
   * it stays the incumbent, up to this (integer ≥ 1; values below `repeats`
   * mean `repeats`). Default 4 × repeats. Ignored for a deterministic executor
   * (its repeats are identical: the default is then `repeats`).
   */
  incumbentRepeats: count(1).optional(),
  /**
   * Adaptive repeats: a candidate is evaluated once on a noise-free example
   * (calibrated per-example SD exactly 0 over ≥ 3 noise repeats, the
   * incumbent's repeats there all alike) when that draw agrees with the
   * incumbent's, and the incumbent is not topped up there
   * (src/gate/noise-free.ts). Ignored for a deterministic executor. Default true.
   */
  adaptiveRepeats: z.boolean().default(DEFAULT_ADAPTIVE_REPEATS),
  /** Smallest Cohen's d between incumbent and an ablated artifact. Default 0.5. */
  minCohensD: nonNegative.default(DEFAULT_MIN_COHENS_D),
  /**
   * Refuse to run without a calibration for the current fingerprint. Default:
   * true for a non-deterministic executor (a sampled model), false for a
   * deterministic one (its run-to-run noise is 0 by construction); the same
   * in `createStudy` (src/config/study-defaults.ts).
   */
  requireCalibration: z.boolean().optional(),
  /** Noise repeats of the incumbent during calibration (at least 2 for an SD). Default 8. */
  noiseRepeats: count(2).default(DEFAULT_NOISE_REPEATS),
  /** Signal repeats of incumbent and ablated artifact during calibration. Default 3. */
  signalRepeats: count(1).default(DEFAULT_SIGNAL_REPEATS),
  /** Racing: sequential evaluation with a futility stop (see {@link racingSettingsOf}). Default on for a non-deterministic executor. */
  racing: racingSchema.optional(),
});

/**
 * The racing settings a study runs with, or undefined when racing is off:
 * `gate.racing` as configured (`true`/`false`, or `{ enabled, batchSize,
 * futilityLevel, earlyAcceptance, earlyTest }`), on by default for a
 * non-deterministic executor; `earlyAcceptance` and `earlyTest` only when
 * early acceptance is on.
 */
export function racingSettingsOf(
  racing: z.output<typeof racingSchema> | undefined,
  deterministic: boolean,
): StudyRacingSettings | undefined {
  const settings = typeof racing === 'object' ? racing : undefined;
  const enabled = typeof racing === 'boolean' ? racing : (settings?.enabled ?? defaultRacingEnabled(deterministic));
  if (!enabled) return undefined;
  const early = settings?.earlyAcceptance ?? DEFAULT_EARLY_ACCEPTANCE;
  return {
    batchSize: settings?.batchSize ?? DEFAULT_RACING_BATCH_SIZE,
    futilityLevel: settings?.futilityLevel ?? DEFAULT_FUTILITY_LEVEL,
    ...(early !== 'off' ? { earlyAcceptance: early, earlyTest: settings?.earlyTest ?? DEFAULT_EARLY_TEST } : {}),
  };
}

/** `{ racing }` when racing is on, `{}` when off: to spread into a study's gate settings. */
export function withRacing(racing: StudyRacingSettings | undefined): {
  racing?: StudyRacingSettings;
} {
  return racing === undefined ? {} : { racing };
}
