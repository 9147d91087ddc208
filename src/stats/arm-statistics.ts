/**
 * Sufficient statistics of the two arms of a randomized experiment (an online
 * study's incumbent and candidate): per arm and metric, the units, Σx and Σx²,
 * from which means, variances, Welch's test and the mixture SPRT are computed
 * (src/online/statistics/). Pure types, here so that storage (which sums them
 * in SQL) and the online gate share them without storage importing online/.
 */

/**
 * Sufficient statistics of one metric on one arm: everything the tests
 * need (mean and variance of the per-unit values).
 */
export interface ArmStatistics {
  /** Analysed units (attribution window closed), an integer ≥ 0. */
  readonly units: number;
  /** Σ of the per-unit values (binary: the units with the outcome). */
  readonly sum: number;
  /** Σ of the squared per-unit values (binary: equals `sum`). */
  readonly sumOfSquares: number;
}

/** One metric on both arms of an experiment. */
export interface ArmPair {
  readonly incumbent: ArmStatistics;
  readonly candidate: ArmStatistics;
}

/** Assignment counts of one period during which the configured split was constant (one ramp step). */
export interface AssignmentPeriod {
  /** Units assigned to the incumbent in this period. */
  readonly incumbent: number;
  /** Units assigned to the candidate in this period. */
  readonly candidate: number;
  /** The candidate's configured share of this period, in (0, 1). Default: the settings' `split`. */
  readonly candidateShare?: number;
}
