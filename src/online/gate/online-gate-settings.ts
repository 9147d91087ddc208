/**
 * The online gate's defaults, each written once here with its reason, and
 * τ from the A/A calibration.
 *
 * The statistical defaults (mixing SDs, confirmation units) were tuned on
 * the simulated cold-email world of src/online/simulation/ with
 * `npm run bench:online` (docs/online.md, "Benchmark"): a 5% base reply
 * rate, 0.5% unsubscribe rate. Two settings depend on the study's traffic
 * and have no good constant: the minimum units (the bench uses about a week
 * of traffic per arm, 20 000, so a decision window spans a weekly cycle and
 * a novelty effect fades before the confirmation window opens) and the unit
 * budget (the bench: 30 000 per arm).
 *
 * @module
 */
import { armMoments } from '../statistics/arm-moments.ts';
import type { ArmPair, OnlineGateSettings, OnlineMetric } from '../types.ts';

/** The online gate's defaults; see each field. */
export const DEFAULT_ONLINE_GATE_SETTINGS: Readonly<OnlineGateSettings> = Object.freeze({
  /** The level for the anytime-valid primary test and the harm stop. */
  alpha: 0.05,
  /** As the offline shadow: at most 5% of candidates with no lasting gain confirm by chance. */
  shadowAlpha: 0.05,
  /** The industry's SRM threshold (issue 33), on the always-valid p-value so daily looks do not raise false alarms. */
  srmAlpha: 0.001,
  /** No calibration, no margin. */
  tau: 0,
  /** As the offline gate's thresholdK: a margin of one standard error of Δ at the A/A's noise. */
  thresholdK: 1,
  /**
   * Below this many analysed units per arm the primary is not judged: the
   * normal approximation of a 5% rate's mean needs np ≳ 50 events per arm.
   * A floor, not a recommendation: set it to about a week of traffic per arm
   * when novelty effects are plausible (see the module comment).
   */
  minUnitsPerArm: 1000,
  /**
   * Fresh units per arm of the confirmation window: a one-sided Welch test at
   * shadowAlpha = 0.05 on 8 000 units per arm has about 90% power for a +20%
   * lift at a 5% base rate (Δ = 0.01, SE ≈ 0.0035).
   */
  confirmationUnits: 8000,
  /** No unit budget unless the study sets one (its traffic budget). */
  maxUnitsPerArm: Number.POSITIVE_INFINITY,
  /** An even split. */
  split: 0.5,
  /**
   * τ_mix = 0.05 per-unit SDs: the mSPRT is most powerful near the effects
   * it mixes over (Johari et al. 2017); at a 5% base rate a +20% lift
   * is 0.046 per-unit SDs.
   */
  mixingEffectSize: 0.05,
  /**
   * The SRM test mixes over share deviations of SD 0.005: 2% of one arm's
   * exposures lost at a 50/50 split moves the share by 0.005.
   */
  srmMixingShareSd: 0.005,
});

/**
 * τ for the online gate from the A/A calibrations of the incumbent against
 * itself: the rolling maximum, over the calibrations given (the recent ones),
 * of the metric's per-unit noise SD measured by each (the pooled SD of its
 * two arms; binary metrics √(p̂(1 − p̂))). 0 with no calibration, or none
 * with at least 2 units per arm. As the offline gate's τ (DESIGN.md §3):
 * the gate's margin is thresholdK × τ × √(1/n_c + 1/n_i).
 */
export function calibrationTau(calibrations: readonly ArmPair[], metric: OnlineMetric): number {
  let tau = 0;
  for (const calibration of calibrations) {
    const first = armMoments(calibration.incumbent, metric.kind);
    const second = armMoments(calibration.candidate, metric.kind);
    if (first.units < 2 || second.units < 2) continue;
    tau = Math.max(tau, Math.sqrt((first.variance + second.variance) / 2));
  }
  return tau;
}
