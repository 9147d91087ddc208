/**
 * kloop's statistics: pure functions, no I/O, no imports from the rest of
 * the project.
 *
 * - hypothesis tests: {@link welchTTest}, {@link pairedTTest},
 *   {@link wilcoxonSignedRank}, {@link fisherExactTest},
 *   {@link mcnemarExactTest} (each takes an {@link Alternative});
 * - effect sizes: {@link cohensD}, {@link hedgesG};
 * - uncertainty: {@link bootstrapCI} with {@link createSeededRandom};
 * - sequential: {@link bettingConfidenceBounds} (an anytime-valid confidence
 *   sequence, Waudby-Smith & Ramdas 2024), {@link predictivePower} (futility);
 * - descriptive: {@link mean}, {@link variance}, {@link standardDeviation},
 *   {@link standardError};
 * - text diversity: {@link bigramJaccardDistance}.
 *
 * Reference values for the tests come from SciPy 1.17.1 via
 * `scripts/reference/stats_reference.py` and
 * `scripts/reference/racing_reference.py`.
 *
 * @module
 */
export { ALTERNATIVES, type Alternative } from './alternative.ts';
export { mean, variance, standardDeviation, standardError } from './descriptive.ts';
export {
  welchTTest,
  welchTTestFromMoments,
  pairedTTest,
  type SampleMoments,
  type TTestOptions,
  type TTestResult,
} from './t-test.ts';
export {
  wilcoxonSignedRank,
  WILCOXON_EXACT_MAXIMUM_PAIRS,
  WILCOXON_EXACT_MAXIMUM_PAIRS_WITH_TIES,
  type WilcoxonMethod,
  type WilcoxonSignedRankOptions,
  type WilcoxonSignedRankResult,
} from './wilcoxon-signed-rank.ts';
export { fisherExactTest, type FisherExactResult } from './fisher-exact.ts';
export { cohensD, hedgesG, pooledStandardDeviation } from './effect-size.ts';
export { createSeededRandom, type RandomSource } from './seeded-random.ts';
export { bootstrapCI, type BootstrapOptions, type ConfidenceInterval } from './bootstrap-ci.ts';
export { bigramJaccardDistance, wordBigrams, textWords } from './bigram-jaccard-distance.ts';
export {
  mcnemarExactTest,
  mcnemarExactTestFromCounts,
  mcnemarMinimumPairs,
  type BinaryOutcome,
  type McNemarCounts,
  type McNemarResult,
} from './mcnemar.ts';
export {
  bettingConfidenceBounds,
  differenceIsBelow,
  excludesMean,
  hedgedCapital,
  meanDifferenceBounds,
  predictablePlugInBets,
  type BettingConfidenceOptions,
  type MeanBounds,
} from './betting-confidence-sequence.ts';
export { normalQuantile, predictivePower, type PredictivePowerInput } from './predictive-power.ts';
