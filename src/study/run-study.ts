/**
 * The loop lives in `src/loop/` (one module per phase); this module keeps the
 * names other folders import.
 */
export { DEFAULT_IDLE_ROUNDS, FAILURE_RATE_MIN_ATTEMPTS, ensureSeedVersion, runStudy } from '../loop/run-study.ts';
export type { RunEvent, RunOptions, RunOutcome, StopReason } from '../loop/run-study.ts';
export { createStudyEvaluator, evaluatePartition, incumbentRepeats, yieldToEventLoop } from '../loop/evaluate-partition.ts';
