/**
 * The score of one example, as a task's scoring yields it and the evaluator
 * records it (src/evaluator/partition-score.ts re-exports these shapes with
 * the partition-level ones). Types only, with no imports: part of the task
 * contract that the gate may read without reaching any task.
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
