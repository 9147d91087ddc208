/**
 * The mixture sequential probability ratio test (mSPRT) for a difference of
 * means under continuous monitoring, with its always-valid p-value and its
 * confidence sequence: looking after every unit, every hour or every day
 * does not inflate the false-positive rate, and the experiment may stop at
 * any look.
 *
 * Source: Johari, Koomen, Pekelis & Walsh, "Peeking at A/B Tests: Why it
 * matters, and what to do about it", KDD 2017 (the method of Optimizely's
 * Stats Engine): for a difference of two means with per-unit variance
 * σ² and a normal mixing distribution H = N(θ₀, τ²) over the true
 * difference θ,
 *
 *     Λ_n = √(V / (V + τ²)) · exp( τ² (Δ̂ − θ₀)² / (2 V (V + τ²)) ),
 *
 * where Δ̂ is the observed difference of means and V its variance
 * (V = 2σ²/n with n units per arm in the paper; here the unequal-arm form
 * V = σ²_c/n_c + σ²_i/n_i, each arm's variance estimated at the look:
 * binary metrics the Bernoulli p̂(1 − p̂), continuous ones the sample
 * variance). Under θ = θ₀, Λ_n is a nonnegative martingale starting at 1,
 * so by Ville's inequality P(Λ_n ≥ 1/α at some n) ≤ α: the **always-valid
 * p-value** p_n = min(1, min_{m ≤ n} 1/Λ_m) is a p-value at every stopping
 * time. Inverting the test at every θ₀ gives the **confidence sequence**
 *
 *     Δ̂ ± √( V (V + τ²) / τ² · (2 log(1/α) + log((V + τ²) / V)) ),
 *
 * which covers the true difference at every look at once with probability
 * ≥ 1 − α (the same normal-mixture boundary as Howard, Ramdas, McAuliffe &
 * Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence
 * sequences", Annals of Statistics 49(2), the normal mixture).
 *
 * Caveats: with plug-in variances the guarantee is asymptotic (the normal
 * approximation of each arm's mean); the seeded simulation in
 * `mixture-sprt.test.ts` and `npm run bench:online` measure the false-positive
 * rate under daily looks. kloop's own betting confidence sequence
 * (src/stats/betting-confidence-sequence.ts) is nonasymptotic but bounds one
 * mean of values in [0, 1] from the raw sequence; an online experiment keeps
 * two arms' sufficient statistics only (units, sums, sums of squares) and
 * continuous metrics are unbounded, hence this test.
 *
 * Choosing τ (the mixing standard deviation): the test is most powerful for
 * true differences near τ (the paper fits τ to the distribution of
 * past effects). The online gate sets it as a standardized effect size
 * times the pooled per-unit SD (`mixingEffectSize` in
 * DEFAULT_ONLINE_GATE_SETTINGS, src/online/gate/online-gate-settings.ts).
 *
 * @module
 */

/** Settings of one mSPRT evaluation. */
export interface MixtureSprtOptions {
  /** Level α in (0, 1): the test rejects when Λ ≥ 1/α; the confidence sequence has coverage 1 − α. */
  readonly alpha: number;
  /** τ > 0, the mixing distribution's standard deviation, in the units of Δ. */
  readonly mixingStandardDeviation: number;
  /** θ₀, the difference under the null hypothesis. Default 0. */
  readonly nullDifference?: number;
  /** The always-valid p-value of the earlier looks (their running minimum), in [0, 1]. Default 1. */
  readonly previousPValue?: number;
}

/** One look of the mSPRT. */
export interface MixtureSprtResult {
  /** Δ̂, as given. */
  readonly delta: number;
  /** V, the variance of Δ̂, as given. */
  readonly varianceOfDelta: number;
  /** log Λ at this look (0 when V = 0: no evidence either way). */
  readonly logLikelihoodRatio: number;
  /** The always-valid p-value: min(previous, 1/Λ), in [0, 1]. */
  readonly pValue: number;
  /** The confidence sequence for the true difference at this look, coverage 1 − α (±Infinity when V = 0). */
  readonly interval: { readonly lower: number; readonly upper: number };
}

/**
 * One look of the mixture SPRT on an observed difference Δ̂ with variance V
 * (see the module comment for the formulas and the source).
 *
 * @param delta Δ̂, the observed difference of means
 * @param varianceOfDelta V ≥ 0, its variance at this look; 0 means "not testable yet" (Λ = 1)
 * @throws RangeError on α outside (0, 1), τ ≤ 0, V < 0 or a non-finite value
 *
 * @example
 * ```ts
 * // 10 000 units per arm, reply rates 5.0% and 6.2%:
 * const v = 0.05 * 0.95 / 10_000 + 0.062 * 0.938 / 10_000;
 * const look = mixtureSprt(0.012, v, { alpha: 0.05, mixingStandardDeviation: 0.01 });
 * look.pValue; // ≈ 0.0068 (log Λ ≈ 4.99); look.interval ≈ [0.0021, 0.0219]
 * ```
 */
export function mixtureSprt(delta: number, varianceOfDelta: number, options: MixtureSprtOptions): MixtureSprtResult {
  const { alpha, mixingStandardDeviation: tau } = options;
  const nullDifference = options.nullDifference ?? 0;
  const previous = options.previousPValue ?? 1;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}.`);
  if (!(Number.isFinite(tau) && tau > 0))
    throw new RangeError(`mixingStandardDeviation must be a finite number > 0; got ${tau}.`);
  if (!(Number.isFinite(varianceOfDelta) && varianceOfDelta >= 0))
    throw new RangeError(`varianceOfDelta must be a finite number ≥ 0; got ${varianceOfDelta}.`);
  if (!Number.isFinite(delta) || !Number.isFinite(nullDifference))
    throw new RangeError(`delta and nullDifference must be finite; got ${delta} and ${nullDifference}.`);
  if (!(previous >= 0 && previous <= 1)) throw new RangeError(`previousPValue must be in [0, 1]; got ${previous}.`);
  if (varianceOfDelta === 0) {
    return {
      delta,
      varianceOfDelta,
      logLikelihoodRatio: 0,
      pValue: Math.min(1, previous),
      interval: { lower: -Infinity, upper: Infinity },
    };
  }
  const mixingVariance = tau * tau;
  const total = varianceOfDelta + mixingVariance;
  const excess = delta - nullDifference;
  const logLikelihoodRatio =
    0.5 * Math.log(varianceOfDelta / total) + (mixingVariance * excess * excess) / (2 * varianceOfDelta * total);
  const pValue = Math.min(previous, 1, Math.exp(-logLikelihoodRatio));
  const halfWidth = Math.sqrt(
    ((varianceOfDelta * total) / mixingVariance) * (2 * Math.log(1 / alpha) + Math.log(total / varianceOfDelta)),
  );
  return {
    delta,
    varianceOfDelta,
    logLikelihoodRatio,
    pValue,
    interval: { lower: delta - halfWidth, upper: delta + halfWidth },
  };
}
