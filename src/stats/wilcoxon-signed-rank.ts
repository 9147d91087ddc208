/**
 * The Wilcoxon signed-rank test for paired samples, replicating
 * `scipy.stats.wilcoxon(a, b, alternative=...)` of SciPy 1.17 with its
 * defaults `zero_method='wilcox'`, `correction=False`, `method='auto'`
 * (source: `scipy/stats/_wilcoxon.py`, SciPy 1.17.1; Wilcoxon 1945,
 * "Individual comparisons by ranking methods", Biometrics Bulletin 1(6)).
 *
 * Caveat for callers: a p-value is evidence for one comparison; testing many
 * candidates and keeping the best inflates false positives (repeated testing).
 *
 * @module
 */
import { normalCdf } from './distributions.ts';
import { type Alternative, resolveAlternative } from './alternative.ts';
import { assertFiniteSample, assertSameLength } from './sample-validation.ts';

/** Largest number of pairs (zeros included) for which SciPy's `'auto'` may use an exact null distribution. */
export const WILCOXON_EXACT_MAXIMUM_PAIRS = 50;

/**
 * Largest number of pairs (zeros included) for which SciPy's `'auto'` still
 * computes an exact p-value when there are ties or zero differences (its
 * permutation test enumerates all 2ⁿ sign flips when 2ⁿ < 9999).
 */
export const WILCOXON_EXACT_MAXIMUM_PAIRS_WITH_TIES = 13;

/** Options of {@link wilcoxonSignedRank}. */
export interface WilcoxonSignedRankOptions {
  /**
   * The alternative about the distribution of the differences a − b:
   * `'two-sided'` (not centred on 0), `'greater'` (shifted above 0) or
   * `'less'` (shifted below 0). Default `'two-sided'`.
   */
  readonly alternative?: Alternative;
}

/** How the p-value of {@link wilcoxonSignedRank} was obtained. */
export type WilcoxonMethod = 'exact' | 'normal-approximation';

/** Result of {@link wilcoxonSignedRank}. */
export interface WilcoxonSignedRankResult {
  /**
   * SciPy's statistic: for `'two-sided'`, min(R⁺, R⁻); for `'greater'` and
   * `'less'`, R⁺. R⁺ (R⁻) is the sum of the ranks of |dᵢ| over the positive
   * (negative) nonzero differences, ranks averaged over ties. 0 when every
   * difference is zero.
   */
  readonly statistic: number;
  /** p-value in [0, 1] for the requested alternative. */
  readonly pValue: number;
  /** Whether the p-value is exact (sign-flip distribution) or from the normal approximation. */
  readonly method: WilcoxonMethod;
}

