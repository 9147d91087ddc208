/**
 * Betting confidence sequences for the mean of observations bounded in
 * [0, 1]: bounds that hold at every sample size simultaneously, so they may
 * be looked at after every observation and a study may stop whenever it
 * likes ("anytime-valid"; the peeking problem of fixed-n tests, Johari,
 * Pekelis & Walsh 2017, does not arise).
 *
 * Method: the *hedged capital* process with *predictable plug-in* bets of
 * Waudby-Smith & Ramdas (2024), "Estimating means of bounded random
 * variables by betting", Journal of the Royal Statistical Society B 86(1),
 * §4 (hedged capital; predictable plug-in bets; the grid and the running
 * intersection). For a candidate mean m ∈ [0, 1], two gamblers bet that the
 * mean is above m and below m:
 *
 *     K⁺_t(m) = Π_{i ≤ t} (1 + λ⁺_i(m) · (x_i − m)),   λ⁺_i(m) = min(λ_i, c / m)
 *     K⁻_t(m) = Π_{i ≤ t} (1 − λ⁻_i(m) · (x_i − m)),   λ⁻_i(m) = min(λ_i, c / (1 − m))
 *     K_t(m)  = max(θ · K⁺_t(m), (1 − θ) · K⁻_t(m))
 *
 * with the predictable plug-in bet (it uses observations before i only)
 *
 *     λ_i = √( 2 · log(2/α) / (σ̂²_{i−1} · i · log(1 + i)) ),
 *     μ̂_i = (1/2 + Σ_{j ≤ i} x_j) / (i + 1),
 *     σ̂²_i = (1/4 + Σ_{j ≤ i} (x_j − μ̂_j)²) / (i + 1),   σ̂²_0 = 1/4.
 *
 * Under the true mean K_t is a nonnegative martingale (supermartingale with
 * the max) starting at 1, so by Ville's inequality it ever reaches 1/α with
 * probability at most α: the set {m : K_s(m) < 1/α for every s ≤ t} covers
 * the true mean at every t at once with probability ≥ 1 − α (the running
 * intersection). Observations must be independent with a common mean (or,
 * more generally, have conditional mean m given the past).
 *
 * The bounds are found by bisection on each side of the (regularised) sample
 * mean, as an interval: the hedged-capital set is an interval in practice
 * (the paper computes it on a grid); a set with holes would be reported by
 * its outer hull, which is conservative.
 *
 * @module
 */

/** Settings of a betting confidence sequence. */
export interface BettingConfidenceOptions {
  /** Level: the bounds miss the true mean at some time with probability at most α, in (0, 1). Default 0.05. */
  readonly alpha?: number;
  /** c: the largest fraction of capital bet on one observation, in (0, 1). Default 1/2 (the paper's choice). */
  readonly truncation?: number;
  /** θ: weight of the "above m" gambler in the hedge, in [0, 1]. Default 1/2 (a two-sided sequence). */
  readonly theta?: number;
}

/** A confidence interval for the mean, in the units of the observations. */
export interface MeanBounds {
  readonly lower: number;
  readonly upper: number;
}

interface Resolved {
  alpha: number;
  truncation: number;
  theta: number;
}

function resolve(options: BettingConfidenceOptions): Resolved {
  const alpha = options.alpha ?? 0.05;
  const truncation = options.truncation ?? 0.5;
  const theta = options.theta ?? 0.5;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!(truncation > 0 && truncation < 1)) throw new RangeError(`truncation must be in (0, 1), got ${truncation}`);
  if (!(theta >= 0 && theta <= 1)) throw new RangeError(`theta must be in [0, 1], got ${theta}`);
  return { alpha, truncation, theta };
}

function assertUnitInterval(observations: readonly number[]): void {
  for (const [index, value] of observations.entries()) {
    if (!(value >= 0 && value <= 1))
      throw new RangeError(
        `observation ${index} is ${value}: betting confidence sequences need observations in [0, 1]`,
      );
  }
}

/**
 * The predictable plug-in bets λ_1 … λ_t of the observations (λ_i uses
 * x_1 … x_{i−1} only), before the truncation at c/m or c/(1 − m).
 *
 * @param alpha the level the bets are tuned for, in (0, 1)
 */
export function predictablePlugInBets(observations: readonly number[], alpha = 0.05): number[] {
  const bets: number[] = [];
  let sum = 0;
  let squares = 0;
  let previousVariance = 0.25;
  const logTerm = 2 * Math.log(2 / alpha);
  for (let index = 0; index < observations.length; index += 1) {
    const t = index + 1;
    bets.push(Math.sqrt(logTerm / (previousVariance * t * Math.log(1 + t))));
    sum += observations[index]!;
    const regularisedMean = (0.5 + sum) / (t + 1);
    squares += (observations[index]! - regularisedMean) ** 2;
    previousVariance = (0.25 + squares) / (t + 1);
  }
  return bets;
}

/**
 * log K_t(m) at every t: the log of the hedged capital after each
 * observation, for one candidate mean m.
 */
