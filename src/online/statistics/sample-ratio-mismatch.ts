/**
 * The sample-ratio-mismatch (SRM) check: do the assignment counts fit the
 * configured split? A mismatch means assignment or exposure logging is
 * broken (dropped exposures, a redirect that loses one arm's users, a bot
 * filter applied to one arm), and the experiment is invalid, never a result
 * (Fabijan et al., "Diagnosing Sample Ratio Mismatch in Online Controlled
 * Experiments", KDD 2019).
 *
 * Two p-values from the same χ² statistic:
 *
 * - **fixed-horizon**: Pearson's χ² goodness of fit of the assignment counts
 *   against the counts the split expects, summed over periods of constant
 *   split (one per ramp step; each period has 2 cells and 1 degree of
 *   freedom), p = P(χ²_df ≥ χ²) with df = the periods that have units.
 *   Matches `scipy.stats.chisquare(f_obs, f_exp, ddof=periods − 1)` on the
 *   2 × periods cells (for one period: `chisquare([incumbent, candidate],
 *   [n(1 − s), n s])`);
 * - **always-valid**: the same deviations under continuous monitoring. For
 *   one period with n units and candidate share s, χ² = (ŝ − s)² / V with
 *   V = s(1 − s)/n, and the mixture SPRT of Johari et al. (KDD 2017; see
 *   ./mixture-sprt.ts) on the share gives
 *   Λ = √(V/(V + τ²)) · exp(τ² χ² / (2 (V + τ²))); periods follow one
 *   another in time, so the product of their Λ is still a test martingale,
 *   and p = min over looks of 1/Λ (Ville's inequality). Checked at every
 *   look (as the gate does), the fixed-horizon p-value would raise false
 *   alarms well above its level; the always-valid one keeps them at most
 *   srmAlpha per experiment (a sequential SRM test in the spirit of Lindon &
 *   Malek, "Anytime-Valid Inference for Multinomial Count Data", NeurIPS
 *   2022, which Optimizely ships).
 *
 * @module
 */
import { chiSquareCdf, normalCdf } from '../../stats/distributions.ts';
import type { AssignmentPeriod } from '../types.ts';
import { mixtureSprt } from './mixture-sprt.ts';

/** Result of Pearson's χ² goodness-of-fit test. */
export interface ChiSquareGoodnessOfFit {
  /** Σ (observed − expected)² / expected. */
  readonly statistic: number;
  readonly degreesOfFreedom: number;
  /** P(χ²_df ≥ statistic), in [0, 1]; 1 when df = 0. */
  readonly pValue: number;
}

/**
 * Pearson's χ² goodness-of-fit test, as `scipy.stats.chisquare(observed,
 * expected, ddof)`: df = cells − 1 − ddof.
 *
 * @throws RangeError when the lengths differ, a count is negative or not
 *   finite, an expected count is not positive, or df < 0
 */
export function chiSquareGoodnessOfFit(
  observed: readonly number[],
  expected: readonly number[],
  ddof = 0,
): ChiSquareGoodnessOfFit {
  if (observed.length !== expected.length)
    throw new RangeError(
      `observed and expected need the same number of cells; got ${observed.length} and ${expected.length}.`,
    );
  let statistic = 0;
  observed.forEach((count, index) => {
    const wanted = expected[index]!;
    if (!(Number.isFinite(count) && count >= 0))
      throw new RangeError(`observed[${index}] must be a finite count ≥ 0; got ${count}.`);
    if (!(Number.isFinite(wanted) && wanted > 0))
      throw new RangeError(`expected[${index}] must be a finite number > 0; got ${wanted}.`);
    statistic += ((count - wanted) * (count - wanted)) / wanted;
  });
  const degreesOfFreedom = observed.length - 1 - ddof;
  if (degreesOfFreedom < 0)
    throw new RangeError(`degrees of freedom ${degreesOfFreedom} < 0 (${observed.length} cells, ddof ${ddof}).`);
  // One degree of freedom: χ²₁ is Z², so P(χ²₁ ≥ x) = 2Φ(−√x), accurate far into the tail (1 − cdf is not below ~1e-9).
  const pValue =
    degreesOfFreedom === 0
      ? 1
      : degreesOfFreedom === 1
        ? Math.min(1, 2 * normalCdf(-Math.sqrt(statistic), 0, 1))
        : Math.min(1, Math.max(0, 1 - chiSquareCdf(statistic, degreesOfFreedom)));
  return { statistic, degreesOfFreedom, pValue };
}

