/**
 * Shapes of evaluation results, shared by the evaluator, the gate, the
 * proposers and the reports.
 *
 * Three different things are never conflated: a score of 0 (valid output,
 * nothing right), a skipped component (partial gold: not scored), and an
 * invalid output (no score at all).
 */

/** Component names of the intent composite. */
export const COMPONENTS = ['appType', 'entityRecall', 'roleAccuracy', 'behaviorCoverage'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

/** Component scores in [0, 1]; a missing key means the component was skipped. */
export type ComponentScores = Partial<Record<ComponentName, number>>;

/** Per-example diagnostics: what the proposer and the user read. */
export interface ExampleDiagnostics {
  /** Gold app types (primary first) and the predicted one, when they disagree. */
  appTypeMismatch?: { expected: string[]; predicted: string };
  /** Gold entity names that no predicted entity matched. */
  missedEntities: string[];
  /** Predicted entity names that match no gold entity. */
  spuriousEntities: string[];
  /** Matched entities whose role is wrong. */
  wrongRoles: Array<{ entity: string; expected: string; predicted: string }>;
  /** Gold behaviours absent from the prediction. */
  missingBehaviors: string[];
  /** Predicted behaviours not in the gold. */
  extraBehaviors: string[];
  /** Gold relations (as "from -> to") with no predicted relation between the same entities. */
  missedRelations: string[];
  /** Gold projections absent from the prediction. */
  missingProjections: string[];
}

/** Diagnostics reported beside the composite, not in it. Null when undefined (0/0). */
export interface DiagnosticMetrics {
  entityPrecision: number | null;
  relationRecall: number | null;
  projectionCoverage: number | null;
}

/** The score of one example for one repeat. */
export type ExampleScore =
  | {
      valid: true;
      /** Weighted mean of the scored components, renormalised over them; in [0, 1]. */
      composite: number;
      components: ComponentScores;
      /** Components skipped because the gold lacks them. */
      skipped: ComponentName[];
      metrics: DiagnosticMetrics;
      diagnostics: ExampleDiagnostics;
    }
  | {
      valid: false;
      /** Why no intent was produced (see `InvalidReason`). */
      invalidReason: string;
      message: string;
      raw?: string;
      /**
       * A transient failure (timeout, network or server error after the
       * executor's retries): never stored, executed again on the next read,
       * and not held against the artifact by the validity check.
       */
      transient?: true;
    };

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
  /** Mean of each component over the example-repeats where it was scored. */
  components: ComponentScores;
  /** Mean diagnostic metrics (over example-repeats where defined). */
  metrics: DiagnosticMetrics;
  /** Number of invalid example-repeats (transient failures included). */
  invalid: number;
  /** Of the invalid example-repeats, how many were transient failures (not stored; executed again on the next read). */
  transient: number;
  /** Number of example-repeats in total. */
  total: number;
  /** Run-level composites, one per repeat (mean over the run's valid examples). */
  runComposites: Array<number | null>;
  /** Every example-repeat score. */
  examples: ExampleScoreRecord[];
  /** Token usage and cost, summed. */
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  latencyMs: number;
}
