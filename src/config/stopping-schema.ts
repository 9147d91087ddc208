/** `stopping:` and `corpusPolicy:` of `kloop.yaml` (src/config/config.ts): when a run stops, and how the corpus partitions move. */
import { z } from 'zod';
import { count, nonNegative } from './schema-numbers.ts';

export const stoppingSchema = z.strictObject({
  /** Most experiments (evaluated candidates) in a run. Default 60. */
  maxExperiments: count(0).default(60),
  /** Stop after this many rounds (that evaluated something) without an accepted candidate. Default 3. */
  plateauRounds: count(1).default(3),
  /**
   * Share of `maxExperiments`, in [0, 1], that must be evaluated before a
   * plateau may stop the run: below it, rounds without an accepted candidate
   * are still counted but the run goes on (the proposer may still offer an
   * idea it has not offered yet). Default 0: the plateau stops the run
   * whenever it holds. Only the plateau waits; every other stop does not.
   */
  plateauMinSpent: z.number().min(0).max(1).default(0),
  /**
   * Stop as `no_new_proposals` (exit 0) after this many rounds in a row in
   * which the proposer brought nothing new to evaluate. Default 2.
   */
  idleRounds: count(1).default(2),
  /** Stop once the incumbent's optimization composite reaches this, in [0, 1]. */
  target: z.number().min(0).max(1).optional(),
  /** Stop after this many consecutive proposal or evaluation failures. Default 5. */
  maxConsecutiveFailures: count(1).default(5),
  /**
   * Stop when more than this fraction of the run's proposals failed, in
   * [0, 1]; only once at least 10 proposals were attempted. A proposal is a
   * candidate that was evaluated, or a proposer answer that failed as a whole
   * (the call failed, or the answer was unusable); a failure is such an answer
   * or a candidate whose evaluation failed. Absent = no such stop.
   */
  maxFailureRate: z.number().min(0).max(1).optional(),
  /** Most rounds in a run. */
  maxRounds: count(0).optional(),
  /** Most money to spend in a run, in USD. */
  maxCostUsd: nonNegative.optional(),
});

export const corpusPolicySchema = z.strictObject({
  /** Gate decisions a shadow example serves before it may graduate. Default 20. */
  graduateAfterDecisions: count(1).default(20),
  /** Days a shadow example serves before it may graduate. */
  graduateAfterDays: z.number().gt(0).optional(),
  /** Examples rotated out of shadow at a time. Default 3. */
  rotateSlice: count(0).default(3),
  /** Most gate decisions any shadow example may be used for. Default 40. */
  maxShadowExposures: count(1).default(40),
  /**
   * Rounds a shadow example serves (closed rounds since it entered shadow,
   * whether or not any decision consulted the shadow) before it may graduate,
   * whichever of decisions, rounds or days comes first. Default 5. Keeps a
   * study whose candidates never reach the shadow check from deadlocking:
   * its optimization partition still grows, `rotateSlice` per round boundary,
   * while the shadow is larger than the optimization partition and never
   * below 5 examples (docs/corpus.md, "Graduation").
   */
  graduateAfterRounds: count(1).default(5),
  /**
   * Admit corpus-file records whose gold has no app type (partial gold, e.g.
   * Golden UML imports), as `kloop corpus add --partial-gold` does. Default
   * false: such records are refused (`non_trivial_gold`) and left out.
   */
  partialGold: z.boolean().default(false),
});
