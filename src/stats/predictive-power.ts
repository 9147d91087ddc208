/**
 * Predictive power: the probability, given the data so far, that a fixed-n
 * one-sided test on a normal mean will pass once all planned observations
 * are in — the basis of stopping a sequential evaluation early for
 * *futility* (Spiegelhalter, Freedman & Blackburn 1986, "Monitoring
 * clinical trials: conditional or predictive power?", Controlled Clinical
 * Trials 7(1), 8–17; Jennison & Turnbull 2000, "Group Sequential Methods
 * with Applications to Clinical Trials", §10.3).
 *
 * With a flat prior on the mean θ, after m of N planned observations with
 * mean x̄_m and per-observation variance v, the posterior is θ ~ N(x̄_m, v/m),
 * the remaining N − m observations have mean ~ N(θ, v/(N − m)), so the final
 * mean x̄_N = (m·x̄_m + (N − m)·ȳ)/N is predicted as N(x̄_m, v·(N − m)/(N·m)),
 * and
 *
 *     PP = P(x̄_N > c | data) = Φ((x̄_m − c) / √(v·(N − m)/(N·m))).
 *
 * Stopping for futility when PP falls below a level can only ever turn an
 * acceptance into a refusal: it never raises a false-accept rate, it costs
 * power (measured by `npm run bench:gate`).
 *
 * @module
 */
import { normalCdf } from './distributions.ts';

/** The inputs of {@link predictivePower}. */
export interface PredictivePowerInput {
  /** x̄_m: the mean of the observations so far. */
  readonly mean: number;
  /** v: the variance of one observation (≥ 0). */
  readonly variance: number;
  /** m: observations so far (≥ 1). */
  readonly observed: number;
  /** N: observations the fixed-n test will have (≥ m). */
  readonly planned: number;
  /** c: the final mean must exceed this for the test to pass. */
  readonly critical: number;
}

/**
 * Bayesian predictive power (flat prior) of the final one-sided test
 * "x̄_N > c"; see the module comment. 1 or 0 when nothing is left to
 * observe or the variance is 0 (the final mean is then known).
 *
 * @throws RangeError when `observed` < 1, `planned` < `observed` or the variance is negative
 *
 * @example
 * ```ts
 * // 40 of 200 observations, mean 0, SD 0.1 per observation, the final test needs a mean above 0.02
 * predictivePower({ mean: 0, variance: 0.01, observed: 40, planned: 200, critical: 0.02 }); // ≈ 0.0787
 * ```
 */
export function predictivePower(input: PredictivePowerInput): number {
  const { mean, variance, observed, planned, critical } = input;
  if (!(observed >= 1)) throw new RangeError(`observed must be ≥ 1, got ${observed}`);
  if (!(planned >= observed)) throw new RangeError(`planned (${planned}) must be ≥ observed (${observed})`);
  if (!(variance >= 0)) throw new RangeError(`variance must be ≥ 0, got ${variance}`);
  const spread = Math.sqrt((variance * (planned - observed)) / (planned * observed));
  if (spread === 0) return mean > critical ? 1 : 0;
  return normalCdf((mean - critical) / spread, 0, 1);
}

/**
 * The standard normal quantile Φ⁻¹(p), by bisection on Φ (stdlib's normal
 * distribution function) to about 1e-12: matches scipy.stats.norm.ppf.
 *
 * @throws RangeError when p is not in (0, 1)
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  let low = -40;
  let high = 40;
  for (let iteration = 0; iteration < 200 && high - low > 1e-13; iteration += 1) {
    const middle = (low + high) / 2;
    if (normalCdf(middle, 0, 1) < p) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}
