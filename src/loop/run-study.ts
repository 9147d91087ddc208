/**
 * The loop: seed → propose → evaluate (parallel explore) → gate (sequential
 * integrate) → record → repeat → stop.
 *
 * One round, phase by phase (each phase in its own module; `engine.ts` holds
 * them as the ask/tell primitives):
 *
 * 1. **open** — stopping criteria, corpus boundary (graduation, rotation), the
 *    incumbent's evaluation (topped up while it stays the incumbent), the round
 *    recorded as open in the notebook with its proposer attempt;
 * 2. **propose** (`propose.ts`) — the proposer, seeded by (seed, round,
 *    attempt), is asked for candidates; the call is recorded with its failures
 *    and tokens; what was evaluated before or is a near-duplicate is skipped;
 * 3. **screen** (`integrate.ts`) — fresh candidates are evaluated concurrently
 *    on optimization and anchor;
 * 4. **integrate** (`integrate.ts`) — one at a time, rebased onto the incumbent
 *    as it now stands, gated, and recorded (`notebook.ts`), one transaction per
 *    decision.
 *
 * With `gate.racing` (on by default for a non-deterministic executor) steps
 * 3 and 4 are one raced phase (`race-round.ts`): seeded batches shared by the
 * round's candidates, a futility stop, the complete candidates told best
 * first.
 *
 * Failures are counted per failed proposer answer and per failed evaluation,
 * never per candidate; a round that brings nothing new is *idle*, and
 * `stopping.idleRounds` idle rounds in a row stop the run as
 * `no_new_proposals`. A failed answer is retried with the next attempt, whose
 * nonce differs, so it is never replayed from the response cache.
 */
import type { PartitionName } from '../corpus/example.ts';
import type { BoundaryPlan } from '../corpus/lifecycle.ts';
import type { GateCalibration } from '../gate/gate.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { createLoopEngine } from './engine.ts';
import type { StudyEvaluatorOptions } from './evaluate-partition.ts';

export { DEFAULT_IDLE_ROUNDS, FAILURE_RATE_MIN_ATTEMPTS, createLoopEngine, ensureSeedVersion } from './engine.ts';
export type { Asked, LoopEngine, OpenedRound, Told } from './engine.ts';

/** Why a run stopped. Distinct outcomes, never conflated. */
export type StopReason =
  | 'target_reached'
  | 'plateau'
  | 'max_experiments'
  | 'max_rounds'
  | 'no_new_proposals'
  | 'consecutive_failures'
  | 'candidates_failed'
  | 'failure_rate'
  | 'budget'
  | 'infrastructure_failure'
  | 'shadow_spent'
  | 'interrupted';

/** Progress events printed by the CLI. */
export type RunEvent =
  | { type: 'start'; runId: number; fingerprint: string; experiments: number; incumbent: number }
  | { type: 'baseline'; scores: Record<PartitionName, number | null> }
  | {
      type: 'round';
      round: number;
      candidates: number;
      failures: number;
      repeats?: number;
      skipped?: number;
      failureReasons?: string[];
    }
  | {
      type: 'decision';
      round: number;
      experimentId: number;
      delta: string;
      decision: 'accepted' | 'refused' | 'skipped';
      reason: string;
      optimization: number | null;
      /** True when the candidate was re-applied to an incumbent that moved during the round, and judged again. */
      rebased?: boolean;
    }
  | {
      type: 'round-end';
      round: number;
      accepted: number;
      refused: number;
      best: number | null;
      diversity: { mean: number | null; min: number | null };
    }
  | { type: 'stop'; reason: StopReason; detail: string };

export interface RunOptions {
  study: LoadedStudy;
  /** The study's notebook (`openNotebook(db)`, src/storage/notebook/index.ts): every read and write of the run. */
  notebook: Notebook;
  calibration?: GateCalibration;
  onEvent?: (event: RunEvent) => void;
  /** Corpus lifecycle moves (graduation, rotation, file changes picked up at the start), one line each. */
  onCorpusChange?: (change: { kind: 'start' | BoundaryPlan['kind']; message: string }) => void;
  signal?: AbortSignal;
  now?: () => Date;
  /** How stored results are read (`--no-cache`: only this run's). */
  evaluator?: StudyEvaluatorOptions;
}

export interface RunOutcome {
  runId: number;
  stopReason: StopReason;
  stopDetail: string;
  /** Experiments evaluated and decided in this run. */
  newExperiments: number;
  fingerprint: string;
}

/**
 * Runs (or continues) the study until a stopping criterion holds: the ask/tell
 * engine (`engine.ts`) driven round after round. Every decision is written in
 * its own transaction as it is made.
 */
export async function runStudy(options: RunOptions): Promise<RunOutcome> {
  const engine = await createLoopEngine(options);
  try {
    for (;;) {
      const opened = await engine.openRound();
      if (opened.kind === 'stop') return opened.outcome;
      const asked = await engine.ask();
      if (asked.status !== 'candidates') continue; // a failed or idle answer closed the round
      if (options.study.gate.racing !== undefined) {
        // 3–4 raced: seeded batches, futility stops, the complete candidates told one at a time.
        await engine.race(asked.candidates);
      } else {
        // 3. screen (parallel explore)
        const screened = await engine.screen(asked.candidates);
        // 4. integrate (sequential): each survivor is gated against the incumbent as it stands now.
        for (const item of screened) {
          if (options.signal?.aborted || engine.budgetSpent()) break;
          await engine.tell(item);
          if (engine.budgetSpent()) break;
        }
      }
      const stopped = await engine.endRound();
      if (stopped !== null) return stopped;
    }
  } catch (error) {
    return engine.fail(error);
  }
}
