/**
 * Small persistent counters of a study (plateau, consecutive failures), kept
 * in the notebook's `study_state` (src/storage/notebook/engine-runs-store.ts)
 * so a continued run picks them up.
 */
import { StorageError } from '../errors.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import type { OpenRoundState } from './open-round-state.ts';
import { parseOpenRound } from './open-round-state.ts';

export interface StudyState {
  plateauRounds: number;
  consecutiveFailures: number;
  /** Proposals attempted and failed in the run (for `stopping.maxFailureRate`); absent in older databases = 0. */
  proposalAttempts?: number;
  proposalFailures?: number;
  lastStopReason: string | null;
  /**
   * Candidates in a row refused `evaluation_failed` (for the
   * `infrastructure_failure` stop at `stopping.maxConsecutiveFailures`);
   * absent in older databases = 0.
   */
  evaluationFailures?: number;
  /** The last of those refusals' failure, for the stop's detail. */
  lastEvaluationFailure?: string;
  /** The last failed proposer answer or evaluation, for the `consecutive_failures` stop's detail. */
  lastFailure?: string;
  /**
   * Candidate evaluations in a row that gave no valid output, and the last
   * one's failure (src/loop/candidate-failures.ts: the `candidates_failed`
   * stop); absent in older databases = 0.
   */
  candidateFailures?: number;
  lastCandidateFailure?: string;
  /** Rounds in a row that brought nothing new to evaluate (for `stopping.idleRounds`); absent in older databases = 0. */
  idleRounds?: number;
  /**
   * The round in progress (null between rounds): a crash leaves it set, and
   * the next run finishes it first, with the same proposer attempt (absent in
   * older databases = 0), from the engine state it was in (its phase and, past
   * ask, its candidates: src/loop/open-round-state.ts).
   */
  openRound?: OpenRoundState | null;
}

const KEY = 'loop';

/**
 * The loop's state as stored; a new study's (no plateau, no failure, no stop yet) when none is.
 *
 * @throws StorageError (with `field`) when the stored value is not JSON or
 *   its open round does not fit its schema (src/loop/open-round-state.ts).
 */
export async function readStudyState(notebook: Notebook): Promise<StudyState> {
  const value = await notebook.readStudyStateValue(KEY);
  if (value === undefined) return { plateauRounds: 0, consecutiveFailures: 0, lastStopReason: null };
  let state: StudyState;
  try {
    state = JSON.parse(value) as StudyState;
  } catch (error) {
    throw new StorageError(`study_state is not JSON: ${(error as Error).message}`, {
      field: 'study_state',
      cause: error,
    });
  }
  const openRound = parseOpenRound(state.openRound);
  return openRound === undefined ? state : { ...state, openRound };
}

/** Stores the loop's state, replacing what was stored. */
export async function writeStudyState(notebook: Notebook, state: StudyState): Promise<void> {
  await notebook.writeStudyStateValue(KEY, JSON.stringify(state));
}
