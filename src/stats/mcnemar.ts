/**
 * McNemar's exact test for paired 0/1 outcomes: on the same examples, is the
 * first artifact (the candidate) right more often than the second (the
 * incumbent)?
 *
 * Pairs where both are right or both wrong say nothing about the difference;
 * the test looks at the discordant pairs only:
 *
 * - `b` = pairs where the first is right (1) and the second wrong (0);
 * - `c` = pairs where the first is wrong and the second right.
 *
 * Under the null hypothesis (no difference), each of the n = b + c
 * discordant pairs is equally likely to fall either way, so b follows the
 * binomial distribution Bin(n, ½). p-values, with X ~ Bin(n, ½):
 *
 * - `'greater'` (the first is right more often): P(X ≥ b);
 * - `'less'`: P(X ≤ b);
 * - `'two-sided'` (default): min(1, 2 · min(P(X ≤ b), P(X ≥ b))), which for
 *   p = ½ is the sum of the probabilities of every outcome no more likely
 *   than b (SciPy's definition).
 *
 * With no discordant pair (n = 0) there is no evidence either way: the
 * p-value is 1 (SciPy's `binomtest` refuses n = 0).
 *
 * By the symmetry of Bin(n, ½), P(X ≥ b) = P(X ≤ n − b): every tail is
 * computed as a distribution function (`@stdlib/stats-base-dists-binomial-cdf`),
 * never as 1 − cdf, so tiny p-values keep their precision.
 *
 * Each call is one test: repeated testing of one partition (many candidates
 * against one incumbent) inflates the chance of a false acceptance, which is
 * what the shadow partition guards against.
 *
 * Reference implementation: SciPy 1.17 `scipy.stats.binomtest(b, b + c, 0.5,
 * alternative=...)`; `mcnemar.test.ts` checks agreement on values printed by
 * `scripts/reference/stats_reference.py`.
 *
 * Source: Q. McNemar, "Note on the sampling error of the difference between
 * correlated proportions or percentages", Psychometrika 12(2), 153–157
 * (1947); the exact (binomial) form as in A. Agresti, "Categorical Data
 * Analysis", 3rd ed., §11.1.
 *
 * @module
 */
import { binomialCdf } from './distributions.ts';
import { type Alternative, resolveAlternative } from './alternative.ts';

/** One paired 0/1 outcome: 1 or `true` is right (a success), 0 or `false` wrong. */
export type BinaryOutcome = 0 | 1 | boolean;

/** The counts of a 2 × 2 table of paired 0/1 outcomes. */
export interface McNemarCounts {
  /** Pairs where the first is right and the second wrong. */
  b: number;
  /** Pairs where the first is wrong and the second right. */
  c: number;
  /** Pairs where both are right (concordant; not used by the test). Default 0. */
  bothRight?: number;
  /** Pairs where both are wrong (concordant; not used by the test). Default 0. */
  bothWrong?: number;
}

/** The evidence of {@link mcnemarExactTest}. */
export interface McNemarResult {
  /** Which test: McNemar's exact (binomial) test on the discordant pairs. */
  test: 'mcnemar-exact';
  alternative: Alternative;
  /** First right, second wrong. */
  b: number;
  /** First wrong, second right. */
  c: number;
  bothRight: number;
  bothWrong: number;
  /** Number of pairs in all. */
  pairs: number;
  /** Number of discordant pairs, b + c: the binomial's n. */
  discordant: number;
  /** The test statistic: b, the discordant pairs favouring the first. */
  statistic: number;
  /** p-value in [0, 1]; 1 when there is no discordant pair. */
  pValue: number;
}

function toBit(value: BinaryOutcome, index: number, name: string): 0 | 1 {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  throw new RangeError(`mcnemarExactTest needs 0/1 or boolean outcomes; ${name}[${index}] is ${String(value)}.`);
}

/**
 * McNemar's exact test from the counts of discordant pairs.
 *
 * @param counts `b` and `c` (and, for the evidence only, the concordant counts)
 * @param alternative `'greater'`: the first is right more often; `'less'`: less often; `'two-sided'` (default)
 * @throws RangeError when a count is not a non-negative integer, or `alternative` is unknown
 *
 * @example
 * ```ts
 * mcnemarExactTestFromCounts({ b: 9, c: 2 }, 'greater').pValue; // 0.03271484375 (scipy.stats.binomtest(9, 11, 0.5, alternative='greater'))
 * ```
 */
