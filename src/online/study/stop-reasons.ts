/**
 * Why an online study stops assigning, what it means, and the exit code of
 * the `kloop run` that reports it (docs/online.md, "Stops and exit codes").
 * A step that leaves an experiment running is no stop: exit 0.
 */
import { FAILED_EXIT_CODE, STOPPED_EXIT_CODE } from '../../loop/stop-reasons.ts';

/** The stop reasons of an online study. */
export type OnlineStopReason = 'max_experiments' | 'no_new_proposals' | 'budget' | 'calibration_invalid';

/** The table: meaning and exit code of each stop. */
export const ONLINE_STOP_REASONS: Readonly<Record<OnlineStopReason, { meaning: string; exitCode: number }>> =
  Object.freeze({
    max_experiments: {
      meaning: 'the experiment budget (stopping.maxExperiments) is spent',
      exitCode: STOPPED_EXIT_CODE,
    },
    no_new_proposals: { meaning: 'the proposer has no untried variant left', exitCode: STOPPED_EXIT_CODE },
    budget: {
      meaning: "the reflective proposer's model budget (stopping.maxCostUsd) is spent",
      exitCode: STOPPED_EXIT_CODE,
    },
    calibration_invalid: {
      meaning:
        'the A/A calibration failed its sample-ratio check: assignment or exposure logging is broken, so no experiment can be trusted (a problem, not a result)',
      exitCode: FAILED_EXIT_CODE,
    },
  });
