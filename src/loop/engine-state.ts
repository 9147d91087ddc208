/**
 * The state of one run of the loop engine, explicit: what the run was given
 * (the study, the notebook, the clock, the event sink), the streaks carried
 * from run to run (plateau, failures, idle rounds), the open round and the
 * incumbent. Each state of the run (open round → ask/screen → integrate and
 * decide → close: src/loop/engine-*.ts) is a function of this object, so the
 * state is what the notebook records and a resumed run continues from it.
 *
 * @module
 */
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { GateCalibration } from '../gate/gate.ts';
import { NO_CALIBRATION } from '../gate/gate.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { CandidateFailures } from './candidate-failures.ts';
import { createCandidateFailures } from './candidate-failures.ts';
import { startCorpusLifecycle } from './corpus-lifecycle.ts';
import { createStudyEvaluator } from './evaluate-partition.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { PriorExperiments, RoundExperiment } from './notebook.ts';
import { countEvaluated } from './notebook.ts';
import type { RunEvent, RunOptions, RunOutcome, StopReason } from './run-study.ts';
import { createScratchEvaluator } from './scratch-evaluator.ts';
import type { OpenRoundState, RoundPhase } from './open-round-state.ts';
import type { RetrialVerdict } from './retrials.ts';
import { readStudyState, writeStudyState } from './study-state.ts';

/** Proposals a run must have attempted before `stopping.maxFailureRate` can stop it. */
export const FAILURE_RATE_MIN_ATTEMPTS = 10;

/** Default of `stopping.idleRounds`. */
export const DEFAULT_IDLE_ROUNDS = 2;

/** Per-round state of the engine. */
export interface RoundState {
  round: number;
  base: ArtifactVersion;
  prior: PriorExperiments;
  /** The identities of the candidates `ask` returned (src/loop/candidate-id.ts), by object. */
  ids: Map<Candidate, string>;
  /** Experiments recorded in this round, by candidate identity (a resumed round's include those before the crash). */
  decided: Map<string, RoundExperiment>;
  accepted: number;
  refused: number;
  decidedAny: boolean;
  distances: number[];
  /** The round's re-trials (src/loop/retrials.ts): the trial number of each candidate judged again. */
  retrials: Map<Candidate, RetrialOf>;
}

/** A candidate's re-trial, as the engine keeps it (the dedupe's verdict: the decision's evidence stores it whole). */
export type RetrialOf = Extract<RetrialVerdict, { kind: 'retrial' }>;

/** One run of the engine: what it was given (read-only) and the state its steps move forward. */
export interface EngineRun {
  readonly options: RunOptions;
  readonly study: LoadedStudy;
  /** The study's notebook: every read and write of the run. */
  readonly notebook: Notebook;
  readonly now: () => Date;
  readonly emit: (event: RunEvent) => void;
  readonly calibration: GateCalibration;
  /** `stopping.idleRounds` (default {@link DEFAULT_IDLE_ROUNDS}). */
  readonly idleLimit: number;
  readonly runId: number;
  /** The gate's evaluator (stored results); replaced when the corpus changes at a round boundary. */
  evaluator: Evaluator;
  /** The screening's evaluator (src/loop/scratch-evaluator.ts); replaced with `evaluator`. */
  scratchEvaluator: Evaluator;
  /** Rounds in a row without an accepted change. */
  plateau: number;
  /** Failed proposer answers or evaluations in a row. */
  consecutiveFailures: number;
  /** Rounds in a row that brought nothing new to evaluate. */
  idleRounds: number;
  /** Proposals attempted and failed in the run (for `stopping.maxFailureRate`). */
  proposalAttempts: number;
  proposalFailures: number;
  /** Candidates in a row refused `evaluation_failed`, and the last one's failure (stopping.maxConsecutiveFailures of them stop the run). */
  evaluationFailures: number;
  lastEvaluationFailure: string;
  /** The last failed proposer answer or evaluation, for the consecutive_failures stop's detail. */
  lastFailure: string;
  /** The last failed answer was a proposer that cannot read the incumbent (INVALID_INCUMBENT): the stop says so. */
  unreadableIncumbent: boolean;
  /** Candidate evaluations (screened or gated) in a row that gave no valid output (src/loop/candidate-failures.ts). */
  readonly candidateFailures: CandidateFailures;
  /** The round in progress as stored, with its phase (null between rounds): a round a crash left open is finished first, exactly as it would have gone. */
  openRound: OpenRoundState | null;
  /** Experiments evaluated and decided in this run. */
  newExperiments: number;
  /** Experiments evaluated in the notebook (read at each round's opening, counted at each decision). */
  evaluatedCount: number;
  /** The deltas the last idle answer repeated: the next ask names them to the proposer. */
  repeatedDeltas: string[];
  /** The active version now. */
  incumbent: ArtifactVersion;
  /** The open round's state, or null between rounds. */
  current: RoundState | null;
  /** The outcome, once the run is finished. */
  finished: RunOutcome | null;
}

/** Makes sure the registry has an active version (the seed artifact on a new study). */
export async function ensureSeedVersion(
  notebook: Notebook,
  study: LoadedStudy,
  now: () => Date,
): Promise<ArtifactVersion> {
  return notebook.activeOrSeedVersion(study.artifactText, now);
}

/**
 * Starts a run: starts the corpus lifecycle, makes sure a seed version
 * exists, records the run and reads the carried-over streaks (an interrupted
 * run's plateau, failure and idle counts carry over). Emits `start`.
 */
