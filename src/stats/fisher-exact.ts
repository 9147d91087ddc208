/**
 * Fisher's exact test on a 2 × 2 table of counts: are "events" (here:
 * invalid outputs) more frequent in the first group than in the second?
 *
 * The table is `[[a, b], [c, d]]`: the first group has `a` events in `a + b`
 * trials, the second `c` in `c + d`. Conditional on the margins, `a` follows
 * the hypergeometric distribution with population N = a + b + c + d,
 * K = a + c successes and n = a + b draws. One-sided p-values:
 * `'greater'` = P(X ≥ a) (the first group's event rate is higher), `'less'` =
 * P(X ≤ a). Two-sided: the sum of the probabilities of all tables no more
 * likely than the observed one (with SciPy's relative tolerance 1 + 1e-7).
 *
 * Reference implementation: SciPy 1.17 `scipy.stats.fisher_exact(table,
 * alternative=...)`; `fisher-exact.test.ts` checks agreement on values
 * printed by `scripts/reference/stats_reference.py`. The hypergeometric
 * distribution function is `@stdlib/stats-base-dists-hypergeometric-cdf`.
 *
 * Source: R. A. Fisher, "On the interpretation of χ² from contingency
 * tables", J. Royal Statistical Society 85 (1922).
 *
 * @module
 */
import { hypergeometricCdf } from './distributions.ts';
import { type Alternative, resolveAlternative } from './alternative.ts';

/** The result of {@link fisherExactTest}. */
export interface FisherExactResult {
  /** The sample odds ratio (a·d)/(b·c); Infinity when b·c = 0 < a·d, NaN when both are 0. */
  oddsRatio: number;
  /** p-value in [0, 1]. */
  pValue: number;
}

function logChoose(n: number, k: number): number {
  let sum = 0;
  for (let index = 1; index <= k; index += 1) sum += Math.log((n - k + index) / index);
  return sum;
}

/**
 * Fisher's exact test of a 2 × 2 table `[[a, b], [c, d]]` of non-negative
 * integer counts.
 *
 * @param alternative - `'greater'`: the first row's event share is higher;
 *   `'less'`: lower; `'two-sided'` (default): different.
 * @throws RangeError when a count is not a non-negative integer.
 *
 * @example
 * ```ts
 * // 10 invalid of 250 candidate outputs against 2 of 500 incumbent outputs:
 * fisherExactTest([[10, 240], [2, 498]], 'greater').pValue; // 0.000492 (scipy.stats.fisher_exact)
 * ```
 */
export function fisherExactTest(
  table: readonly [readonly [number, number], readonly [number, number]],
  alternative?: Alternative,
): FisherExactResult {
  const [[a, b], [c, d]] = table;
  for (const value of [a, b, c, d]) {
    if (!Number.isInteger(value) || value < 0)
      throw new RangeError(`fisherExactTest needs non-negative integer counts; got ${String(value)}.`);
  }
  const resolved = resolveAlternative(alternative);
  const population = a + b + c + d;
  const successes = a + c;
  const draws = a + b;
  const oddsRatio = b * c === 0 ? (a * d === 0 ? Number.NaN : Number.POSITIVE_INFINITY) : (a * d) / (b * c);
  if (population === 0 || successes === 0 || successes === population || draws === 0 || draws === population)
    return { oddsRatio, pValue: 1 };
  const cdf = (x: number): number => (x < 0 ? 0 : hypergeometricCdf(x, population, successes, draws));
  const clamp = (p: number): number => Math.min(1, Math.max(0, p));
  if (resolved === 'greater') return { oddsRatio, pValue: clamp(1 - cdf(a - 1)) };
  if (resolved === 'less') return { oddsRatio, pValue: clamp(cdf(a)) };
  // Two-sided: every table at most as likely as the observed one.
  const low = Math.max(0, draws - (population - successes));
  const high = Math.min(draws, successes);
  const logProbability = (x: number): number =>
    logChoose(successes, x) + logChoose(population - successes, draws - x) - logChoose(population, draws);
  const observed = logProbability(a);
  let pValue = 0;
  for (let x = low; x <= high; x += 1) {
    const value = logProbability(x);
    if (value <= observed + Math.log1p(1e-7)) pValue += Math.exp(value);
  }
  return { oddsRatio, pValue: clamp(pValue) };
}
