/**
 * Shapes of evaluation results (and `perExampleMeans`, the pure reading the
 * gate pairs examples with), shared by the evaluator, the gate, the
 * proposers and the reports. Task-agnostic: components and metrics are named
 * by the study's task (`src/tasks/task.ts`), diagnostics are the task's own
 * JSON, and the feedback text says what went wrong in words.
 *
 * Three different things are never conflated: a score of 0 (valid output,
 * nothing right), a skipped component (partial gold: not scored), and an
 * invalid output (no score at all: the executor gave no answer, or one that
 * does not fit the task's output schema).
 */

import type { ComponentScores, ExampleScore, MetricScores } from '../tasks/example-score.ts';

export type { ComponentScores, ExampleScore, MetricScores } from '../tasks/example-score.ts';

/** The invalid reason of an example with no weighted component scored: a missing score, not an invalid output. */
export const UNSCORED_REASON = 'unscored';

/** The report line naming the examples left out of a composite ({@link UNSCORED_REASON}). */
export function describeUnscored(exampleIds: readonly string[]): string {
  return `left out of the composite, no component of weight > 0 scored (a missing score, not 0): ${exampleIds.length} example(s): ${exampleIds.join(', ')}`;
}

/** An example score with its identity, as stored and reported. */
export type ExampleScoreRecord = ExampleScore & { exampleId: string; repeat: number };

/**
 * The evaluation of one artifact on one named partition, over `repeats` runs.
 */
export interface PartitionScore {
  partition: string;
  artifactHash: string;
  fingerprint: string;
  repeats: number;
  /** Mean composite over valid example-repeats; null when nothing was valid. */
  composite: number | null;
  /** Mean of each component over the example-repeats where it was scored, in the task's component order. */
  components: ComponentScores;
  /** Mean of each diagnostic metric (over example-repeats where defined), in the task's metric order; null when never defined. */
  metrics: MetricScores;
  /** Number of invalid example-repeats (transient failures included). */
  invalid: number;
  /** Of the invalid example-repeats, how many were transient failures (not stored; executed again on the next read). */
  transient: number;
  /**
   * Examples (ids, in order, once each) left out because no weighted
   * component was scored ({@link UNSCORED_REASON}); counted in `total`, not
   * in `invalid`. Absent when there is none.
   */
  unscored?: string[];
  /** Number of example-repeats in total. */
  total: number;
  /**
   * Only with `storedOnly` (src/evaluator/evaluator.ts): example-repeats with
   * no stored result, not executed and not in `total`. 0 when every one was stored.
   */
  missing?: number;
  /**
   * Adaptive repeats (src/gate/noise-free.ts): example-repeats copied from a
   * noise-free example's one evaluated draw instead of evaluated (they are
   * in `examples` and `total`). Absent: every example-repeat was evaluated.
   */
  copied?: number;
  /** Run-level composites, one per repeat (mean over the run's valid examples). */
  runComposites: Array<number | null>;
  /** Every example-repeat score. */
  examples: ExampleScoreRecord[];
  /** Token usage and cost, summed. */
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  latencyMs: number;
}

/**
 * Per-example mean composite over repeats, keyed by example id; examples with
 * no valid repeat are absent (never scored as 0).
 */
export function perExampleMeans(score: PartitionScore): Map<string, number> {
  const sums = new Map<string, { sum: number; count: number }>();
  for (const record of score.examples) {
    if (!record.valid) continue;
    const entry = sums.get(record.exampleId) ?? { sum: 0, count: 0 };
    entry.sum += record.composite;
    entry.count += 1;
    sums.set(record.exampleId, entry);
  }
  return new Map([...sums].map(([id, { sum, count }]) => [id, sum / count]));
}
