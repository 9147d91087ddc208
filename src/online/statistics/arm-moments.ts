/**
 * Means and per-unit variances of an arm's sufficient statistics (units,
 * sum, sum of squares), and the difference of two arms oriented so that
 * positive is better for the candidate.
 *
 * @module
 */
import type { ArmPair, ArmStatistics, OnlineMetricDirection, OnlineMetricKind } from '../types.ts';

/** An arm's mean and per-unit variance. */
export interface ArmMoments {
  readonly units: number;
  /** Σx / n; 0 for an empty arm. */
  readonly mean: number;
  /**
   * Per-unit variance: binary metrics the Bernoulli variance p̂(1 − p̂);
   * continuous ones the unbiased sample variance (Σx² − (Σx)²/n) / (n − 1).
   * 0 with fewer than 2 units.
   */
  readonly variance: number;
  /** The unbiased sample variance (n − 1 denominator), for Welch's t-test; 0 with fewer than 2 units. */
  readonly sampleVariance: number;
}

/**
 * Checks that an arm's statistics are possible: an integer number of units ≥ 0,
 * finite sums, Σx² ≥ (Σx)²/n (Cauchy–Schwarz, to rounding), and for a
 * binary metric 0 ≤ Σx = Σx² ≤ n.
 *
 * @throws RangeError naming the arm and the field
 */
export function assertArmStatistics(statistics: ArmStatistics, kind: OnlineMetricKind, label: string): void {
  const { units, sum, sumOfSquares } = statistics;
  if (!(Number.isInteger(units) && units >= 0))
    throw new RangeError(`${label}.units must be an integer ≥ 0; got ${units}.`);
  if (!Number.isFinite(sum)) throw new RangeError(`${label}.sum must be a finite number; got ${sum}.`);
  if (!(Number.isFinite(sumOfSquares) && sumOfSquares >= 0))
    throw new RangeError(`${label}.sumOfSquares must be a finite number ≥ 0; got ${sumOfSquares}.`);
  if (kind === 'binary') {
    if (!(sum >= 0 && sum <= units && sum === sumOfSquares))
      throw new RangeError(
        `${label}: a binary metric needs 0 ≤ sum = sumOfSquares ≤ units; got units ${units}, sum ${sum}, sumOfSquares ${sumOfSquares}.`,
      );
  } else if (units > 0 && sumOfSquares < (sum * sum) / units - 1e-9 * Math.max(1, sumOfSquares)) {
    throw new RangeError(
      `${label}: sumOfSquares ${sumOfSquares} is below sum²/units ${(sum * sum) / units}, impossible for real values.`,
    );
  }
}

/** The mean and variances of one arm (see {@link ArmMoments}). */
export function armMoments(statistics: ArmStatistics, kind: OnlineMetricKind): ArmMoments {
  const { units, sum, sumOfSquares } = statistics;
  if (units === 0) return { units, mean: 0, variance: 0, sampleVariance: 0 };
  const mean = sum / units;
  const sampleVariance = units < 2 ? 0 : Math.max(0, (sumOfSquares - sum * mean) / (units - 1));
  const variance = kind === 'binary' ? mean * (1 - mean) : sampleVariance;
  return { units, mean, variance: units < 2 ? 0 : variance, sampleVariance };
}

/** Both arms' moments and the oriented difference of their means. */
export interface ArmDifference {
  readonly incumbent: ArmMoments;
  readonly candidate: ArmMoments;
  /** Δ̂: mean(candidate) − mean(incumbent) for `increase`, the opposite for `decrease` (positive = candidate better). */
  readonly delta: number;
  /** V = σ²_c/n_c + σ²_i/n_i, the variance of Δ̂ (0 when an arm has fewer than 2 units). */
  readonly varianceOfDelta: number;
}

/** Δ̂ and its variance for two arms (see {@link ArmDifference}). */
export function armDifference(arms: ArmPair, kind: OnlineMetricKind, direction: OnlineMetricDirection): ArmDifference {
  const incumbent = armMoments(arms.incumbent, kind);
  const candidate = armMoments(arms.candidate, kind);
  const raw = candidate.mean - incumbent.mean;
  const testable = incumbent.units >= 2 && candidate.units >= 2;
  return {
    incumbent,
    candidate,
    delta: direction === 'increase' ? raw : -raw,
    varianceOfDelta: testable ? candidate.variance / candidate.units + incumbent.variance / incumbent.units : 0,
  };
}

/** The pooled per-unit standard deviation of two arms, √((σ²_c + σ²_i)/2); 0 for empty arms. */
export function pooledUnitStandardDeviation(difference: ArmDifference): number {
  return Math.sqrt((difference.candidate.variance + difference.incumbent.variance) / 2);
}