/**
 * Wilcoxon signed-rank test on the paired differences `dᵢ = aᵢ − bᵢ`,
 * exactly SciPy 1.17's variant with its defaults:
 *
 * 1. **Zeros** (`zero_method='wilcox'`): pairs with `dᵢ === 0` (exact
 *    floating-point equality) are dropped before ranking; m is the number of
 *    nonzero differences. Zeros still count in n (all pairs) for step 3.
 * 2. **Ranks**: |dᵢ| of the nonzero differences are ranked 1..m, tied
 *    magnitudes (exact equality) receive their average rank. R⁺ and R⁻ are
 *    the rank sums of the positive and negative differences.
 *    `statistic` is min(R⁺, R⁻) for `'two-sided'` and R⁺ otherwise.
 * 3. **Method** (`method='auto'`), with n = number of pairs *including
 *    zeros*:
 *    - n > 50: normal approximation;
 *    - n ≤ 50, no ties and no zeros: exact null distribution of R⁺;
 *    - n ≤ 13 with ties or zeros: exact sign-flip (permutation)
 *      distribution of R⁺ computed with the average ranks — SciPy runs
 *      `permutation_test`, which enumerates all 2ⁿ sign flips because
 *      2¹³ < 9999 resamples; here the same distribution is counted exactly
 *      by dynamic programming over doubled (integer) ranks;
 *    - 13 < n ≤ 50 with ties or zeros: normal approximation.
 * 4. **Exact p-values**: `'less'` → P(R⁺ ≤ r⁺), `'greater'` → P(R⁺ ≥ r⁺),
 *    `'two-sided'` → min(1, 2·min of the two), under the distribution where
 *    each nonzero difference's sign is + or − with probability ½.
 * 5. **Normal approximation** (no continuity correction, `correction=False`):
 *    z = (R⁺ − m(m+1)/4) / σ with
 *    σ² = (m(m+1)(2m+1) − Σ(tⱼ³ − tⱼ)/2) / 24, the sum running over groups of
 *    tⱼ tied magnitudes (tie correction); `'less'` → Φ(z), `'greater'` →
 *    Φ(−z), `'two-sided'` → 2·Φ(−|z|).
 *
 * Degenerate case: when every difference is zero, `statistic = 0` and
 * `pValue = 1` (SciPy agrees for 2 ≤ n ≤ 13, raises for n = 1 and returns
 * NaN for n > 13).
 *
 * @param a - First sample: finite numbers, at least 1, paired by index with `b`.
 * @param b - Second sample, same length as `a`.
 * @param options - See {@link WilcoxonSignedRankOptions}; `alternative`
 *   defaults to `'two-sided'`.
 * @returns `{ statistic, pValue, method }`.
 * @throws RangeError when the lengths differ, the samples are empty, a value
 *   is not finite, or `alternative` is unknown.
 *
 * @example
 * ```ts
 * const candidate = [0.9, 0.8, 0.75, 1, 0.6, 0.85];
 * const incumbent = [0.7, 0.8, 0.7, 0.9, 0.65, 0.6];
 * const { statistic, pValue, method } = wilcoxonSignedRank(candidate, incumbent, { alternative: 'greater' });
 * // method === 'exact' (6 pairs, one zero → sign-flip distribution)
 * ```
 */
export function wilcoxonSignedRank(
  a: readonly number[],
  b: readonly number[],
  options: WilcoxonSignedRankOptions = {},
): WilcoxonSignedRankResult {
  const alternative = resolveAlternative(options.alternative);
  assertSameLength(a, b);
  assertFiniteSample(a, 1, 'a', 'the signed-rank test needs at least one pair');
  assertFiniteSample(b, 1, 'b', 'the signed-rank test needs at least one pair');

  const pairCount = a.length;
  const nonZeroDifferences: number[] = [];
  for (let index = 0; index < pairCount; index += 1) {
    const difference = (a[index] as number) - (b[index] as number);
    if (difference !== 0) nonZeroDifferences.push(difference);
  }
  const hasZeros = nonZeroDifferences.length < pairCount;
  const { doubledRanks, tieGroupSizes } = rankMagnitudes(nonZeroDifferences);
  const hasTies = tieGroupSizes.some((size) => size > 1);

  let doubledPositiveRankSum = 0;
  let doubledNegativeRankSum = 0;
  nonZeroDifferences.forEach((difference, index) => {
    if (difference > 0) doubledPositiveRankSum += doubledRanks[index] as number;
    else doubledNegativeRankSum += doubledRanks[index] as number;
  });
  const positiveRankSum = doubledPositiveRankSum / 2;
  const statistic =
    alternative === 'two-sided' ? Math.min(doubledPositiveRankSum, doubledNegativeRankSum) / 2 : positiveRankSum;

  const method: WilcoxonMethod =
    pairCount > WILCOXON_EXACT_MAXIMUM_PAIRS
      ? 'normal-approximation'
      : !hasTies && !hasZeros
        ? 'exact'
        : pairCount <= WILCOXON_EXACT_MAXIMUM_PAIRS_WITH_TIES
          ? 'exact'
          : 'normal-approximation';

  if (nonZeroDifferences.length === 0) return { statistic: 0, pValue: 1, method };

  const pValue =
    method === 'exact'
      ? exactPValue(doubledRanks, doubledPositiveRankSum, alternative)
      : normalApproximationPValue(nonZeroDifferences.length, tieGroupSizes, positiveRankSum, alternative);
  return { statistic, pValue, method };
}