/** Settings of {@link sampleRatioMismatch}. */
export interface SampleRatioMismatchOptions {
  /** The candidate's share for periods that do not state theirs, in (0, 1). */
  readonly split: number;
  /** τ of the always-valid test: the mixing SD of the share's deviation, > 0. */
  readonly mixingShareSd: number;
  /** The always-valid p-value of the earlier looks, in [0, 1]. Default 1. */
  readonly previousPValue?: number;
}

/** The SRM evidence at one look. */
export interface SampleRatioMismatchResult {
  /** Pearson's χ² over the periods' cells, its df and fixed-horizon p-value. */
  readonly chiSquare: ChiSquareGoodnessOfFit;
  /** The always-valid p-value (running minimum over looks), in [0, 1]. */
  readonly sequentialPValue: number;
  /** Units assigned to each arm over all periods. */
  readonly incumbent: number;
  readonly candidate: number;
  /** The candidate's share the periods' splits expect, weighted by their units (NaN with no unit). */
  readonly expectedShare: number;
}

/**
 * The SRM check of assignment counts against the split (see the module
 * comment): Pearson's χ² with its fixed-horizon p-value and the always-valid
 * p-value of the same deviations. Periods without units are left out.
 *
 * @throws RangeError on a count that is not an integer ≥ 0 or a share outside (0, 1)
 *
 * @example
 * ```ts
 * const srm = sampleRatioMismatch([{ incumbent: 50_000, candidate: 49_000 }], { split: 0.5, mixingShareSd: 0.005 });
 * srm.chiSquare.pValue; // ≈ 0.0015 (χ² = 10.1, df = 1)
 * srm.sequentialPValue; // ≈ 0.034: one look at this deviation is not yet proof under continuous monitoring
 * ```
 */
export function sampleRatioMismatch(
  periods: readonly AssignmentPeriod[],
  options: SampleRatioMismatchOptions,
): SampleRatioMismatchResult {
  const observed: number[] = [];
  const expected: number[] = [];
  let logLikelihoodRatio = 0;
  let incumbent = 0;
  let candidate = 0;
  let expectedCandidates = 0;
  periods.forEach((period, index) => {
    const share = period.candidateShare ?? options.split;
    if (!(share > 0 && share < 1))
      throw new RangeError(`assignments[${index}].candidateShare must be in (0, 1); got ${share}.`);
    for (const arm of ['incumbent', 'candidate'] as const) {
      if (!(Number.isInteger(period[arm]) && period[arm] >= 0))
        throw new RangeError(`assignments[${index}].${arm} must be an integer ≥ 0; got ${period[arm]}.`);
    }
    const units = period.incumbent + period.candidate;
    if (units === 0) return;
    incumbent += period.incumbent;
    candidate += period.candidate;
    expectedCandidates += units * share;
    observed.push(period.incumbent, period.candidate);
    expected.push(units * (1 - share), units * share);
    const look = mixtureSprt(period.candidate / units - share, (share * (1 - share)) / units, {
      alpha: 0.5,
      mixingStandardDeviation: options.mixingShareSd,
    });
    logLikelihoodRatio += look.logLikelihoodRatio;
  });
  const periodsWithUnits = observed.length / 2;
  const chiSquare =
    periodsWithUnits === 0
      ? { statistic: 0, degreesOfFreedom: 0, pValue: 1 }
      : chiSquareGoodnessOfFit(observed, expected, periodsWithUnits - 1);
  const sequentialPValue = Math.min(options.previousPValue ?? 1, 1, Math.exp(-logLikelihoodRatio));
  return {
    chiSquare,
    sequentialPValue,
    incumbent,
    candidate,
    expectedShare: expectedCandidates / (incumbent + candidate),
  };
}
