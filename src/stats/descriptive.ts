/**
 * Descriptive statistics of one sample: mean, sample variance (n − 1),
 * standard deviation and standard error of the mean.
 *
 * Formulas are the textbook ones and match NumPy (`np.mean`,
 * `np.var(ddof=1)`, `np.std(ddof=1)`) to floating-point rounding; the
 * variance uses the two-pass algorithm (mean first, then squared deviations),
 * as NumPy does.
 *
 * @module
 */
import { assertFiniteSample } from './sample-validation.ts';

/**
 * Arithmetic mean, Σx / n.
 *
 * @param values - Finite numbers, at least one.
 * @returns The mean, in the unit of `values`.
 * @throws RangeError when `values` is empty or holds a non-finite number.
 *
 * @example
 * ```ts
 * mean([1, 2, 3, 6]); // 3
 * ```
 */
export function mean(values: readonly number[]): number {
  assertFiniteSample(values, 1, 'values', 'the mean of an empty sample is undefined');
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/**
 * Unbiased sample variance, Σ(x − x̄)² / (n − 1) (Bessel's correction;
 * NumPy `np.var(values, ddof=1)`).
 *
 * @param values - Finite numbers, at least two.
 * @returns The variance, in the unit of `values` squared; 0 for a constant
 *   sample.
 * @throws RangeError when `values` has fewer than 2 elements or holds a
 *   non-finite number.
 *
 * @example
 * ```ts
 * variance([2, 4, 4, 4, 5, 5, 7, 9]); // 32 / 7 ≈ 4.571
 * ```
 */
export function variance(values: readonly number[]): number {
  assertFiniteSample(values, 2, 'values', 'the sample variance divides by n − 1');
  const center = mean(values);
  let sumOfSquares = 0;
  for (const value of values) {
    const deviation = value - center;
    sumOfSquares += deviation * deviation;
  }
  return sumOfSquares / (values.length - 1);
}

/**
 * Sample standard deviation, √{@link variance} (NumPy `np.std(values, ddof=1)`).
 *
 * @param values - Finite numbers, at least two.
 * @returns The standard deviation, in the unit of `values`.
 * @throws RangeError when `values` has fewer than 2 elements or holds a
 *   non-finite number.
 *
 * @example
 * ```ts
 * standardDeviation([1, 3]); // √2 ≈ 1.414
 * ```
 */
export function standardDeviation(values: readonly number[]): number {
  return Math.sqrt(variance(values));
}

/**
 * Standard error of the mean, s / √n with s the sample standard deviation
 * (`scipy.stats.sem(values, ddof=1)`).
 *
 * @param values - Finite numbers, at least two.
 * @returns The standard error, in the unit of `values`.
 * @throws RangeError when `values` has fewer than 2 elements or holds a
 *   non-finite number.
 *
 * @example
 * ```ts
 * standardError([1, 3]); // √2 / √2 = 1
 * ```
 */
export function standardError(values: readonly number[]): number {
  return standardDeviation(values) / Math.sqrt(values.length);
}
