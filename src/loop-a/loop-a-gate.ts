/**
 * Loop A's gate (DESIGN.md §5): compares two Loop A evaluations on the
 * examples valid for both sides ({@link compareLoopA}, saying how many were
 * left out) and decides whether a candidate goes to the review queue
 * ({@link decideLoopA}, a typed decision with every check's evidence). Pure:
 * no I/O.
 *
 * @module
 */
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { LoopAEvaluation, LoopAExampleResult, LoopASummary } from './loop-a-evaluate.ts';
import { summarizeLoopA } from './loop-a-evaluate.ts';

/** Settings of Loop A's gate. */
export interface LoopAGateSettings {
  /**
   * With an unchanged composite, the smallest rise of mean assembly
   * confidence that counts as an improvement (a pattern that covers a
   * recurring shape). Default 0.01.
   */
  minConfidenceGain: number;
  /** How far an anchor example's Loop B composite may drop. Default: the study's `gate.anchorTolerance`. */
  anchorTolerance: number;
}

/** One check of Loop A's gate, with its evidence. */
export interface LoopACheck {
  name: 'validity' | 'no-drop' | 'improvement' | 'anchors';
  passed: boolean;
  statistic: number | null;
  threshold: number | null;
  detail: string;
}

export type LoopARefusalReason =
  | 'invalid'
  | 'loop_a_drop'
  | 'no_improvement'
  | 'anchor_regression'
  | 'constraint'
  | 'duplicate';

/** Loop A's gate decision (typed, with every check's evidence). */
export type LoopADecision =
  | { passed: true; checks: LoopACheck[]; comparison: LoopAComparison }
  | { passed: false; reason: LoopARefusalReason; checks: LoopACheck[]; comparison: LoopAComparison | null };

/** Two Loop A evaluations over the examples valid for both. */
export interface LoopAComparison {
  /** Examples valid for both sides (the paired set). */
  paired: number;
  /** Left out because invalid on one side or both. */
  leftOut: number;
  incumbent: LoopASummary;
  candidate: LoopASummary;
  /** candidate − incumbent composite on the paired set. */
  compositeDelta: number | null;
  confidenceDelta: number | null;
  /** Per partition, composite delta on the paired set. */
  partitionDeltas: Partial<Record<PartitionName, number | null>>;
}

/** Compares two evaluations on the examples valid for both. */
export function compareLoopA(incumbent: LoopAEvaluation, candidate: LoopAEvaluation): LoopAComparison {
  const validIds = (evaluation: LoopAEvaluation): Set<string> =>
    new Set(evaluation.results.filter((result) => result.valid).map((result) => result.id));
  const incumbentValid = validIds(incumbent);
  const candidateValid = validIds(candidate);
  const both = new Set([...incumbentValid].filter((id) => candidateValid.has(id)));
  const allIds = new Set([...incumbent.results, ...candidate.results].map((result) => result.id));
  const pick = (evaluation: LoopAEvaluation, partition?: PartitionName): LoopAExampleResult[] =>
    evaluation.results.filter(
      (result) => both.has(result.id) && (partition === undefined || result.partition === partition),
    );
  const incumbentSummary = summarizeLoopA(pick(incumbent));
  const candidateSummary = summarizeLoopA(pick(candidate));
  const difference = (left: number | null, right: number | null): number | null =>
    left === null || right === null ? null : right - left;
  const partitionDeltas: Partial<Record<PartitionName, number | null>> = {};
  for (const name of PARTITIONS) {
    const before = pick(incumbent, name);
    if (before.length === 0) continue;
    partitionDeltas[name] = difference(
      summarizeLoopA(before).composite,
      summarizeLoopA(pick(candidate, name)).composite,
    );
  }
  return {
    paired: both.size,
    leftOut: allIds.size - both.size,
    incumbent: incumbentSummary,
    candidate: candidateSummary,
    compositeDelta: difference(incumbentSummary.composite, candidateSummary.composite),
    confidenceDelta: difference(incumbentSummary.meanConfidence, candidateSummary.meanConfidence),
    partitionDeltas,
  };
}

/** Floating-point slack when comparing composites. */
const EPSILON = 1e-9;

/**
 * Loop A's gate. A candidate goes to review only when all hold:
 * 1. validity — no more invalid intents than the incumbent;
 * 2. no-drop — the Loop A composite drops neither on the corpus nor on any
 *    partition (paired examples);
 * 3. improvement — the corpus composite rises, or stays equal while mean
 *    assembly confidence rises by at least `minConfidenceGain`;
 * 4. anchors — the Loop B composite does not regress on the anchor partition:
 *    no anchor example drops by more than `anchorTolerance`, none turns
 *    invalid (skipped, and said so, for a pattern: intents do not change).
 */
