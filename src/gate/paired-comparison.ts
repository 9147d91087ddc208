/**
 * The paired comparison of the gate: two scores paired by example id (the
 * examples valid for both), the one-sided paired test on them (Student's
 * paired t-test, or McNemar's exact test for a binary task), and whether
 * invalid outputs rose. Used by the gate's checks (src/gate/gate.ts,
 * src/gate/shadow-check.ts) and by calibration.
 *
 * Source: Student's paired t-test as scipy.stats.ttest_rel; McNemar (1947),
 * the exact binomial form as scipy.stats.binomtest (src/stats/mcnemar.ts);
 * Fisher's exact test as scipy.stats.fisher_exact.
 *
 * @module
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import { fisherExactTest, mcnemarExactTest, mean, pairedTTest } from '../stats/index.ts';

/** Which paired test compared the per-example composites. */
export type PairedTestName = 'paired-t' | 'mcnemar-exact';

/** The evidence of one paired test on per-example composites (candidate > incumbent, one-sided). */
export interface PairedTestResult {
  /** Which test ran. */
  name: PairedTestName;
  /** What it tests, in words (stored as the check's `data.test`). */
  test: string;
  /** One-sided p-value (candidate better); 1 when there is nothing to test. */
  pValue: number;
  /** The evidence as stored with the check (`t`, `df` for the t-test; `b`, `c`, `discordant` for McNemar's). */
  data: Record<string, unknown>;
  /** One phrase for the check's detail, e.g. `McNemar's exact test: b = 6, c = 1, p = 0.0625`. */
  text: string;
}

/**
 * The one-sided paired test (candidate > incumbent) of the gate on
 * per-example composites of the same examples:
 *
 * - a continuous task: Student's paired t-test (scipy.stats.ttest_rel,
 *   `alternative='greater'`); fewer than 2 pairs, or `testable` false (no
 *   pair changed), gives p = 1;
 * - a binary task whose per-example values are all 0 or 1: McNemar's exact
 *   test on the discordant pairs (b = examples only the candidate gets
 *   right, c = only the incumbent; p = P(X ≥ b), X ~ Bin(b + c, ½);
 *   scipy.stats.binomtest). The t-test's normal approximation is poor on 0/1
 *   differences with few discordant pairs; McNemar's test is exact;
 * - a binary task whose per-example values are fractions (the mean of
 *   several repeats of a stochastic executor): the paired t-test, and the
 *   evidence says why (`binaryFallback`).
 *
 * @param what `''` or a qualifier for the test text (`' on shadow'`)
 */
export function pairedTest(
  candidate: readonly number[],
  incumbent: readonly number[],
  outcome: 'continuous' | 'binary' | undefined,
  options: { testable?: boolean; what?: string } = {},
): PairedTestResult {
  const what = options.what ?? '';
  const testable = options.testable ?? true;
  const bits = (values: readonly number[]): boolean => values.every((value) => value === 0 || value === 1);
  if (outcome === 'binary' && bits(candidate) && bits(incumbent)) {
    const result = mcnemarExactTest(candidate as Array<0 | 1>, incumbent as Array<0 | 1>, 'greater');
    return {
      name: 'mcnemar-exact',
      test: `McNemar's exact test, one-sided (candidate right more often), per-example outcomes${what}`,
      pValue: result.pValue,
      data: {
        pairedTest: 'mcnemar-exact',
        b: result.b,
        c: result.c,
        bothRight: result.bothRight,
        bothWrong: result.bothWrong,
        discordant: result.discordant,
        statistic: result.statistic,
        pValue: result.pValue,
      },
      text: `McNemar's exact test${what}: b = ${result.b} (only the candidate right), c = ${result.c} (only the incumbent right), p = ${round(result.pValue)}`,
    };
  }
  const t =
    testable && candidate.length >= 2
      ? pairedTTest(candidate, incumbent, { alternative: 'greater' })
      : { t: Number.NaN, df: Math.max(0, candidate.length - 1), pValue: 1 };
  const fallback =
    outcome === 'binary'
      ? { binaryFallback: 'per-example means of several repeats are not 0/1 outcomes: the paired t-test compares them' }
      : {};
  return {
    name: 'paired-t',
    test: `paired t-test, one-sided (candidate > incumbent), per-example${what === '' ? '' : ' shadow'} composites`,
    pValue: t.pValue,
    data: { pairedTest: 'paired-t', t: t.t, df: t.df, pValue: t.pValue, ...fallback },
    text: `paired t-test${what}: t = ${round(t.t)}, ${what === '' ? `df = ${t.df}, ` : ''}p = ${round(t.pValue)}`,
  };
}

/** Paired comparison of two scores over the examples valid for both. */
export interface PairedComparison {
  ids: string[];
  incumbent: number[];
  candidate: number[];
  differences: number[];
  /** Mean difference (candidate − incumbent) over shared examples; 0 when none. */
  delta: number;
  /** Examples left out because one side had no valid output. */
  leftOut: string[];
}

/** Pairs per-example mean composites by id (examples valid for both). */
export function comparePaired(incumbent: PartitionScore, candidate: PartitionScore): PairedComparison {
  const left = perExampleMeans(incumbent);
  const right = perExampleMeans(candidate);
  const allIds = new Set([...incumbent.examples, ...candidate.examples].map((record) => record.exampleId));
  const ids: string[] = [];
  const leftOut: string[] = [];
  for (const id of [...allIds].sort()) {
    if (left.has(id) && right.has(id)) ids.push(id);
    else leftOut.push(id);
  }
  const incumbentValues = ids.map((id) => left.get(id)!);
  const candidateValues = ids.map((id) => right.get(id)!);
  const differences = ids.map((_, index) => candidateValues[index]! - incumbentValues[index]!);
  return {
    ids,
    incumbent: incumbentValues,
    candidate: candidateValues,
    differences,
    delta: differences.length === 0 ? 0 : mean(differences),
    leftOut,
  };
}

/** A statistic rounded to 6 decimals, as the evidence shows it. */
export const round = (value: number): number => Math.round(value * 1e6) / 1e6;

/**
 * True when the candidate has more invalid outputs than the incumbent:
 * by count for a deterministic executor; for a stochastic one, when its
 * invalid rate is significantly higher (Fisher's exact test, one-sided, at
 * `alpha`). Transient failures are not counted.
 */
export function invalidRose(
  incumbent: PartitionScore,
  candidate: PartitionScore,
  stochastic: boolean,
  alpha: number,
): boolean {
  const terminal = (score: PartitionScore): number => score.invalid - (score.transient ?? 0);
  if (!stochastic) return terminal(candidate) > terminal(incumbent);
  const outputs = (score: PartitionScore): number => score.total - (score.transient ?? 0);
  const table: [[number, number], [number, number]] = [
    [terminal(candidate), outputs(candidate) - terminal(candidate)],
    [terminal(incumbent), outputs(incumbent) - terminal(incumbent)],
  ];
  return fisherExactTest(table, 'greater').pValue < alpha;
}
