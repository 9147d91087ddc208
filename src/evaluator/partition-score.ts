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

/** Component scores in [0, 1], by the task's component names; a missing key means the component was skipped. */
export type ComponentScores = Record<string, number>;

/** Diagnostic metrics reported beside the composite, by name; null when undefined (0/0). */
export type MetricScores = Record<string, number | null>;

/** The score of one example for one repeat. */
export type ExampleScore =
  | {
      valid: true;
      /** Weighted mean of the scored components, renormalised over them; in [0, 1]. */
      composite: number;
      components: ComponentScores;
      /** Components skipped because the gold lacks them. */
      skipped: string[];
      metrics: MetricScores;
      /** The task's per-example diagnostics (JSON), e.g. the intent task's missed entities. */
      diagnostics: Record<string, unknown>;
      /** What went wrong, in words (the task's feedback); empty when the output is right. */
      feedback: string;
    }
  | {
      valid: false;
      /** Why no output was scored (see `InvalidReason` in src/executors/executor.ts). */
      invalidReason: string;
      message: string;
      raw?: string;
      /**
       * `invalidReason` {@link UNSCORED_REASON}: the output is valid, but no
       * component of weight > 0 was scored (a partial gold that names only
       * weight-0 components, a scorer that omits the only weighted one). A
       * missing score, not a 0 and not an invalid output: left out of the
       * composite and of `invalid`, and named in `PartitionScore.unscored`.
       *
       * A transient failure (timeout, network or server error after the
       * executor's retries): never stored, executed again on the next read,
       * and not held against the artifact by the validity check.
       */
      transient?: true;
    };

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