export function decideLoopA(
  input: {
    incumbent: LoopAEvaluation;
    candidate: LoopAEvaluation;
    /** Loop B scores on the anchor partition; null when the candidate cannot change intents. */
    anchors: { incumbent: PartitionScore; candidate: PartitionScore } | null;
  },
  settings: LoopAGateSettings,
): LoopADecision {
  const checks: LoopACheck[] = [];
  const comparison = compareLoopA(input.incumbent, input.candidate);
  const refuse = (reason: LoopARefusalReason): LoopADecision => ({ passed: false, reason, checks, comparison });

  const validity = input.candidate.invalid <= input.incumbent.invalid;
  checks.push({
    name: 'validity',
    passed: validity,
    statistic: input.candidate.invalid,
    threshold: input.incumbent.invalid,
    detail: `${input.candidate.invalid} invalid intents (incumbent ${input.incumbent.invalid})`,
  });
  if (!validity) return refuse('invalid');

  const drops = Object.entries(comparison.partitionDeltas).filter(([, delta]) => delta !== null && delta < -EPSILON);
  const corpusDelta = comparison.compositeDelta ?? 0;
  const noDrop = corpusDelta >= -EPSILON && drops.length === 0;
  checks.push({
    name: 'no-drop',
    passed: noDrop,
    statistic: comparison.compositeDelta,
    threshold: 0,
    detail: `Δ composite ${formatSigned(comparison.compositeDelta)} on ${comparison.paired} paired examples (${comparison.leftOut} left out: invalid on a side)${drops.length > 0 ? `; drops on ${drops.map(([name, delta]) => `${name} ${formatSigned(delta)}`).join(', ')}` : ''}`,
  });
  if (!noDrop) return refuse('loop_a_drop');

  const confidenceDelta = comparison.confidenceDelta ?? 0;
  const improved =
    corpusDelta > EPSILON ||
    (Math.abs(corpusDelta) <= EPSILON && confidenceDelta >= settings.minConfidenceGain - EPSILON);
  checks.push({
    name: 'improvement',
    passed: improved,
    statistic: corpusDelta > EPSILON ? corpusDelta : confidenceDelta,
    threshold: corpusDelta > EPSILON ? 0 : settings.minConfidenceGain,
    detail:
      corpusDelta > EPSILON
        ? `composite rises by ${formatSigned(corpusDelta)}`
        : `composite unchanged; mean confidence ${formatSigned(comparison.confidenceDelta)} (needs ≥ ${settings.minConfidenceGain})`,
  });
  if (!improved) return refuse('no_improvement');

  const anchors = anchorCheck(input.anchors, settings);
  checks.push(anchors);
  if (!anchors.passed) return refuse('anchor_regression');
  return { passed: true, checks, comparison };
}

/**
 * The anchor check of {@link decideLoopA}: no anchor example's Loop B
 * composite drops by more than `anchorTolerance` or turns invalid; passed,
 * and said to be skipped, when `anchors` is null (the candidate cannot change
 * intents).
 */
function anchorCheck(
  anchors: { incumbent: PartitionScore; candidate: PartitionScore } | null,
  settings: LoopAGateSettings,
): LoopACheck {
  if (anchors === null) {
    return {
      name: 'anchors',
      passed: true,
      statistic: null,
      threshold: null,
      detail: 'skipped: the candidate does not change intents, so Loop B scores are unchanged',
    };
  }
  const before = perExampleMeans(anchors.incumbent);
  const after = perExampleMeans(anchors.candidate);
  const regressions: string[] = [];
  let worst = 0;
  for (const [id, score] of before) {
    const now = after.get(id);
    if (now === undefined) regressions.push(`${id} turned invalid`);
    else if (score - now > settings.anchorTolerance + EPSILON) regressions.push(`${id} ${formatSigned(now - score)}`);
    if (now !== undefined) worst = Math.min(worst, now - score);
  }
  const passed = regressions.length === 0;
  return {
    name: 'anchors',
    passed,
    statistic: worst,
    threshold: -settings.anchorTolerance,
    detail: passed
      ? `no anchor regresses (Loop B anchor composite ${formatScore(anchors.incumbent.composite)} → ${formatScore(anchors.candidate.composite)})`
      : `${regressions.length} anchor regression(s): ${regressions.slice(0, 8).join('; ')}`,
  };
}

function formatSigned(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
}

function formatScore(value: number | null): string {
  return value === null ? '—' : value.toFixed(4);
}
