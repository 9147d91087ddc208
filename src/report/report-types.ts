/**
 * The shapes of the study report (src/report/report.ts): scores per
 * partition, the partitions left unevaluated and why, the corpus moves, and
 * the report itself.
 */
import type { PartitionName } from '../corpus/example.ts';
import type { ComponentScores, MetricScores } from '../evaluator/partition-score.ts';
import type { StudyHeadline } from '../loop/loaded-study.ts';
import type { StuckAdvice } from './stuck-advice.ts';
import type { FlakyExamples } from '../evaluator/flaky-examples.ts';
import { FLAKY_RANGE } from '../evaluator/flaky-examples.ts';

/** Scores of one artifact on one partition, as reported. */
export interface PartitionSummary {
  composite: number | null;
  components: ComponentScores;
  metrics: MetricScores;
  invalid: number;
  examples: number;
  /**
   * False when the report could not evaluate this partition (composite null,
   * no components): {@link StudyReport.notEvaluated} says why. Absent in
   * reports stored before it existed (= true).
   */
  evaluated?: boolean;
}

/**
 * Why the report left a partition unevaluated: the run was interrupted (no
 * model call after an interrupt), the budget is spent (no call beyond it), or
 * the infrastructure failed (the run's stop, or failures while reporting).
 */
export type NotEvaluatedReason = 'interrupted' | 'budget' | 'infrastructure_failure';

/** A partition of the seed or of the best artifact the report could not evaluate. */
export interface NotEvaluatedPartition {
  artifact: 'baseline' | 'best';
  version: number;
  partition: PartitionName;
  reason: NotEvaluatedReason;
  /** What stopped it, with the numbers (example-repeats without a stored result, the error). */
  detail: string;
}

/**
 * The stops after which the report evaluates nothing new, reading only the
 * results the run stored: after an interrupt, a spent budget or an
 * infrastructure failure, another model call is what the user did not want
 * (or cannot succeed).
 */
export const STORED_ONLY_STOPS: Readonly<Record<string, NotEvaluatedReason>> = Object.freeze({
  interrupted: 'interrupted',
  budget: 'budget',
  infrastructure_failure: 'infrastructure_failure',
});
/** Examples per partition. */
export type PartitionSizes = Record<PartitionName, number>;

/** A graduation or a rotation recorded during a run: examples moved from shadow into optimization between rounds. */
export interface CorpusMoveSummary {
  /** `graduated`: served their time in shadow; `rotated_out`: the shadow was spent (maxShadowExposures). */
  kind: 'graduated' | 'rotated_out';
  from: 'shadow';
  to: 'optimization';
  exampleIds: string[];
  /** The last experiment decided before the move (null: none yet). */
  afterExperiment: number | null;
  /** When it was recorded (ISO 8601). */
  at: string;
}

/** A partition on which the best artifact scores below the seed. */
export interface BelowBaseline {
  partition: PartitionName;
  /** Composites in [0, 1] (higher is better), on the partition as it is now. */
  baseline: number;
  best: number;
  /** best − baseline, below 0. */
  delta: number;
}

/** Where a run's corpus stood when it started (after the corpus files' changes were picked up): see {@link markCorpus}. */
export interface CorpusMark {
  sizes: PartitionSizes;
  /** The last corpus event recorded then (0: none); later events are this run's. */
  lastEventId: number;
}

/** The study's task as reports name it: its id, component and metric names in report order, and the headline figure. */
export interface ReportedTask {
  /** The task's id (name and scorer version), e.g. `intent-scorer@1`. */
  id: string;
  /** Component names, in the task's report order. */
  components: string[];
  /** Diagnostic metric names, in the task's report order. */
  metrics: string[];
}

export interface StudyReport {
  study: string;
  fingerprint: string;
  /** The task: id, component and metric names (the report's columns). */
  task: ReportedTask;
  /**
   * The headline figure per partition, of the seed and of the best artifact:
   * the composite, or the task's own figure (`misroute rate` = 1 − accuracy).
   */
  headline: StudyHeadline & {
    baseline: Record<PartitionName, number | null>;
    best: Record<PartitionName, number | null>;
  };
  /** Composite per partition of the seed artifact. */
  baseline: Record<PartitionName, number | null>;
  /** Composite per partition of the best (active) artifact. */
  best: Record<PartitionName, number | null>;
  details: { baseline: Record<PartitionName, PartitionSummary>; best: Record<PartitionName, PartitionSummary> };
  /**
   * The partitions of the seed and the best artifact the report could not
   * evaluate, and why (their composites above are null); empty when every one
   * was evaluated. Absent in reports stored before it existed.
   */
  notEvaluated?: NotEvaluatedPartition[];
  /** Experiments evaluated (accepted + refused), whole study. */
  experiments: number;
  accepted: number;
  /** Refusal reason → count of evaluated candidates the gate refused, whole study. */
  refused: Record<string, number>;
  /** Candidates skipped before evaluation (near-duplicates, changes the incumbent already holds), whole study. */
  skipped: number;
  /** Decisions on candidates rebased onto an incumbent that moved during their round, and judged again, whole study. */
  rebased: number;
  /** Failed proposer answers by reason code (`broken_json`, `truncated`, `call_failed`, ...), whole study. */
  proposalFailures: Record<string, number>;
  /**
   * Raced decisions (`gate.racing`), whole study: how many were raced, how
   * many stopped early for futility (on optimization or on the shadow), and
   * the optimization example-repeats they evaluated of those a full
   * evaluation plans. Absent when no decision was raced.
   */
  racing?: {
    decisions: number;
    stoppedEarly: number;
    /** Decisions whose optimization evaluation an interim look of early acceptance ended (absent when none). */
    acceptedEarly?: number;
    evaluated: number;
    planned: number;
  };
  /** This run: experiments evaluated, accepted, refused, skipped, rebased and failed proposer answers. */
  thisRun: {
    experiments: number;
    accepted: number;
    refused: number;
    skipped: number;
    rebased: number;
    proposalFailures: Record<string, number>;
  };
  stopReason: string;
  stopDetail: string;
  bestVersion: number;
  baselineVersion: number;
  bestArtifact: string;
  database: string;
  wallTimeMs: number;
  /**
   * After a run that decided candidates and accepted none: the dominant
   * refusal reason and the way out (src/report/stuck-advice.ts); null otherwise.
   */
  stuck: StuckAdvice | null;
  /**
   * What the comparison of seed and best stands on: both are evaluated on
   * the partitions as they are at the end of the run (`on: 'current'`),
   * `sizes` now and `sizesAtStart` when this run began (equal when nothing
   * moved: `changed` false).
   */
  comparison: { on: 'current'; sizes: PartitionSizes; sizesAtStart: PartitionSizes; changed: boolean };
  /** Graduations and rotations recorded during this run, in order (also printed as they happen). */
  corpusMoves: CorpusMoveSummary[];
  /** Partitions on which the best artifact's composite is below the seed's (none when the best is the seed). */
  belowBaseline: BelowBaseline[];
  /**
   * With repeats: the examples whose outcome varies across the repeats of the
   * report's evaluations, of the seed and of the best artifact, every
   * partition (src/evaluator/flaky-examples.ts; `level` {@link FLAKY_RANGE}).
   */
  flaky: { level: number; repeats: number; baseline: FlakyExamples; best: FlakyExamples };
  /**
   * Examples left out of the composites because no component of weight > 0
   * was scored (a missing score, not 0: src/evaluator/partition-score.ts
   * `UNSCORED_REASON`), of the seed and of the best artifact, every
   * partition. Absent when there is none.
   */
  unscored?: { baseline: string[]; best: string[] };
}
