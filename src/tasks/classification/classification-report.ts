/**
 * Reports over many classification outcomes: accuracy and misroute rate,
 * per-label recall, and the confusion table (expected × predicted counts).
 *
 * Pure functions over `{ expected, predicted }` pairs, one per *valid*
 * example-repeat (what {@link classificationOutcome} reads from a score's
 * diagnostics). Invalid outputs are not outcomes: they are counted and
 * reported apart by the evaluator, never as misroutes (DESIGN §6: a score of
 * 0, a missing score and an invalid output are three different things).
 *
 * Definitions (scikit-learn's `accuracy_score`, `recall_score(average=None)`
 * and `confusion_matrix`, with the rows the true labels):
 *
 * - accuracy = right / outcomes; misroute rate = 1 − accuracy;
 * - recall of label ℓ = outcomes expected ℓ and predicted ℓ / outcomes
 *   expected ℓ (its support); null when the support is 0 (0/0, never 0);
 * - confusion table: `counts[i][j]` = outcomes expected `labels[i]` and
 *   predicted `labels[j]`.
 *
 * @example
 * ```ts
 * const outcomes = [
 *   { expected: 'billing', predicted: 'billing' },
 *   { expected: 'billing', predicted: 'technical' },
 *   { expected: 'technical', predicted: 'technical' },
 * ];
 * misrouteRate(outcomes); // 1/3
 * perLabelRecall(outcomes, ['billing', 'technical'])[0]; // { label: 'billing', support: 2, correct: 1, recall: 0.5 }
 * confusionTable(outcomes, ['billing', 'technical']).counts; // [[1, 1], [0, 1]]
 * ```
 *
 * @module
 */
import type { TaskScore } from '../task.ts';
import type { ClassificationReportAs } from './classification-task.ts';

/** One valid classification: the gold label and the predicted one. */
export interface ClassificationOutcome {
  expected: string;
  predicted: string;
}

/** Recall of one label. */
export interface LabelRecall {
  label: string;
  /** Outcomes whose expected label is this one. */
  support: number;
  /** Of those, how many were predicted this label. */
  correct: number;
  /** correct / support in [0, 1]; null when the support is 0. */
  recall: number | null;
}

/** Expected × predicted counts. */
export interface ConfusionTable {
  /** Row and column labels, in the same order: the declared labels, then any other label met (sorted). */
  labels: string[];
  /** `counts[i][j]`: outcomes expected `labels[i]`, predicted `labels[j]`. */
  counts: number[][];
  /** Number of outcomes (the sum of every count). */
  total: number;
}

/** Everything a report shows for a classification task. */
export interface ClassificationSummary {
  /** How the study names its headline. */
  reportAs: ClassificationReportAs;
  /** The headline: `accuracy`, or `misroute rate` = 1 − accuracy; null with no outcome. */
  headline: { name: ClassificationReportAs; value: number | null };
  accuracy: number | null;
  misrouteRate: number | null;
  perLabel: LabelRecall[];
  confusion: ConfusionTable;
  /** Number of outcomes. */
  total: number;
}

/**
 * The outcome a classification score's diagnostics hold, or undefined for a
 * score that is not a classification's (no string `expected`/`predicted`).
 */
export function classificationOutcome(score: Pick<TaskScore, 'diagnostics'>): ClassificationOutcome | undefined {
  const expected = score.diagnostics?.expected;
  const predicted = score.diagnostics?.predicted;
  return typeof expected === 'string' && typeof predicted === 'string' ? { expected, predicted } : undefined;
}

/** Share of outcomes whose prediction is the expected label, in [0, 1]; null when there is no outcome. */
export function classificationAccuracy(outcomes: readonly ClassificationOutcome[]): number | null {
  if (outcomes.length === 0) return null;
  return outcomes.filter((outcome) => outcome.expected === outcome.predicted).length / outcomes.length;
}

/** Share of outcomes routed to a wrong label: 1 − accuracy, in [0, 1]; null when there is no outcome. */
export function misrouteRate(outcomes: readonly ClassificationOutcome[]): number | null {
  if (outcomes.length === 0) return null;
  return outcomes.filter((outcome) => outcome.expected !== outcome.predicted).length / outcomes.length;
}

function labelsMet(outcomes: readonly ClassificationOutcome[], labels: readonly string[]): string[] {
  const declared = new Set(labels);
  const others = new Set<string>();
  for (const outcome of outcomes) {
    if (!declared.has(outcome.expected)) others.add(outcome.expected);
    if (!declared.has(outcome.predicted)) others.add(outcome.predicted);
  }
  return [...labels, ...[...others].sort()];
}

/**
 * Recall of every label: the declared `labels` in their order (a label with
 * no outcome has support 0 and recall null), then any other expected label
 * met in the outcomes, sorted.
 */
export function perLabelRecall(outcomes: readonly ClassificationOutcome[], labels: readonly string[]): LabelRecall[] {
  const support = new Map<string, number>();
  const correct = new Map<string, number>();
  for (const outcome of outcomes) {
    support.set(outcome.expected, (support.get(outcome.expected) ?? 0) + 1);
    if (outcome.expected === outcome.predicted) correct.set(outcome.expected, (correct.get(outcome.expected) ?? 0) + 1);
  }
  const declared = new Set(labels);
  const rows = [...labels, ...[...support.keys()].filter((label) => !declared.has(label)).sort()];
  return rows.map((label) => {
    const count = support.get(label) ?? 0;
    const right = correct.get(label) ?? 0;
    return { label, support: count, correct: right, recall: count === 0 ? null : right / count };
  });
}

/** The confusion table of the outcomes over the declared labels (see {@link ConfusionTable}). */
export function confusionTable(outcomes: readonly ClassificationOutcome[], labels: readonly string[]): ConfusionTable {
  const all = labelsMet(outcomes, labels);
  const index = new Map(all.map((label, position) => [label, position]));
  const counts = all.map(() => all.map(() => 0));
  for (const outcome of outcomes) counts[index.get(outcome.expected)!]![index.get(outcome.predicted)!]! += 1;
  return { labels: all, counts, total: outcomes.length };
}

/** The whole report of a classification task over its outcomes. */
export function summarizeClassification(
  outcomes: readonly ClassificationOutcome[],
  options: { labels: readonly string[]; reportAs?: ClassificationReportAs },
): ClassificationSummary {
  const reportAs = options.reportAs ?? 'accuracy';
  const accuracy = classificationAccuracy(outcomes);
  const misroute = misrouteRate(outcomes);
  return {
    reportAs,
    headline: { name: reportAs, value: reportAs === 'accuracy' ? accuracy : misroute },
    accuracy,
    misrouteRate: misroute,
    perLabel: perLabelRecall(outcomes, options.labels),
    confusion: confusionTable(outcomes, options.labels),
    total: outcomes.length,
  };
}
