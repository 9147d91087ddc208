/**
 * The alternative hypothesis of a two-sample test.
 *
 * Shared by {@link welchTTest}, {@link pairedTTest} and
 * {@link wilcoxonSignedRank}; the names and meanings are SciPy's
 * (`scipy.stats.ttest_ind`, `ttest_rel`, `wilcoxon`, argument `alternative`).
 *
 * @module
 */

/** The accepted alternatives, in a stable order. */
export const ALTERNATIVES = ['two-sided', 'greater', 'less'] as const;

/**
 * Which departure from the null hypothesis a test looks for, stated for the
 * first sample `a` against the second sample `b`:
 *
 * - `'two-sided'`: the location of `a` differs from that of `b` (≠);
 * - `'greater'`: the location of `a` is greater than that of `b` (>);
 * - `'less'`: the location of `a` is less than that of `b` (<).
 *
 * "Location" is the mean for the t-tests and the centre of the distribution of
 * the paired differences `a − b` for the signed-rank test.
 */
export type Alternative = (typeof ALTERNATIVES)[number];

/**
 * Returns `alternative`, defaulting to `'two-sided'`.
 *
 * @throws RangeError when a caller outside TypeScript passes any other string.
 */
export function resolveAlternative(alternative: Alternative | undefined): Alternative {
  const resolved = alternative ?? 'two-sided';
  if (!(ALTERNATIVES as readonly string[]).includes(resolved)) {
    throw new RangeError(`alternative must be one of ${ALTERNATIVES.join(', ')}; got ${String(alternative)}.`);
  }
  return resolved;
}
