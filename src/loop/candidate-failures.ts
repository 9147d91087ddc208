/**
 * Candidates on which the program gives no valid output at all: a run whose
 * every candidate fails says so (peer fault 1 of issue #36, GEPA #281).
 *
 * A program (or model) that crashes on every artifact but the seed used to
 * end a run as a success: the proposer screened its edits, found every
 * output invalid, dropped them, and the run stopped as `no_new_proposals`
 * (exit 0) with the program's exit code and stderr nowhere. The engine now
 * watches every evaluation of a candidate — the proposer's screening (through
 * `evaluateOptimization`) and the gate's — and counts, in a row, those in
 * which not one optimization example-repeat gave a valid output while at
 * least one failed terminally (transient failures are the infrastructure's:
 * `evaluation_failed`, counted apart). Such a streak of
 * `stopping.maxConsecutiveFailures` stops the run as `candidates_failed`
 * (exit 1), and so does a run that would stop on a criterion (plateau,
 * no_new_proposals, max_rounds, max_experiments) when every candidate it
 * evaluated failed that way. The stop's detail quotes the last failure: the
 * example, the invalid reason and the executor's message (a command
 * program's exit code and the end of its stderr).
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { StopReason } from './run-study.ts';

/** The stops on a criterion that a run whose every candidate failed must not end with. */
const DONE_STOPS: ReadonlySet<StopReason> = new Set(['plateau', 'no_new_proposals', 'max_rounds', 'max_experiments']);

/**
 * How a candidate's optimization evaluation failed when not one example-repeat
 * gave a valid output and at least one failed terminally: `<example id>:
 * <invalid reason>: <message>` of the first terminal failure. Null when some
 * output was valid, or every failure was transient, or nothing was evaluated.
 */
export function noValidOutput(score: PartitionScore): string | null {
  if (score.total === 0 || score.invalid < score.total) return null;
  const terminal = score.examples.find((record) => !record.valid && record.transient !== true);
  if (terminal === undefined || terminal.valid) return null;
  return `${terminal.exampleId}: ${terminal.invalidReason}: ${terminal.message}`;
}

/** The streak as it is saved in the study state (it carries over an interrupted run, as the other streaks). */
export interface CandidateFailureState {
  /** Candidate evaluations in a row with no valid output. */
  candidateFailures: number;
  /** The last one's failure ({@link noValidOutput}). */
  lastCandidateFailure: string;
}

/** Counts candidate evaluations with and without a valid output, in a row and over the run. */
export interface CandidateFailures {
  /** Records one evaluation of a candidate on the optimization partition (screened or gated). */
  observe(score: PartitionScore): void;
  /** The streak, to save with the study state. */
  state(): CandidateFailureState;
  /**
   * The stop that holds: `candidates_failed` with its detail when the streak
   * reached `maxInARow`, or when `pending` (a stop on a criterion about to
   * be made) would end a run whose every evaluated candidate failed; else
   * `pending` as it is (null when none). A pending stop other than plateau,
   * no_new_proposals, max_rounds and max_experiments (a target reached, a
   * spent shadow, a failure) is kept.
   */
  stopFor(
    maxInARow: number,
    pending: { reason: StopReason; detail: string } | null,
  ): { reason: StopReason; detail: string } | null;
}

export function createCandidateFailures(carried: Partial<CandidateFailureState>): CandidateFailures {
  let inARow = carried.candidateFailures ?? 0;
  let last = carried.lastCandidateFailure ?? '';
  let failedThisRun = 0;
  let validThisRun = 0;
  return {
    observe(score) {
      const failure = noValidOutput(score);
      if (failure !== null) {
        inARow += 1;
        failedThisRun += 1;
        last = failure;
      } else if (score.invalid < score.total) {
        inARow = 0;
        validThisRun += 1;
      }
    },
    state: () => ({ candidateFailures: inARow, lastCandidateFailure: last }),
    stopFor(maxInARow, pending) {
      if (pending !== null && !DONE_STOPS.has(pending.reason)) return pending;
      if (inARow >= maxInARow) {
        return {
          reason: 'candidates_failed',
          detail: `${inARow} candidate evaluations in a row (the proposer's screening included) gave no valid output (stopping.maxConsecutiveFailures ${maxInARow}); last: ${last}`,
        };
      }
      if (pending !== null && failedThisRun > 0 && validThisRun === 0) {
        return {
          reason: 'candidates_failed',
          detail: `every candidate evaluation of this run (${failedThisRun}, the proposer's screening included) gave no valid output, so the run's stop as ${pending.reason} (${pending.detail}) is no result; last: ${last}`,
        };
      }
      return pending;
    },
  };
}
