/**
 * Student t-tests for a difference in means: Welch's unequal-variance test
 * for two independent samples and the paired t-test for matched samples.
 *
 * Reference implementation: SciPy 1.17 `scipy.stats.ttest_ind(a, b,
 * equal_var=False)` and `scipy.stats.ttest_rel(a, b)`; the tests in
 * `t-test.test.ts` check agreement to 1e-6 on values printed by
 * `scripts/reference/stats_reference.py`. The Student t distribution function
 * is `@stdlib/stats-base-dists-t-cdf`.
 *
 * Caveat for callers: a p-value is evidence for one comparison. Testing many
 * candidates against the same incumbent and keeping the best inflates the
 * false-positive rate (repeated testing); the acceptance gate must account
 * for it (see DESIGN.md §3, "Shadow").
 *
 * @module
 */
import { studentTCdf } from './distributions.ts';
import { type Alternative, resolveAlternative } from './alternative.ts';
import { mean, variance } from './descriptive.ts';
import { assertFiniteSample, assertSameLength } from './sample-validation.ts';

/** Options of {@link welchTTest} and {@link pairedTTest}. */
export interface TTestOptions {
  /**
   * The alternative hypothesis about mean(a) − mean(b) (paired: the mean of
   * the differences a − b): `'two-sided'` (≠ 0), `'greater'` (> 0) or
   * `'less'` (< 0). Default `'two-sided'`.
   */
  readonly alternative?: Alternative;
}

/** Result of a t-test. */
export interface TTestResult {
  /**
   * The t statistic: the mean difference divided by its standard error.
   * Positive when `a` has the larger mean. `±Infinity` when both samples
   * (paired: the differences) have zero variance and the means differ; 0 when
   * they have zero variance and equal means.
   */
  readonly t: number;
  /** Degrees of freedom of the reference t distribution (may be fractional for Welch). */
  readonly df: number;
  /** p-value in [0, 1] for the requested alternative. */
  readonly pValue: number;
}

/**
 * Welch's t-test for the difference in means of two independent samples that
 * may differ in size and variance.
 *
 * With sample means m, sample variances v (n − 1 denominators) and sizes n:
 * `t = (mₐ − m_b) / √(vₐ/nₐ + v_b/n_b)` and the Welch–Satterthwaite degrees of
 * freedom `df = (vₐ/nₐ + v_b/n_b)² / ((vₐ/nₐ)²/(nₐ − 1) + (v_b/n_b)²/(n_b − 1))`
 * (Welch 1947, "The generalization of 'Student's' problem when several
 * different population variances are involved", Biometrika 34; Satterthwaite
 * 1946). The p-value comes from the Student t distribution with `df`
 * degrees of freedom: `'less'` → P(T ≤ t), `'greater'` → P(T ≥ t),
 * `'two-sided'` → 2·P(T ≥ |t|). Matches `scipy.stats.ttest_ind(a, b,
 * equal_var=False, alternative=...)`.
 *
 * Degenerate case (defined here; SciPy returns NaN or reports df = 1): when
 * both samples have zero variance the standard error is 0 and `df` is
 * reported as nₐ + n_b − 2. Equal means give `t = 0` and `pValue = 1` for
 * every alternative (no evidence of any difference). Different means give
 * `t = ±Infinity` and `pValue` 0 when the sign agrees with the alternative
 * (or for `'two-sided'`), 1 otherwise. When only one sample is constant the
 * ordinary formulas apply (df = n − 1 of the other sample).
 *
 * @param a - First sample: finite numbers, at least 2.
 * @param b - Second sample: finite numbers, at least 2.
 * @param options - See {@link TTestOptions}; `alternative` defaults to `'two-sided'`.
 * @returns `{ t, df, pValue }`.
 * @throws RangeError when a sample has fewer than 2 values or a non-finite
 *   value, or when `alternative` is not one of the three names.
 *
 * @example
 * ```ts
 * const { t, df, pValue } = welchTTest([0.71, 0.74, 0.69, 0.73], [0.66, 0.70, 0.61, 0.68, 0.65], {
 *   alternative: 'greater',
 * });
 * ```
 */
export function welchTTest(a: readonly number[], b: readonly number[], options: TTestOptions = {}): TTestResult {
  const alternative = resolveAlternative(options.alternative);
  assertFiniteSample(a, 2, 'a', 'Welch’s t-test needs a sample variance per group');
  assertFiniteSample(b, 2, 'b', 'Welch’s t-test needs a sample variance per group');
  return welchFromMoments(
    { mean: mean(a), variance: variance(a), size: a.length },
    { mean: mean(b), variance: variance(b), size: b.length },
    alternative,
  );
}

/** A sample summarised by its size, mean and unbiased variance (n − 1 denominator). */
export interface SampleMoments {
  /** Number of observations, an integer ≥ 2. */
  readonly size: number;
  /** The sample mean. */
  readonly mean: number;
  /** The sample variance with Bessel's correction (n − 1), ≥ 0. */
  readonly variance: number;
}

/**
 * Welch's t-test from each sample's size, mean and unbiased variance instead
 * of the observations: the same formulas, degenerate cases and p-values as
 * {@link welchTTest} (so `scipy.stats.ttest_ind_from_stats(mean1, std1,
 * nobs1, mean2, std2, nobs2, equal_var=False, alternative=...)` with
 * std = √variance). For large samples kept as sufficient statistics (units,
 * sums, sums of squares), e.g. an online experiment's arms.
 *
 * @throws RangeError when a size is below 2 or not an integer, a mean or
 *   variance is not finite, a variance is negative, or `alternative` is unknown.
 */