export function mcnemarExactTestFromCounts(counts: McNemarCounts, alternative?: Alternative): McNemarResult {
  const { b, c } = counts;
  const bothRight = counts.bothRight ?? 0;
  const bothWrong = counts.bothWrong ?? 0;
  for (const [name, value] of Object.entries({ b, c, bothRight, bothWrong })) {
    if (!Number.isInteger(value) || value < 0)
      throw new RangeError(`mcnemarExactTest needs non-negative integer counts; ${name} is ${String(value)}.`);
  }
  const resolved = resolveAlternative(alternative);
  const n = b + c;
  const result = {
    test: 'mcnemar-exact' as const,
    alternative: resolved,
    b,
    c,
    bothRight,
    bothWrong,
    pairs: n + bothRight + bothWrong,
    discordant: n,
    statistic: b,
  };
  if (n === 0) return { ...result, pValue: 1 };
  const atMost = (k: number): number => binomialCdf(k, n, 0.5);
  const lower = atMost(b); // P(X ≤ b)
  const upper = atMost(n - b); // P(X ≥ b) = P(X ≤ n − b) by symmetry
  const clamp = (p: number): number => Math.min(1, Math.max(0, p));
  if (resolved === 'greater') return { ...result, pValue: clamp(upper) };
  if (resolved === 'less') return { ...result, pValue: clamp(lower) };
  return { ...result, pValue: clamp(2 * Math.min(lower, upper)) };
}

/**
 * McNemar's exact test on paired 0/1 outcomes: `first[i]` and `second[i]`
 * are the outcomes of the same example (same id) under the first artifact
 * (the candidate) and the second (the incumbent).
 *
 * @param first outcomes of the first artifact (1 / true = right)
 * @param second outcomes of the second artifact, in the same example order
 * @param alternative `'greater'`: the first is right more often (the gate's
 *   question, candidate against incumbent); `'less'`; `'two-sided'` (default)
 * @throws RangeError when the lengths differ, an outcome is not 0/1/boolean,
 *   or `alternative` is unknown
 *
 * @example
 * ```ts
 * // 4 examples: the candidate fixes two the incumbent got wrong and breaks none.
 * mcnemarExactTest([1, 1, 1, 0], [1, 0, 0, 0], 'greater'); // { b: 2, c: 0, statistic: 2, pValue: 0.25, ... }
 * ```
 */
export function mcnemarExactTest(
  first: readonly BinaryOutcome[],
  second: readonly BinaryOutcome[],
  alternative?: Alternative,
): McNemarResult {
  if (first.length !== second.length) {
    throw new RangeError(
      `mcnemarExactTest needs paired outcomes of equal length; got ${first.length} and ${second.length}.`,
    );
  }
  const counts = { b: 0, c: 0, bothRight: 0, bothWrong: 0 };
  first.forEach((value, index) => {
    const one = toBit(value, index, 'first');
    const two = toBit(second[index]!, index, 'second');
    if (one === 1 && two === 1) counts.bothRight += 1;
    else if (one === 1) counts.b += 1;
    else if (two === 1) counts.c += 1;
    else counts.bothWrong += 1;
  });
  return mcnemarExactTestFromCounts(counts, alternative);
}

/**
 * The fewest paired examples with which McNemar's exact one-sided test can
 * reach `alpha` at all: ⌈log₂(1/α)⌉, reached when every pair is discordant in
 * the candidate's favour (p = 0.5^n). 5 at α = 0.05 (p = 0.03125; with 4,
 * p = 0.0625), 7 at α = 0.01. The same bound holds for the exact sign test
 * and for Wilcoxon's exact signed-rank test (their smallest one-sided p-value
 * on n pairs is also 0.5^n): with fewer pairs no exact paired test can
 * confirm anything, however large the effect.
 *
 * @param alpha significance level in (0, 1)
 * @throws RangeError when alpha is outside (0, 1)
 * @example
 * ```ts
 * mcnemarMinimumPairs(0.05); // 5
 * ```
 */
export function mcnemarMinimumPairs(alpha: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  let pairs = 1;
  while (0.5 ** pairs > alpha) pairs += 1;
  return pairs;
}
