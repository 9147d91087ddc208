/**
 * When a raced evaluation stops early: the futility rule.
 *
 * After each batch, the candidate's paired differences against the incumbent
 * (candidate's composite of an example-repeat − the incumbent's mean
 * composite of that example over its repeats; examples valid for both) give
 * the observed gain Δ̂ over m pairs. The evaluation stops for **futility** when
 * either
 *
 * 1. the **predictive power** of the final fixed-n gate — the chance, given
 *    the data so far, that the full evaluation's Δ will exceed the gain the
 *    gate needs — is below `futilityLevel` (Spiegelhalter, Freedman &
 *    Blackburn 1986; flat prior; {@link predictivePower}), or
 * 2. the **anytime-valid bound** (the betting confidence sequence at α,
 *    Waudby-Smith & Ramdas 2024) lies wholly below the margin: the true gain
 *    is significantly smaller than what the gate requires, whenever we look.
 *
 * A futility stop only ever refuses: it can never raise the false-accept
 * rate; it costs some power (recall), which `npm run bench:gate` measures.
 * No candidate is accepted early by this rule: one that is not stopped is
 * evaluated in full and the gate decides exactly as without racing — unless
 * early acceptance (`earlyAcceptance`, src/gate/sequential.ts, off by
 * default) passes it at an interim look (early-looks.ts).
 *
 * The inputs err toward continuing (so toward the full evaluation):
 *
 * - the gain the gate needs, c = max(margin, z₁₋α · σ · √(1/R_c + 1/R_i),
 *   z₁₋α · s/√N): the margin, the Welch test's critical gain at the
 *   calibrated run-to-run SD σ (z, not the larger t quantile), and the
 *   paired test's with every example-repeat counted as independent
 *   (the smallest standard error it could have);
 * - the variance of one pair, v = max(s², n · σ²): the observed variance, or
 *   the one that gives a run of n examples the calibrated SD σ (noise shared
 *   by a run's examples, which the observed spread within a batch hides).
 *
 * @module
 */
import type { EarlyAcceptanceRule, EarlyAcceptanceTest } from '../sequential.ts';
import { differenceIsBelow, mean, normalQuantile, predictivePower, variance } from '../../stats/index.ts';

/** The settings of a raced evaluation (`gate.racing` in kloop.yaml). */
export interface RacingSettings {
  /** Example-repeats per batch (integer ≥ 1). */
  readonly batchSize: number;
  /** Stop for futility when the predictive power of the final test is below this, in [0, 1). 0 = never on predictive power. */
  readonly futilityLevel: number;
  /** Early acceptance's spending rule (src/gate/sequential.ts); absent or `off`: no interim look. */
  readonly earlyAcceptance?: EarlyAcceptanceRule;
  /** The test at an interim look. Default `shared-variance` (DEFAULT_EARLY_TEST). */
  readonly earlyTest?: EarlyAcceptanceTest;
}

/** What the futility rule knows of the decision that would follow. */
export interface FutilityContext {
  /**
   * The least variance of one paired difference: n · σ², the variance that
   * gives a run of the n examples the calibrated run-to-run SD σ (so noise
   * shared by a run's examples is counted). 0 without a calibration.
   */
  readonly pairVarianceFloor: number;
  /** σ of the final Welch test: the run-to-run SD of one run's composite on the partition (0 without a calibration). */
  readonly runNoiseSd: number;
  /** R_c: the candidate's repeats. */
  readonly candidateRepeats: number;
  /** R_i: the incumbent's repeats. */
  readonly incumbentRepeats: number;
  /**
   * The least gain the final check requires, composite units: the gate's
   * margin τ·√(1/R_c + 1/R_i) on optimization; on the shadow, γ·Δopt − m
   * (and above 0).
   */
  readonly margin: number;
  /** The level of the final test (gate.alpha; shadowAlpha on the shadow) and of the anytime-valid bound. */
  readonly alpha: number;
  /** Whether the executor samples (the final gate then also runs Welch's test on run-level composites). */
  readonly stochastic: boolean;
}

/** Why a raced evaluation stopped early, or null. */
export type FutilityReason = 'predictive_power' | 'bound';

/** The assessment of a candidate after a batch. */
export interface FutilityAssessment {
  /** m: paired differences so far (valid for both). */
  readonly pairs: number;
  /** Δ̂: their mean (composite units); 0 without pairs. */
  readonly delta: number;
  /** v: the variance of one pair used by the predictive power. */
  readonly variance: number;
  /** c: the gain the final gate is estimated to need. */
  readonly critical: number;
  /** The predictive power of the final test; 1 when it cannot be computed yet (fewer than 2 pairs). */
  readonly predictivePower: number;
  /** True when the anytime-valid bound lies wholly below the margin. */
  readonly boundBelowMargin: boolean;
  /** The rule that stopped it, or null (continue). */
  readonly futile: FutilityReason | null;
}

/**
 * Applies the futility rule (see the module comment) to the paired
 * differences observed so far.
 *
 * @param differences paired differences in [−1, 1], in plan order
 * @param remaining example-repeats of the plan not evaluated yet
 */
export function assessFutility(
  differences: readonly number[],
  remaining: number,
  context: FutilityContext,
  settings: RacingSettings,
): FutilityAssessment {
  const pairs = differences.length;
  if (pairs < 2) {
    return {
      pairs,
      delta: pairs === 0 ? 0 : differences[0]!,
      variance: 0,
      critical: context.margin,
      predictivePower: 1,
      boundBelowMargin: false,
      futile: null,
    };
  }
  const delta = mean(differences);
  const observedVariance = variance(differences);
  const pairVariance = Math.max(observedVariance, context.pairVarianceFloor);
  const planned = pairs + Math.max(0, remaining);
  const z = normalQuantile(1 - context.alpha);
  const welchCritical =
    context.stochastic && context.candidateRepeats >= 2 && context.incumbentRepeats >= 2
      ? z * context.runNoiseSd * Math.sqrt(1 / context.candidateRepeats + 1 / context.incumbentRepeats)
      : 0;
  const pairedCritical = z * Math.sqrt(observedVariance / planned);
  const critical = Math.max(context.margin, welchCritical, pairedCritical);
  const power = predictivePower({ mean: delta, variance: pairVariance, observed: pairs, planned, critical });
  const boundBelowMargin = differenceIsBelow(clip(differences), context.margin, { alpha: context.alpha });
  const futile: FutilityReason | null =
    remaining <= 0 ? null : power < settings.futilityLevel ? 'predictive_power' : boundBelowMargin ? 'bound' : null;
  return { pairs, delta, variance: pairVariance, critical, predictivePower: power, boundBelowMargin, futile };
}

/** Differences clipped to [−1, 1] (composites of a simulation may leave [0, 1] by a little). */
export function clip(differences: readonly number[]): number[] {
  return differences.map((difference) => Math.min(1, Math.max(-1, difference)));
}
