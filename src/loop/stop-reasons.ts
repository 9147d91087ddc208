/**
 * Every reason a run can stop for, what it means, and the exit code of the
 * `kloop run` that stopped for it: the one table the CLI, the scheduler and
 * docs/reliability.md ("Stopping honestly") agree on; a test checks the
 * documented table against this one row by row.
 */
import type { StopReason } from './run-study.ts';

/** Exit code of a run that stopped on a criterion: done. */
export const STOPPED_EXIT_CODE = 0;
/** Exit code of a run that stopped on a problem: failed. */
export const FAILED_EXIT_CODE = 1;
/** Exit code of an interrupted run (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT_CODE = 130;

/** What a stop reason means and the exit code it gives. */
export interface StopReasonInfo {
  /** One line for the report: `stop reason: <reason> (<meaning>) — <detail>`. */
  meaning: string;
  /** 0 done, 1 failed, 130 interrupted. */
  exitCode: typeof STOPPED_EXIT_CODE | typeof FAILED_EXIT_CODE | typeof INTERRUPTED_EXIT_CODE;
}

/** The table: every {@link StopReason}, in the order docs/reliability.md lists them. */
export const STOP_REASONS: Readonly<Record<StopReason, StopReasonInfo>> = Object.freeze({
  target_reached: { meaning: 'the incumbent reached the target composite', exitCode: STOPPED_EXIT_CODE },
  plateau: {
    meaning: 'no candidate was accepted for stopping.plateauRounds rounds in a row',
    exitCode: STOPPED_EXIT_CODE,
  },
  max_experiments: { meaning: 'the experiment budget (stopping.maxExperiments) is spent', exitCode: STOPPED_EXIT_CODE },
  max_rounds: { meaning: 'the round budget (stopping.maxRounds) is spent', exitCode: STOPPED_EXIT_CODE },
  no_new_proposals: { meaning: 'the proposer has no untried edit left', exitCode: STOPPED_EXIT_CODE },
  budget: { meaning: 'the cost or token budget is spent', exitCode: STOPPED_EXIT_CODE },
  consecutive_failures: {
    meaning: 'too many proposals or evaluations failed in a row: a problem, not a result',
    exitCode: FAILED_EXIT_CODE,
  },
  candidates_failed: {
    meaning:
      'every candidate gave no valid output while the incumbent gives valid ones (the program or model fails on the candidates): a problem, not a result',
    exitCode: FAILED_EXIT_CODE,
  },
  failure_rate: {
    meaning: 'too large a share of proposals failed (stopping.maxFailureRate): a problem, not a result',
    exitCode: FAILED_EXIT_CODE,
  },
  infrastructure_failure: {
    meaning:
      'a provider, network or storage failure stopped the run (the incumbent could not be evaluated, or stopping.maxConsecutiveFailures candidates in a row could not be): a problem, not a result',
    exitCode: FAILED_EXIT_CODE,
  },
  shadow_spent: {
    meaning: 'the shadow partition is spent (every example used up its exposures) and nothing can rotate in',
    exitCode: STOPPED_EXIT_CODE,
  },
  interrupted: {
    meaning: 'interrupted (Ctrl-C or SIGTERM); the next run continues from here',
    exitCode: INTERRUPTED_EXIT_CODE,
  },
});

/** True for a known stop reason. */
export function isStopReason(value: string): value is StopReason {
  return Object.hasOwn(STOP_REASONS, value);
}

/** The exit code of a run that stopped for `stopReason` (an unknown reason, from a newer release: 1). */
export function exitCodeOf(stopReason: string): number {
  return isStopReason(stopReason) ? STOP_REASONS[stopReason].exitCode : FAILED_EXIT_CODE;
}
