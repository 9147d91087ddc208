/**
 * The loop's ask/tell engine: the primitives `kloop run` (`runStudy`), the
 * library API (`createStudy`, src/api/) and Loop A are built on.
 *
 * One round, as the primitives have it:
 *
 * 1. {@link LoopEngine.openRound} — stopping criteria, the corpus boundary
 *    (graduation, rotation), the incumbent's evaluation (topped up while it
 *    stays the incumbent), the round recorded as open in the notebook; or a
 *    round a crash left open, resumed exactly;
 * 2. {@link LoopEngine.ask} — the proposer, seeded by (seed, round, attempt),
 *    is asked for candidates; the call is recorded with its failures and
 *    tokens; what was evaluated before or is a near-duplicate is recorded as
 *    skipped and not returned. A failed answer or an idle one closes the round;
 *    a round resumed past ask returns its stored candidates instead;
 * 3. {@link LoopEngine.screen} — fresh candidates are evaluated concurrently on
 *    optimization and anchor (`results` may give a candidate's outputs);
 * 4. {@link LoopEngine.tell} — one candidate at a time: rebased onto the
 *    incumbent as it now stands, gated, recorded (one transaction per
 *    decision);
 * 5. {@link LoopEngine.endRound} — the plateau count, the round closed, the
 *    best incumbent's score.
 *
 * Every stop goes through {@link LoopEngine.finish} (or {@link LoopEngine.fail}
 * for an error that ends the run), which records the stop reason.
 *
 * Each state of the run is a module of its own, a function of one explicit
 * engine-state object (src/loop/engine-state.ts, `EngineRun`): open round
 * (engine-open-round.ts), ask (engine-ask.ts), screen and integrate
 * (engine-integrate.ts), decide (engine-decide.ts), close (engine-close.ts).
 * The open round's state is what the notebook records
 * (`study_state.openRound.phase`, src/loop/open-round-state.ts): `ask` when
 * opened, `screen` once the proposer answered (its fresh candidates stored),
 * `decide` once they are screened or raced; a resumed round loads it and
 * continues (past `ask`, without asking the proposer again).
 *
 * Like Optuna's `study.ask()` / `study.tell()` (Akiba et al. 2019), with the
 * difference that `tell` does not take a number: kloop scores the outputs
 * itself with the frozen evaluator and the gate decides.
 */
import type { GateDecision } from '../gate/gate.ts';
import type { Candidate, ProposalResult } from '../proposers/proposer.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { ask } from './engine-ask.ts';
import { endRound, fail } from './engine-close.ts';
import { race, screen, tellCandidate } from './engine-integrate.ts';
import { openNextRound } from './engine-open-round.ts';
import { finishRun, startEngineRun } from './engine-state.ts';
import type { ScreenedCandidate } from './integrate.ts';
import type { RunOptions, RunOutcome, StopReason } from './run-study.ts';

export { DEFAULT_IDLE_ROUNDS, ensureSeedVersion, FAILURE_RATE_MIN_ATTEMPTS } from './engine-state.ts';
export { IDLE_PATIENCE_ROUNDS, idlePatience } from './idle-patience.ts';

/** What {@link LoopEngine.openRound} gives: the round to work on, or the stop that holds. */
export type OpenedRound = { kind: 'round'; round: number; resumed: boolean } | { kind: 'stop'; outcome: RunOutcome };

/** What {@link LoopEngine.ask} gives. `failed` and `idle` close the round (nothing to tell). */
export interface Asked {
  status: 'candidates' | 'failed' | 'idle';
  /** Fresh candidates to screen and tell, in the proposer's order. */
  candidates: Candidate[];
  /** The proposer's answer as it came (failures, repeats, usage); for a `resumed` answer, only its fresh candidates. */
  proposal: ProposalResult;
  /**
   * True when the candidates were read from the notebook: a round resumed
   * past ask (src/loop/open-round-state.ts), the proposer not asked again.
   */
  resumed?: boolean;
}

/** One decision of {@link LoopEngine.tell}. */
export interface Told {
  experimentId: number;
  decision: 'accepted' | 'refused' | 'skipped';
  /** `accepted`, or the refusal / skip reason (`not_significant`, `specialization`, `duplicate`, ...). */
  reason: string;
  /** The text that was judged (after a rebase, the rebased text). */
  text: string;
  /** The candidate's optimization composite (null when skipped or nothing valid). */
  optimization: number | null;
  rebased: boolean;
  /** The gate's decision (checks and statistics); absent for a skip. */
  gate?: GateDecision;
}

/** The engine. Obtain one with {@link createLoopEngine}; one engine serves one run. */
export interface LoopEngine {
  readonly runId: number;
  /** The evaluator fingerprint (changes when the corpus does). */
  readonly fingerprint: string;
  /** The active version now. */
  incumbent(): ArtifactVersion;
  /** The open round, or null between rounds. */
  currentRound(): number | null;
  openRound(): Promise<OpenedRound>;
  ask(): Promise<Asked>;
  /**
   * Evaluates candidates on optimization and anchor, `proposer.concurrency`
   * at a time; best first.
   */
  screen(candidates: readonly Candidate[]): Promise<ScreenedCandidate[]>;
  /**
   * Gates one screened candidate of the open round against the incumbent as
   * it stands and records the decision. Null when it was decided before (a
   * resumed round) or the experiment budget is spent (`budgetSpent()`).
   */
  tell(item: ScreenedCandidate): Promise<Told | null>;
  /**
   * Races the fresh candidates of the open round (`gate.racing`, see
   * src/loop/race-round.ts): evaluated in seeded batches against the
   * incumbent, stopped early for futility (refused), and the complete ones
   * told one at a time, best first. Returns every decision made.
   */
  race(candidates: readonly Candidate[]): Promise<Told[]>;
  /** True once `stopping.maxExperiments` experiments are evaluated. */
  budgetSpent(): boolean;
  /** Closes the open round (plateau count, best score); a stop when interrupted. */
  endRound(): Promise<RunOutcome | null>;
  /** Records a stop and ends the run. */
  finish(reason: StopReason, detail: string): Promise<RunOutcome>;
  /** Ends the run for an error that must stop it (abort, budget, infrastructure); rethrows anything else. */
  fail(error: unknown): Promise<RunOutcome>;
}

/**
 * Creates the engine for a run: starts the corpus lifecycle, makes sure a
 * seed version exists, records the run and reads the carried-over streaks
 * (an interrupted run's plateau, failure and idle counts carry over).
 */
export async function createLoopEngine(options: RunOptions): Promise<LoopEngine> {
  const run = await startEngineRun(options);
  return {
    runId: run.runId,
    get fingerprint() {
      return run.evaluator.fingerprint;
    },
    incumbent: () => run.incumbent,
    currentRound: () => run.current?.round ?? null,
    budgetSpent: () => run.evaluatedCount >= run.study.stopping.maxExperiments,
    openRound: () => openNextRound(run),
    ask: () => ask(run),
    screen: (candidates) => screen(run, candidates),
    tell: (item) => tellCandidate(run, item),
    race: (candidates) => race(run, candidates),
    endRound: () => endRound(run),
    finish: (reason, detail) => finishRun(run, reason, detail),
    fail: (error) => fail(run, error),
  };
}
