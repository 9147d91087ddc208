/**
 * How many examples an observed effect needs to reach α (the stuck-study
 * advice, src/report/stuck-advice.ts): the paired t-test's and McNemar's
 * exact test's sample sizes.
 */
import { studentTCdf } from '../stats/distributions.ts';
import { mcnemarExactTestFromCounts } from '../stats/mcnemar.ts';

/** Largest example count {@link requiredExamples} searches; beyond it the effect is "too small to matter". */
export const MAX_REQUIRED_EXAMPLES = 10_000_000;

/**
 * The smallest number of examples n ≥ 2 at which a one-sided paired t-test
 * (candidate > incumbent) of paired differences with standardised mean
 * `effectSize` reaches significance: P(T ≥ d·√n) < α for T ~ Student t with
 * n − 1 degrees of freedom, i.e. the observed t = d·√n passes the gate's
 * test. `effectSize` is d_z = mean / SD of the per-example paired differences
 * (Cohen 1988, §2.3; for a test result, d_z = t / √n). The p-value falls
 * monotonically with n for d > 0, so the search is a binary search.
 *
 * Assumption, and the caveat to state with it: more examples behave like the
 * ones measured (the edit fixes the same share of them, by the same amounts).
 * This is the size at which the *observed* effect would pass; a new sample
 * with a true effect of that size passes at about that n only half the time
 * (50% power), so treat it as a floor.
 *
 * Reference: Student (1908); P(T ≥ t) from `@stdlib/stats-base-dists-t-cdf`,
 * checked against SciPy 1.17 (`scipy.stats.t.sf`) in `stuck-advice.test.ts`.
 *
 * @param effectSize d_z, finite
 * @param alpha one-sided significance level in (0, 1)
 * @returns the smallest n, or null when d ≤ 0 (no number of examples makes a
 *   zero or negative effect significant) or n would exceed {@link MAX_REQUIRED_EXAMPLES}
 */
export function requiredExamples(effectSize: number, alpha: number): number | null {
  if (!Number.isFinite(effectSize) || effectSize <= 0) return null;
  const passes = (n: number): boolean => 1 - studentTCdf(effectSize * Math.sqrt(n), n - 1) < alpha;
  if (!passes(MAX_REQUIRED_EXAMPLES)) return null;
  let low = 2;
  let high = MAX_REQUIRED_EXAMPLES;
  if (passes(low)) return low;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (passes(middle)) high = middle;
    else low = middle;
  }
  return high;
}

/** Largest example count {@link requiredExamplesMcNemar} searches. */
export const MAX_REQUIRED_BINARY_EXAMPLES = 100_000;

/**
 * The binary-task counterpart of {@link requiredExamples}: the smallest
 * number of examples N at which McNemar's exact one-sided test (the gate's
 * test for right/wrong outcomes; McNemar 1947, exact binomial form) reaches
 * significance when the candidate fixes and breaks the same shares of them
 * as it did on the `testedOn` examples measured: b' = ⌊b·N/n⌋ fixed,
 * c' = ⌈c·N/n⌉ broken (rounded against the candidate), p = P(X ≥ b') for
 * X ~ Binomial(b' + c', ½) below α. The same caveat: a floor, not a promise.
 *
 * @returns the smallest N ≥ n, or null when b ≤ c (no number of examples
 *   helps an edit that breaks as many as it fixes) or N would exceed {@link MAX_REQUIRED_BINARY_EXAMPLES}
 */
export function requiredExamplesMcNemar(b: number, c: number, testedOn: number, alpha: number): number | null {
  if (!(b > c) || testedOn < 1) return null;
  for (let n = testedOn; n <= MAX_REQUIRED_BINARY_EXAMPLES; n += 1) {
    const fixed = Math.floor((b * n) / testedOn);
    const broken = Math.ceil((c * n) / testedOn);
    if (fixed > broken && mcnemarExactTestFromCounts({ b: fixed, c: broken }, 'greater').pValue < alpha) return n;
  }
  return null;
}