/**
 * Average ranks of |d| (1-based), doubled so that they are integers, in the
 * order of `differences`; and the sizes of the groups of tied magnitudes.
 */
function rankMagnitudes(differences: readonly number[]): {
  doubledRanks: number[];
  tieGroupSizes: number[];
} {
  const magnitudes = differences.map(Math.abs);
  const order = magnitudes
    .map((_, index) => index)
    .sort((left, right) => {
      return (magnitudes[left] as number) - (magnitudes[right] as number);
    });
  const doubledRanks = new Array<number>(differences.length).fill(0);
  const tieGroupSizes: number[] = [];
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    while (end < order.length && magnitudes[order[end] as number] === magnitudes[order[start] as number]) end += 1;
    // Positions start..end-1 hold ranks start+1..end; their average, doubled, is start + 1 + end.
    for (let position = start; position < end; position += 1) {
      doubledRanks[order[position] as number] = start + 1 + end;
    }
    tieGroupSizes.push(end - start);
    start = end;
  }
  return { doubledRanks, tieGroupSizes };
}

/**
 * Exact p-value from the sign-flip distribution of 2·R⁺: every nonzero
 * difference independently keeps or flips its sign with probability ½.
 * Counts are exact integers below 2⁵³ (at most 2⁵⁰ outcomes).
 */
function exactPValue(doubledRanks: readonly number[], observedDoubledSum: number, alternative: Alternative): number {
  const maximumSum = doubledRanks.reduce((sum, rank) => sum + rank, 0);
  let counts = new Float64Array(maximumSum + 1);
  counts[0] = 1;
  let reachable = 0;
  for (const rank of doubledRanks) {
    const next = new Float64Array(maximumSum + 1);
    for (let sum = 0; sum <= reachable; sum += 1) {
      const count = counts[sum] as number;
      if (count === 0) continue;
      next[sum] = (next[sum] as number) + count;
      next[sum + rank] = (next[sum + rank] as number) + count;
    }
    counts = next;
    reachable += rank;
  }
  const total = 2 ** doubledRanks.length;
  let atMost = 0;
  let atLeast = 0;
  for (let sum = 0; sum <= maximumSum; sum += 1) {
    const count = counts[sum] as number;
    if (sum <= observedDoubledSum) atMost += count;
    if (sum >= observedDoubledSum) atLeast += count;
  }
  const lessPValue = atMost / total;
  const greaterPValue = atLeast / total;
  switch (alternative) {
    case 'less':
      return lessPValue;
    case 'greater':
      return greaterPValue;
    case 'two-sided':
      return Math.min(1, 2 * Math.min(lessPValue, greaterPValue));
  }
}

/** Normal-approximation p-value with tie correction and no continuity correction. */
function normalApproximationPValue(
  nonZeroCount: number,
  tieGroupSizes: readonly number[],
  positiveRankSum: number,
  alternative: Alternative,
): number {
  const expected = (nonZeroCount * (nonZeroCount + 1)) / 4;
  const tieCorrection = tieGroupSizes.reduce((sum, size) => sum + size ** 3 - size, 0);
  const standardDeviation = Math.sqrt(
    (nonZeroCount * (nonZeroCount + 1) * (2 * nonZeroCount + 1) - tieCorrection / 2) / 24,
  );
  const z = (positiveRankSum - expected) / standardDeviation;
  switch (alternative) {
    case 'less':
      return normalCdf(z, 0, 1);
    case 'greater':
      return normalCdf(-z, 0, 1);
    case 'two-sided':
      return Math.min(1, 2 * normalCdf(-Math.abs(z), 0, 1));
  }
}