export function welchTTestFromMoments(a: SampleMoments, b: SampleMoments, options: TTestOptions = {}): TTestResult {
  const alternative = resolveAlternative(options.alternative);
  for (const [label, moments] of [
    ['a', a],
    ['b', b],
  ] as const) {
    if (!Number.isInteger(moments.size) || moments.size < 2)
      throw new RangeError(
        `${label}.size must be an integer ≥ 2 (Welch’s t-test needs a sample variance per group); got ${moments.size}.`,
      );
    if (!Number.isFinite(moments.mean))
      throw new RangeError(`${label}.mean must be a finite number; got ${moments.mean}.`);
    if (!(Number.isFinite(moments.variance) && moments.variance >= 0))
      throw new RangeError(`${label}.variance must be a finite number ≥ 0; got ${moments.variance}.`);
  }
  return welchFromMoments(a, b, alternative);
}

function welchFromMoments(a: SampleMoments, b: SampleMoments, alternative: Alternative): TTestResult {
  const varianceOfMeanA = a.variance / a.size;
  const varianceOfMeanB = b.variance / b.size;
  const squaredStandardError = varianceOfMeanA + varianceOfMeanB;
  const meanDifference = a.mean - b.mean;
  if (squaredStandardError === 0) {
    return degenerateResult(meanDifference, a.size + b.size - 2, alternative);
  }
  const t = meanDifference / Math.sqrt(squaredStandardError);
  const df =
    (squaredStandardError * squaredStandardError) /
    ((varianceOfMeanA * varianceOfMeanA) / (a.size - 1) + (varianceOfMeanB * varianceOfMeanB) / (b.size - 1));
  return { t, df, pValue: studentTPValue(t, df, alternative) };
}

/**
 * Paired t-test: a one-sample t-test on the differences `dᵢ = aᵢ − bᵢ` of
 * matched observations (for example the scores of the same example ids under
 * two artifacts).
 *
 * `t = mean(d) / (sd(d) / √n)` with `df = n − 1` (Student 1908; any
 * statistics textbook). The p-value comes from the Student t distribution:
 * `'less'` → P(T ≤ t), `'greater'` → P(T ≥ t), `'two-sided'` → 2·P(T ≥ |t|).
 * Matches `scipy.stats.ttest_rel(a, b, alternative=...)`.
 *
 * Degenerate case (defined here; SciPy returns NaN for the first): when all
 * differences are equal their standard deviation is 0. If they are all zero,
 * `t = 0` and `pValue = 1` for every alternative. If they share a nonzero
 * value, `t = ±Infinity` and `pValue` is 0 when the sign agrees with the
 * alternative (or for `'two-sided'`), 1 otherwise. `df` is n − 1 throughout.
 *
 * @param a - First sample: finite numbers, at least 2, paired by index with `b`.
 * @param b - Second sample, same length as `a`.
 * @param options - See {@link TTestOptions}; `alternative` defaults to `'two-sided'`.
 * @returns `{ t, df, pValue }`.
 * @throws RangeError when the lengths differ, when there are fewer than 2
 *   pairs, when a value is not finite, or when `alternative` is unknown.
 *
 * @example
 * ```ts
 * const candidate = [0.62, 0.71, 0.55, 0.8];
 * const incumbent = [0.58, 0.69, 0.57, 0.71];
 * const { pValue } = pairedTTest(candidate, incumbent, { alternative: 'greater' });
 * ```
 */
export function pairedTTest(a: readonly number[], b: readonly number[], options: TTestOptions = {}): TTestResult {
  const alternative = resolveAlternative(options.alternative);
  assertSameLength(a, b);
  assertFiniteSample(a, 2, 'a', 'the paired t-test needs the variance of the differences');
  assertFiniteSample(b, 2, 'b', 'the paired t-test needs the variance of the differences');
  const differences = a.map((value, index) => value - (b[index] as number));
  const df = differences.length - 1;
  const squaredStandardError = variance(differences) / differences.length;
  const meanDifference = mean(differences);
  if (squaredStandardError === 0) {
    return degenerateResult(meanDifference, df, alternative);
  }
  const t = meanDifference / Math.sqrt(squaredStandardError);
  return { t, df, pValue: studentTPValue(t, df, alternative) };
}

/** The zero-standard-error case documented on both tests. */
function degenerateResult(meanDifference: number, df: number, alternative: Alternative): TTestResult {
  if (meanDifference === 0) return { t: 0, df, pValue: 1 };
  const t = meanDifference > 0 ? Infinity : -Infinity;
  return { t, df, pValue: studentTPValue(t, df, alternative) };
}

/**
 * p-value of a t statistic under Student's t distribution with `df` degrees
 * of freedom. Upper tails use the symmetry P(T ≥ t) = P(T ≤ −t), which keeps
 * small p-values accurate (no 1 − cdf cancellation).
 */
function studentTPValue(t: number, df: number, alternative: Alternative): number {
  if (t === Infinity) return alternative === 'less' ? 1 : 0;
  if (t === -Infinity) return alternative === 'greater' ? 1 : 0;
  switch (alternative) {
    case 'less':
      return studentTCdf(t, df);
    case 'greater':
      return studentTCdf(-t, df);
    case 'two-sided':
      return Math.min(1, 2 * studentTCdf(-Math.abs(t), df));
  }
}
