/**
 * Standardized mean differences between two independent samples: Cohen's d
 * and its small-sample-corrected form, Hedges' g.
 *
 * Checked against direct NumPy computations printed by
 * `scripts/reference/stats_reference.py` (see `effect-size.test.ts`).
 *
 * @module
 */
import { mean, variance } from './descriptive.ts';
import { assertFiniteSample } from './sample-validation.ts';

/**
 * Pooled standard deviation of two samples,
 * √(((nₐ − 1)·vₐ + (n_b − 1)·v_b) / (nₐ + n_b − 2)), with sample variances v
 * (n − 1 denominators). Cohen (1988), *Statistical Power Analysis for the
 * Behavioral Sciences*, 2nd ed., §2.5.
 *
 * @param a - First sample: finite numbers, at least 2.
 * @param b - Second sample: finite numbers, at least 2.
 * @returns The pooled standard deviation, in the unit of the samples.
 * @throws RangeError when a sample has fewer than 2 values or a non-finite value.
 *
 * @example
 * ```ts
 * pooledStandardDeviation([1, 2, 3], [4, 5, 6, 7, 8]); // √(12 / 6) ≈ 1.414
 * ```
 */
export function pooledStandardDeviation(a: readonly number[], b: readonly number[]): number {
  assertFiniteSample(a, 2, 'a', 'the pooled standard deviation needs a sample variance per group');
  assertFiniteSample(b, 2, 'b', 'the pooled standard deviation needs a sample variance per group');
  const pooledVariance = ((a.length - 1) * variance(a) + (b.length - 1) * variance(b)) / (a.length + b.length - 2);
  return Math.sqrt(pooledVariance);
}

/**
 * Cohen's d: (mean(a) − mean(b)) / pooled standard deviation (see
 * {@link pooledStandardDeviation}). Cohen (1988), §2.2 and §2.5.
 * Positive when `a` has the larger mean; unitless (in pooled standard
 * deviations). Conventional reading: 0.2 small, 0.5 medium, 0.8 large.
 *
 * Degenerate case: when both samples are constant the pooled SD is 0; d is 0
 * if the means are equal and `±Infinity` (sign of the mean difference)
 * otherwise.
 *
 * @param a - First sample: finite numbers, at least 2.
 * @param b - Second sample: finite numbers, at least 2.
 * @returns Cohen's d.
 * @throws RangeError when a sample has fewer than 2 values or a non-finite value.
 *
 * @example
 * ```ts
 * cohensD([1, 2, 3], [4, 5, 6, 7, 8]); // −4 / √2 ≈ −2.828
 * ```
 */
export function cohensD(a: readonly number[], b: readonly number[]): number {
  const pooled = pooledStandardDeviation(a, b);
  const meanDifference = mean(a) - mean(b);
  if (pooled === 0) return meanDifference === 0 ? 0 : meanDifference > 0 ? Infinity : -Infinity;
  return meanDifference / pooled;
}

/**
 * Hedges' g: Cohen's d times the small-sample bias correction
 * J ≈ 1 − 3 / (4·(nₐ + n_b) − 9), i.e. 1 − 3 / (4·df − 1) with
 * df = nₐ + n_b − 2.
 *
 * This is the widely used approximation to the exact correction
 * J(df) = Γ(df/2) / (√(df/2) · Γ((df − 1)/2)) (Hedges 1981, "Distribution
 * theory for Glass's estimator of effect size and related estimators",
 * Journal of Educational Statistics 6(2); approximation in Hedges & Olkin
 * 1985, *Statistical Methods for Meta-Analysis*, and Borenstein et al. 2009,
 * *Introduction to Meta-Analysis*, eq. 4.22; the same formula as pingouin's
 * `compute_effsize(eftype='hedges')`). The approximation overstates the
 * exact J by 1.3% at nₐ + n_b = 4, by at most 0.27% from nₐ + n_b = 6, 0.04%
 * from 12 and 0.01% from 20; the reference script prints both versions of g.
 *
 * Degenerate case: as {@link cohensD} (0 or `±Infinity`).
 *
 * @param a - First sample: finite numbers, at least 2.
 * @param b - Second sample: finite numbers, at least 2.
 * @returns Hedges' g (unitless, same sign as d, slightly smaller in magnitude).
 * @throws RangeError when a sample has fewer than 2 values or a non-finite value.
 *
 * @example
 * ```ts
 * hedgesG([1, 2, 3], [4, 5, 6, 7, 8]); // −2.828 × (1 − 3/23) ≈ −2.460
 * ```
 */
export function hedgesG(a: readonly number[], b: readonly number[]): number {
  const correction = 1 - 3 / (4 * (a.length + b.length) - 9);
  return cohensD(a, b) * correction;
}
