/**
 * The close state of the engine: the round closed (plateau count, best
 * score), and the end of a run for an error that must stop it.
 *
 * @module
 */
import { InfrastructureError, isAbortError, KloopError } from '../errors.ts';
import { withCallStage } from '../providers/call-stage.ts';
import type { EngineRun } from './engine-state.ts';
import { closeRound, finishRun, interrupted } from './engine-state.ts';
import { evaluateIncumbentPartition } from './adaptive-evaluation.ts';
import { repeatsOfIncumbent } from './engine-incumbent.ts';
import type { RunOutcome } from './run-study.ts';

/** Closes the open round: the plateau count, the round marked closed, the best incumbent's score; a stop when interrupted. */
export async function endRound(run: EngineRun): Promise<RunOutcome | null> {
  if (run.options.signal?.aborted) return interrupted(run);
  if (run.current === null) return null;
  const state = run.current;
  if (state.decidedAny) run.plateau = state.accepted > 0 ? 0 : run.plateau + 1;
  run.current = null;
  await closeRound(run);
  const best = await withCallStage('incumbent', async () =>
    evaluateIncumbentPartition(run.evaluator, run.study, run.calibration, {
      text: run.incumbent.text,
      partition: 'optimization',
      repeats: await repeatsOfIncumbent(run, state.round),
      signal: run.options.signal,
    }),
  );
  run.emit({
    type: 'round-end',
    round: state.round,
    accepted: state.accepted,
    refused: state.refused,
    best: best.composite,
    diversity: summarizeDistances(state.distances),
  });
  return null;
}

/** Ends the run for an error that must stop it (abort, budget, infrastructure); rethrows anything else. */
export async function fail(run: EngineRun, error: unknown): Promise<RunOutcome> {
  if (isAbort(error, run.options.signal)) return interrupted(run);
  if (isBudgetError(error)) return finishRun(run, 'budget', (error as Error).message);
  if (isInfrastructureError(error)) return finishRun(run, 'infrastructure_failure', (error as Error).message);
  // Bad input met by the run (exit 2, e.g. a scorer failing on the incumbent): a run that recorded nothing is removed, not left open.
  if (KloopError.isInstance(error) && error.exitCode === 2) await run.notebook.removeRunIfEmpty(run.runId); // a run that ended on bad input before it did anything
  throw error;
}

/** The mean and the least of a round's delta distances (null for none). */
export function summarizeDistances(distances: readonly number[]): { mean: number | null; min: number | null } {
  return {
    mean: distances.length === 0 ? null : distances.reduce((sum, value) => sum + value, 0) / distances.length,
    min: distances.length === 0 ? null : Math.min(...distances),
  };
}

function isInfrastructureError(error: unknown): boolean {
  return InfrastructureError.isInstance(error);
}

function isBudgetError(error: unknown): boolean {
  return KloopError.isInstance(error) && error.code === 'budget';
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && (error === signal.reason || isAbortError(error, ['AbortError']));
}
