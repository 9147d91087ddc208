/**
 * What a candidate refused as not significant shows about the examples it
 * needs (the stuck-study advice, src/report/stuck-advice.ts), read from the
 * gate's evidence.
 */
import type { ExampleOutcomes } from './stuck-factors.ts';
import { requiredExamples, requiredExamplesMcNemar } from './required-examples.ts';

/** One refused experiment as the advice reads it. */
export interface RefusedExperiment {
  id: number;
  reason: string;
  /** The gate's evidence (`experiments.evidence`): `{ checks: [{ name, statistic, data }] }`. */
  evidence: unknown;
  /** Right/wrong tasks: the optimization examples it fixed and broke against its base, from the notebook's per-example results. */
  outcomes?: ExampleOutcomes;
}

/** What a refused-as-not-significant candidate shows about the examples it needs. */
export interface SignificanceShortfall {
  experimentId: number;
  /** The paired test the gate used: the t-test (continuous scores) or McNemar's exact test (right/wrong outcomes). Default paired-t. */
  test?: 'paired-t' | 'mcnemar-exact';
  /** Examples the paired test used (valid for both). */
  testedOn: number;
  /** Mean paired difference Δ (candidate − incumbent composite). */
  meanDifference: number;
  /** SD of the paired differences. */
  differenceSd: number;
  /** d_z = Δ / SD. */
  effectSize: number;
  pValue: number;
  /** {@link requiredExamples}; null when no number would do. */
  requiredExamples: number | null;
}

interface CheckEvidence {
  name?: string;
  statistic?: number | null;
  data?: Record<string, unknown>;
}

function checksOf(evidence: unknown): CheckEvidence[] {
  const checks = (evidence as { checks?: unknown } | null)?.checks;
  return Array.isArray(checks) ? (checks as CheckEvidence[]) : [];
}

/** The paired test of a not-significant refusal, read from its evidence; undefined when it is not there. */
export function significanceShortfall(experiment: RefusedExperiment, alpha: number): SignificanceShortfall | undefined {
  const checks = checksOf(experiment.evidence);
  const margin = checks.find((check) => check.name === 'margin');
  const significance = checks.find((check) => check.name === 'significance');
  if (significance?.data?.pairedTest === 'mcnemar-exact') {
    const b = Number(significance.data.b);
    const c = Number(significance.data.c);
    const pairs = b + c + Number(significance.data.bothRight ?? 0) + Number(significance.data.bothWrong ?? 0);
    if (![b, c, pairs].every(Number.isFinite) || pairs < 2) return undefined;
    // Paired differences d_i ∈ {−1, 0, 1}: mean (b − c)/n, sample SD over n − 1.
    const meanDifference = (b - c) / pairs;
    const variance = (b + c - pairs * meanDifference ** 2) / (pairs - 1);
    const differenceSd = Math.sqrt(Math.max(0, variance));
    return {
      experimentId: experiment.id,
      test: 'mcnemar-exact',
      testedOn: pairs,
      meanDifference,
      differenceSd,
      effectSize:
        differenceSd === 0 ? (meanDifference > 0 ? Number.POSITIVE_INFINITY : 0) : meanDifference / differenceSd,
      pValue: Number(significance.data.pValue ?? significance.statistic),
      requiredExamples: requiredExamplesMcNemar(b, c, pairs, alpha),
    };
  }
  const t = Number(significance?.data?.t);
  const df = Number(significance?.data?.df);
  const delta = Number(margin?.statistic);
  if (!Number.isFinite(t) || !Number.isFinite(df) || df < 1 || !Number.isFinite(delta)) return undefined;
  const testedOn = df + 1;
  const effectSize = t / Math.sqrt(testedOn);
  return {
    experimentId: experiment.id,
    testedOn,
    meanDifference: delta,
    differenceSd: effectSize === 0 ? 0 : delta / effectSize,
    effectSize,
    pValue: Number(significance?.data?.pValue ?? significance?.statistic),
    requiredExamples: requiredExamples(effectSize, alpha),
  };
}