function logHedgedCapitalPath(
  observations: readonly number[],
  bets: readonly number[],
  m: number,
  settings: Resolved,
): number[] {
  const upCap = m > 0 ? settings.truncation / m : Number.POSITIVE_INFINITY;
  const downCap = m < 1 ? settings.truncation / (1 - m) : Number.POSITIVE_INFINITY;
  const logTheta = settings.theta > 0 ? Math.log(settings.theta) : Number.NEGATIVE_INFINITY;
  const logOneMinusTheta = settings.theta < 1 ? Math.log(1 - settings.theta) : Number.NEGATIVE_INFINITY;
  let up = 0;
  let down = 0;
  const path: number[] = [];
  for (let index = 0; index < observations.length; index += 1) {
    const excess = observations[index]! - m;
    up += Math.log1p(Math.min(bets[index]!, upCap) * excess);
    down += Math.log1p(-Math.min(bets[index]!, downCap) * excess);
    path.push(Math.max(logTheta + up, logOneMinusTheta + down));
  }
  return path;
}

/**
 * The hedged capital K_t(m) after every observation (see the module
 * comment): values ≥ 1/α mean m is excluded from then on.
 *
 * @param observations values in [0, 1], in the order observed
 * @param m the candidate mean, in [0, 1]
 * @throws RangeError on an observation or setting out of range
 */
export function hedgedCapital(
  observations: readonly number[],
  m: number,
  options: BettingConfidenceOptions = {},
): number[] {
  const settings = resolve(options);
  assertUnitInterval(observations);
  if (!(m >= 0 && m <= 1)) throw new RangeError(`m must be in [0, 1], got ${m}`);
  return logHedgedCapitalPath(observations, predictablePlugInBets(observations, settings.alpha), m, settings).map(
    Math.exp,
  );
}

/**
 * True when the running intersection of the confidence sequence excludes
 * `m` after the observations: K_s(m) ≥ 1/α at some s ≤ t. O(t).
 */
export function excludesMean(
  observations: readonly number[],
  m: number,
  options: BettingConfidenceOptions = {},
): boolean {
  const settings = resolve(options);
  assertUnitInterval(observations);
  return excludedWith(observations, predictablePlugInBets(observations, settings.alpha), m, settings);
}

function excludedWith(
  observations: readonly number[],
  bets: readonly number[],
  m: number,
  settings: Resolved,
): boolean {
  const threshold = Math.log(1 / settings.alpha);
  return logHedgedCapitalPath(observations, bets, m, settings).some((value) => value >= threshold);
}

/**
 * The betting confidence sequence's bounds on the mean after the
 * observations (the running intersection over every sample size so far),
 * found by bisection to `tolerance`. With no observation: [0, 1].
 *
 * @param observations values in [0, 1], in the order observed
 * @param tolerance width of the bisection bracket at the end. Default 1e-6.
 * @throws RangeError on an observation or setting out of range
 *
 * @example
 * ```ts
 * const bounds = bettingConfidenceBounds([0.6, 0.7, 0.55, 0.8, 0.65], { alpha: 0.05 });
 * bounds.lower < 0.66 && 0.66 < bounds.upper; // true: five observations say little
 * ```
 */
export function bettingConfidenceBounds(
  observations: readonly number[],
  options: BettingConfidenceOptions & { tolerance?: number } = {},
): MeanBounds {
  const settings = resolve(options);
  assertUnitInterval(observations);
  if (observations.length === 0) return { lower: 0, upper: 1 };
  const tolerance = options.tolerance ?? 1e-6;
  const bets = predictablePlugInBets(observations, settings.alpha);
  const excluded = (m: number): boolean => excludedWith(observations, bets, m, settings);
  const centre = (0.5 + observations.reduce((sum, value) => sum + value, 0)) / (observations.length + 1);
  // The set is empty only with probability ≤ α (every m excluded): report the centre then.
  if (excluded(centre)) return { lower: centre, upper: centre };
  const edge = (outside: number, inside: number): number => {
    if (!excluded(outside)) return outside;
    let out = outside;
    let within = inside;
    while (Math.abs(within - out) > tolerance) {
      const middle = (out + within) / 2;
      if (excluded(middle)) out = middle;
      else within = middle;
    }
    return within;
  };
  return { lower: edge(0, centre), upper: edge(1, centre) };
}

/**
 * Bounds on the mean of differences in [−1, 1] (a paired difference of two
 * scores in [0, 1]): the betting sequence on (d + 1) / 2, mapped back.
 *
 * @throws RangeError on a difference outside [−1, 1]
 */
export function meanDifferenceBounds(
  differences: readonly number[],
  options: BettingConfidenceOptions & { tolerance?: number } = {},
): MeanBounds {
  const bounds = bettingConfidenceBounds(toUnit(differences), options);
  return { lower: 2 * bounds.lower - 1, upper: 2 * bounds.upper - 1 };
}

/**
 * True when the sequence on differences in [−1, 1] excludes every mean at or
 * above `value` that lies above the sample mean: the mean difference is
 * significantly below `value` (checked at `value` itself, an O(t) test;
 * exact for an interval). False when the sample mean is at or above `value`.
 */
export function differenceIsBelow(
  differences: readonly number[],
  value: number,
  options: BettingConfidenceOptions = {},
): boolean {
  if (differences.length === 0) return false;
  const mean = differences.reduce((sum, difference) => sum + difference, 0) / differences.length;
  if (mean >= value) return false;
  return excludesMean(toUnit(differences), Math.min(1, Math.max(0, (value + 1) / 2)), options);
}

function toUnit(differences: readonly number[]): number[] {
  return differences.map((difference, index) => {
    if (!(difference >= -1 && difference <= 1))
      throw new RangeError(
        `difference ${index} is ${difference}: paired differences of scores in [0, 1] lie in [−1, 1]`,
      );
    return (difference + 1) / 2;
  });
}
