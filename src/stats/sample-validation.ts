/**
 * Input checks shared by the statistics module (internal; not re-exported).
 *
 * Every public function of `src/stats` validates its samples here so that an
 * undefined statistic is a clear `RangeError`, never a silent `NaN`.
 */

/**
 * Throws a `RangeError` unless `values` holds at least `minimumLength` finite
 * numbers.
 *
 * @param values - The sample to check.
 * @param minimumLength - Smallest accepted length (for example 2 for a sample
 *   variance).
 * @param label - Name of the argument, quoted in the error message.
 * @param reason - Why the minimum exists, quoted in the error message.
 * @throws RangeError when the sample is shorter than `minimumLength` or holds
 *   a value that is not a finite number (`NaN`, `±Infinity`).
 */
export function assertFiniteSample(
  values: readonly number[],
  minimumLength: number,
  label: string,
  reason: string,
): void {
  if (values.length < minimumLength) {
    throw new RangeError(`${label} needs at least ${minimumLength} value(s) (${reason}); got ${values.length}.`);
  }
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new RangeError(`${label}[${index}] must be a finite number; got ${String(value)}.`);
    }
  }
}

/**
 * Throws a `RangeError` unless two paired samples have the same length.
 *
 * @throws RangeError when `a.length !== b.length`.
 */
export function assertSameLength(a: readonly number[], b: readonly number[]): void {
  if (a.length !== b.length) {
    throw new RangeError(
      `paired samples must have the same length; got a.length = ${a.length} and b.length = ${b.length}.`,
    );
  }
}