export async function startEngineRun(options: RunOptions): Promise<EngineRun> {
  const { study, notebook } = options;
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => undefined);
  const calibration: GateCalibration = options.calibration ?? NO_CALIBRATION;
  const idleLimit = study.stopping.idleRounds ?? DEFAULT_IDLE_ROUNDS;
  // The corpus lifecycle: partitions (and admitted examples) as recorded; initialised from the files on the first run.
  const corpusStart = await startCorpusLifecycle(notebook, study, now);
  if (corpusStart.moves.length > 0) {
    options.onCorpusChange?.({
      kind: 'start',
      message: `corpus: ${corpusStart.moves.length} lifecycle move(s) recorded at the start (${[...new Set(corpusStart.moves.map((move) => move.kind))].join(', ')})`,
    });
  }
  const evaluator: Evaluator = createStudyEvaluator(study, notebook, options.evaluator);
  // Screening candidates inside the proposer is not stored: it can be hundreds per round (with workers: on them, under a scratch key).
  const scratchEvaluator: Evaluator = createScratchEvaluator(study, notebook, options.evaluator);

  await ensureSeedVersion(notebook, study, now);
  const runId = await notebook.insertRun(now().toISOString());

  const initialState = await readStudyState(notebook);
  const carryOver = initialState.lastStopReason === null || initialState.lastStopReason === 'interrupted';
  const run: EngineRun = {
    options,
    study,
    notebook,
    now,
    emit,
    calibration,
    idleLimit,
    runId,
    evaluator,
    scratchEvaluator,
    plateau: carryOver ? initialState.plateauRounds : 0,
    consecutiveFailures: carryOver ? initialState.consecutiveFailures : 0,
    idleRounds: carryOver ? (initialState.idleRounds ?? 0) : 0,
    proposalAttempts: carryOver ? (initialState.proposalAttempts ?? 0) : 0,
    proposalFailures: carryOver ? (initialState.proposalFailures ?? 0) : 0,
    evaluationFailures: carryOver ? (initialState.evaluationFailures ?? 0) : 0,
    lastEvaluationFailure: carryOver ? (initialState.lastEvaluationFailure ?? '') : '',
    lastFailure: carryOver ? (initialState.lastFailure ?? '') : '',
    unreadableIncumbent: false,
    candidateFailures: createCandidateFailures(carryOver ? initialState : {}),
    openRound: carryOver ? (initialState.openRound ?? null) : null,
    newExperiments: 0,
    evaluatedCount: 0,
    repeatedDeltas: [],
    incumbent: (await notebook.getRegistryVersion())!,
    current: null,
    finished: null,
  };
  emit({
    type: 'start',
    runId,
    fingerprint: evaluator.fingerprint,
    experiments: await countEvaluated(notebook),
    incumbent: run.incumbent.id,
  });
  return run;
}

/** Stores the run's streaks and open round (src/loop/study-state.ts), with the last stop reason (null while running). */
export function saveState(run: EngineRun, lastStopReason: string | null): Promise<void> {
  return writeStudyState(run.notebook, {
    plateauRounds: run.plateau,
    consecutiveFailures: run.consecutiveFailures,
    idleRounds: run.idleRounds,
    proposalAttempts: run.proposalAttempts,
    proposalFailures: run.proposalFailures,
    evaluationFailures: run.evaluationFailures,
    lastEvaluationFailure: run.lastEvaluationFailure,
    lastFailure: run.lastFailure,
    ...run.candidateFailures.state(),
    lastStopReason,
    openRound: run.openRound,
  });
}

/** Records a stop and ends the run (once: a second call returns the first outcome). */
export async function finishRun(run: EngineRun, reason: StopReason, detail: string): Promise<RunOutcome> {
  if (run.finished !== null) return run.finished;
  await saveState(run, reason);
  // The detail is stored with the stop (the CLI's full report replaces it): history shows why a run failed, library runs included.
  await run.notebook.endRun(run.runId, {
    endedAt: run.now().toISOString(),
    stopReason: reason,
    report: JSON.stringify({ stopReason: reason, stopDetail: detail }),
  });
  run.emit({ type: 'stop', reason, detail });
  run.finished = {
    runId: run.runId,
    stopReason: reason,
    stopDetail: detail,
    newExperiments: run.newExperiments,
    fingerprint: run.evaluator.fingerprint,
  };
  return run.finished;
}

/** Ends the run as interrupted by the user (Ctrl-C, SIGTERM, an aborted signal): the next run continues from here. */
export function interrupted(run: EngineRun): Promise<RunOutcome> {
  return finishRun(run, 'interrupted', 'interrupted by the user; the next run continues from here');
}

/**
 * Records the open round's move to `phase` in the stored state, with what a
 * resumed round reads in it (past ask: the candidates and the distances;
 * src/loop/open-round-state.ts). The moves are ask → screen and screen →
 * decide; nothing is written for any other (no open round, or the phase
 * already reached). A round whose candidates could not be stored moves on
 * with `reask: true` instead of them: it is asked again on resume.
 */
export async function enterPhase(
  run: EngineRun,
  phase: RoundPhase,
  stored: Pick<OpenRoundState, 'candidates' | 'distances' | 'reask'> = {},
): Promise<void> {
  const open = run.openRound;
  if (open === null) return;
  // The moves: ask → screen (the answer stored), screen → decide. A round stored without a phase is at ask.
  const from = open.phase ?? 'ask';
  if (!((phase === 'screen' && from === 'ask') || (phase === 'decide' && from === 'screen'))) return;
  run.openRound = { ...open, phase, ...stored };
  await saveState(run, null);
}

/** Marks the round closed in the stored state (a crash after it starts a new round). */
export async function closeRound(run: EngineRun): Promise<void> {
  run.openRound = null;
  await saveState(run, null);
}
