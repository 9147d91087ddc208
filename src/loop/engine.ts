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
 * Like Optuna's `study.ask()` / `study.tell()` (Akiba et al. 2019), with the
 * difference that `tell` does not take a number: kloop scores the outputs
 * itself with the frozen evaluator and the gate decides.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionName } from '../corpus/example.ts';
import { InfrastructureError, InputError, isAbortError, KloopError } from '../errors.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration, GateCheck, GateDecision } from '../gate/gate.ts';
import { NO_CALIBRATION } from '../gate/gate.ts';
import type { Candidate, ProposalResult } from '../proposers/proposer.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import { activeOrSeedVersion, endRun, insertRun, removeRunIfEmpty } from '../storage/notebook/engine-runs-store.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { getRegistryVersion, getVersion, withArtifactOverride } from '../storage/registry.ts';
import { corpusBoundary, startCorpusLifecycle } from './corpus-lifecycle.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { StudyState } from './study-state.ts';
import { readStudyState, writeStudyState } from './study-state.ts';
import { createStudyEvaluator, evaluatePartition, incumbentRepeats, yieldToEventLoop } from './evaluate-partition.ts';
import { createScratchEvaluator } from './scratch-evaluator.ts';
import { withCallStage } from '../providers/call-stage.ts';
import type { Rebase, ScreenedCandidate } from './integrate.ts';
import { raceRound } from './race-round.ts';
import { raceSeed, racingCheck } from '../gate/racing/index.ts';
import { candidateIds } from './candidate-id.ts';
import {
  changeOf,
  evaluationFailure,
  gateCandidate,
  rebaseCandidate,
  scorerFailure,
  screenCandidates,
} from './integrate.ts';
import { scorerErrors } from '../evaluator/evaluator.ts';
import {
  acceptedInRound,
  countEvaluated,
  countProposals,
  legacyDecisionKey,
  loadPriorExperiments,
  loadRoundExperiments,
  maxRound,
  recordExperiment,
  recordProposal,
} from './notebook.ts';
import type { PriorExperiments, RoundExperiment } from './notebook.ts';
import { MAX_EVALUATION_FAILURES } from './notebook.ts';
import { createCandidateFailures } from './candidate-failures.ts';
import { answerFailed, askProposer, dedupeCandidates } from './propose.ts';
import { INVALID_INCUMBENT } from '../proposers/proposer.ts';
import { DEFAULT_RETRIALS, retrialSettings } from './retrials.ts';
import { IDLE_PATIENCE_ROUNDS, idlePatience } from './idle-patience.ts';

export { IDLE_PATIENCE_ROUNDS, idlePatience } from './idle-patience.ts';
import type { RunOptions, RunOutcome, StopReason } from './run-study.ts';

/** Proposals a run must have attempted before `stopping.maxFailureRate` can stop it. */
export const FAILURE_RATE_MIN_ATTEMPTS = 10;

/** Default of `stopping.idleRounds`. */
export const DEFAULT_IDLE_ROUNDS = 2;

/** Makes sure the registry has an active version (the seed artifact on a new study). */
export async function ensureSeedVersion(
  db: StudyDatabase,
  study: LoadedStudy,
  now: () => Date,
): Promise<ArtifactVersion> {
  return activeOrSeedVersion(db, study.artifactText, now);
}

/** An incumbent the loop cannot evaluate (transient failures that persist): the run stops. */
class IncumbentUnavailable extends InfrastructureError {}

/** What {@link LoopEngine.openRound} gives: the round to work on, or the stop that holds. */
export type OpenedRound = { kind: 'round'; round: number; resumed: boolean } | { kind: 'stop'; outcome: RunOutcome };

/** What {@link LoopEngine.ask} gives. `failed` and `idle` close the round (nothing to tell). */
export interface Asked {
  status: 'candidates' | 'failed' | 'idle';
  /** Fresh candidates to screen and tell, in the proposer's order. */
  candidates: Candidate[];
  /** The proposer's answer as it came (failures, repeats, usage). */
  proposal: ProposalResult;
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

/** Per-round state of the engine. */
interface RoundState {
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

/** A candidate's re-trial, as the engine keeps it. */
type RetrialOf = { trial: number; of: number; earlier: number[] };

/**
 * Creates the engine for a run: starts the corpus lifecycle, makes sure a
 * seed version exists, records the run and reads the carried-over streaks
 * (an interrupted run's plateau, failure and idle counts carry over).
 */
export async function createLoopEngine(options: RunOptions): Promise<LoopEngine> {
  const { study, db } = options;
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => undefined);
  const calibration: GateCalibration = options.calibration ?? NO_CALIBRATION;
  const idleLimit = study.stopping.idleRounds ?? DEFAULT_IDLE_ROUNDS;
  // The corpus lifecycle: partitions (and admitted examples) as recorded; initialised from the files on the first run.
  const corpusStart = await startCorpusLifecycle(db, study, now);
  if (corpusStart.moves.length > 0) {
    options.onCorpusChange?.({
      kind: 'start',
      message: `corpus: ${corpusStart.moves.length} lifecycle move(s) recorded at the start (${[...new Set(corpusStart.moves.map((move) => move.kind))].join(', ')})`,
    });
  }
  let evaluator: Evaluator = createStudyEvaluator(study, db, options.evaluator);
  // Screening candidates inside the proposer is not stored: it can be hundreds per round (with workers: on them, under a scratch key).
  let scratchEvaluator: Evaluator = createScratchEvaluator(study, db, options.evaluator);

  await ensureSeedVersion(db, study, now);
  const runId = await insertRun(db, isoNow(now));

  const initialState = await readStudyState(db);
  const carryOver = initialState.lastStopReason === null || initialState.lastStopReason === 'interrupted';
  let plateau = carryOver ? initialState.plateauRounds : 0;
  let consecutiveFailures = carryOver ? initialState.consecutiveFailures : 0;
  let idleRounds = carryOver ? (initialState.idleRounds ?? 0) : 0;
  let proposalAttempts = carryOver ? (initialState.proposalAttempts ?? 0) : 0;
  let proposalFailures = carryOver ? (initialState.proposalFailures ?? 0) : 0;
  // Candidates in a row refused `evaluation_failed`, and the last one's failure (stopping.maxConsecutiveFailures of them stop the run).
  let evaluationFailures = carryOver ? (initialState.evaluationFailures ?? 0) : 0;
  let lastEvaluationFailure = carryOver ? (initialState.lastEvaluationFailure ?? '') : '';
  // The last failed proposer answer or evaluation, for the consecutive_failures stop's detail.
  let lastFailure = carryOver ? (initialState.lastFailure ?? '') : '';
  /** The last failed answer was a proposer that cannot read the incumbent (INVALID_INCUMBENT): the stop says so. */
  let unreadableIncumbent = false;
  // Candidate evaluations (screened or gated) in a row that gave no valid output (src/loop/candidate-failures.ts).
  const candidateFailures = createCandidateFailures(carryOver ? initialState : {});
  // A round a crash left open is finished first, exactly as it would have gone.
  let openRound: NonNullable<StudyState['openRound']> | null = carryOver ? (initialState.openRound ?? null) : null;
  let newExperiments = 0;
  let evaluatedCount = 0;
  // The deltas the last idle answer repeated: the next ask names them to the proposer.
  let repeatedDeltas: string[] = [];
  let incumbent = (await getRegistryVersion(db))!;
  let current: RoundState | null = null;
  let finished: RunOutcome | null = null;
  const saveState = (lastStopReason: string | null): Promise<void> =>
    writeStudyState(db, {
      plateauRounds: plateau,
      consecutiveFailures,
      idleRounds,
      proposalAttempts,
      proposalFailures,
      evaluationFailures,
      lastEvaluationFailure,
      lastFailure,
      ...candidateFailures.state(),
      lastStopReason,
      openRound,
    });

  emit({
    type: 'start',
    runId,
    fingerprint: evaluator.fingerprint,
    experiments: await countEvaluated(db),
    incumbent: incumbent.id,
  });

  const finish = async (reason: StopReason, detail: string): Promise<RunOutcome> => {
    if (finished !== null) return finished;
    await saveState(reason);
    // The detail is stored with the stop (the CLI's full report replaces it): history shows why a run failed, library runs included.
    await endRun(db, runId, {
      endedAt: isoNow(now),
      stopReason: reason,
      report: JSON.stringify({ stopReason: reason, stopDetail: detail }),
    });
    emit({ type: 'stop', reason, detail });
    finished = { runId, stopReason: reason, stopDetail: detail, newExperiments, fingerprint: evaluator.fingerprint };
    return finished;
  };
  const interrupted = (): Promise<RunOutcome> =>
    finish('interrupted', 'interrupted by the user; the next run continues from here');

  /** The incumbent's repeats in `round`: topped up for each round it has served. */
  const repeatsOfIncumbent = async (round: number): Promise<number> =>
    incumbentRepeats(study, round - 1 - (await acceptedInRound(db, incumbent.id)));

  /**
   * The incumbent on a partition, with every example-repeat evaluated: transient failures are
   * tried once more (they were not stored); if they persist, the run cannot judge anything.
   */
  const evaluateIncumbent = (partition: PartitionName, repeats: number): Promise<PartitionScore> =>
    withCallStage('incumbent', async () => {
      let score = await evaluatePartition(evaluator, study, incumbent.text, partition, options.signal, repeats);
      if (score.transient > 0)
        score = await evaluatePartition(evaluator, study, incumbent.text, partition, options.signal, repeats);
      if (score.transient > 0) {
        const message = score.examples.find((record) => !record.valid && record.transient === true);
        throw new IncumbentUnavailable(
          `the incumbent (version ${incumbent.id}) cannot be evaluated on the ${partition} partition: ${score.transient} of ${score.total} example-repeats failed twice in the infrastructure${message !== undefined && !message.valid ? ` (${message.message})` : ''}`,
        );
      }
      const [scorerError] = scorerErrors([score]);
      if (scorerError !== undefined) {
        // The scorer fails on the incumbent's own output: no candidate can be judged against it. A bug to fix, not a result.
        throw new InputError(
          `the scorer failed on the incumbent's (version ${incumbent.id}) output on the ${partition} partition, so no candidate can be judged: ${scorerError}; fix the scorer (check it ${checkAdvice('score')})`,
          {
            code: 'custom_scorer',
          },
        );
      }
      if (partition === 'optimization' && score.total > 0 && score.invalid === score.total) {
        // Every comparison is on examples valid for both sides: with none valid for the incumbent
        // nothing can be measured, so no candidate could ever be judged (a crashing or hanging program,
        // an executor that answers nothing parseable). A problem, not a result.
        const first = score.examples.find((record) => !record.valid);
        throw new IncumbentUnavailable(
          `the incumbent (version ${incumbent.id}) gave no valid output on any of the ${score.total} optimization example-repeats, so nothing can be measured${first !== undefined && !first.valid ? ` (${first.exampleId}: ${first.invalidReason}: ${first.message})` : ''}; check the executor ${checkAdvice('execute')}`,
        );
      }
      return score;
    });

  // What checks an executor or scorer: `kloop eval` for a study folder; a library study has no kloop.yaml for it to read.
  const checkAdvice = (what: 'score' | 'execute'): string =>
    study.config !== undefined
      ? 'with `kloop eval`'
      : `by calling your ${what} function on that example yourself (\`kloop eval\` needs a kloop.yaml, which a library study has not; \`kloop history ${study.dir}\` reads this study's notebook)`;

  const record = async (input: {
    base: ArtifactVersion;
    hash: string;
    candidate: Candidate;
    candidateId: string;
    decision: GateDecision;
    skipped?: boolean;
    extraEvidence?: Record<string, unknown>;
  }) => {
    const result = await recordExperiment(db, {
      ...input,
      change: changeOf(input.base.text, input.candidate.text),
      runId,
      round: current!.round,
      proposer: study.proposer.id,
      fingerprint: evaluator.fingerprint,
      seed: study.seed,
      now,
      shadowIds: study.partitions.shadow.map((example) => example.id),
    });
    // Evaluated and decided (RunOutcome.newExperiments): a skipped duplicate is recorded but was never judged.
    if (input.skipped !== true) newExperiments += 1;
    return result;
  };

  /**
   * The identity of one of the round's candidates: the object `ask` returned,
   * or (a caller that copied it) the first of the round's candidates with
   * the same text and delta.
   */
  const idOf = (state: RoundState, candidate: Candidate): string => {
    const own = state.ids.get(candidate);
    if (own !== undefined) return own;
    for (const [known, id] of state.ids)
      if (known.text === candidate.text && known.delta === candidate.delta) return id;
    throw new Error(`the candidate "${candidate.delta.slice(0, 80)}" is not one the open round's ask() returned`);
  };
  /** True when the candidate was decided in this round already (before a crash): by identity, or for a row older than identities, by delta. */
  const isDecided = (state: RoundState, candidate: Candidate): boolean =>
    state.decided.has(idOf(state, candidate)) || state.decided.has(legacyDecisionKey(candidate.delta));

  /** A re-trial's gate levels: α/K and shadowAlpha/K (src/loop/retrials.ts); the configured ones for a first trial. */
  const gateSettingsFor = (state: RoundState, candidate: Candidate): LoadedStudy['gate'] => {
    const retrial = state.retrials.get(candidate);
    return retrial === undefined
      ? study.gate
      : retrialSettings(study.gate, retrial.trial, study.gate.retrials ?? DEFAULT_RETRIALS);
  };
  /** The evidence of a re-trial: its number, the experiments before it and the levels it was judged at. */
  const retrialEvidence = (state: RoundState, candidate: Candidate): Record<string, unknown> => {
    const retrial = state.retrials.get(candidate);
    if (retrial === undefined) return {};
    const settings = gateSettingsFor(state, candidate);
    return { retrial: { ...retrial, alpha: settings.alpha, shadowAlpha: settings.shadowAlpha } };
  };

  const closeRound = async (): Promise<void> => {
    openRound = null;
    await saveState(null);
  };

  /** Records a candidate whose change the incumbent already contains (merged earlier this round): skipped, as a duplicate. */
  const recordContained = async (state: RoundState, candidate: Candidate, proposedHash: string): Promise<Told> => {
    const candidateId = idOf(state, candidate);
    const { id } = await record({
      base: incumbent,
      hash: proposedHash,
      candidate,
      candidateId,
      decision: {
        accepted: false,
        reason: 'duplicate',
        checks: [
          {
            name: 'diversity',
            passed: false,
            statistic: 0,
            threshold: study.gate.minDeltaDistance,
            detail: 'the incumbent already contains this change (merged earlier this round)',
          },
        ],
        shadowConsulted: false,
      },
    });
    state.decided.set(candidateId, { decision: 'skipped', candidate_hash: proposedHash });
    emit({
      type: 'decision',
      round: state.round,
      experimentId: id,
      delta: candidate.delta,
      decision: 'skipped',
      reason: 'duplicate',
      optimization: null,
      rebased: true,
    });
    return {
      experimentId: id,
      decision: 'skipped',
      reason: 'duplicate',
      text: candidate.text,
      optimization: null,
      rebased: true,
    };
  };

  /** Records one decision of the round (told or raced) and updates the round's counts and the run's streaks. */
  const conclude = async (
    state: RoundState,
    input: {
      candidate: Candidate;
      text: string;
      hash: string;
      decision: GateDecision;
      extraEvidence: Record<string, unknown>;
      optimization: number | null;
      rebased: boolean;
    },
  ): Promise<Told> => {
    const { decision, text, hash } = input;
    const candidateId = idOf(state, input.candidate);
    const result = await record({
      base: incumbent,
      hash,
      candidate: { ...input.candidate, text },
      candidateId,
      decision,
      extraEvidence: input.extraEvidence,
    });
    if (result.accepted !== undefined) incumbent = result.accepted;
    evaluatedCount += 1;
    proposalAttempts += 1;
    state.decidedAny = true;
    state.decided.set(candidateId, { decision: decision.accepted ? 'accepted' : 'refused', candidate_hash: hash });
    if (decision.accepted) state.accepted += 1;
    else state.refused += 1;
    if (!decision.accepted && decision.reason === 'evaluation_failed') {
      consecutiveFailures += 1;
      proposalFailures += 1;
      evaluationFailures += 1;
      lastEvaluationFailure = decision.checks.find((check) => check.name === 'evaluation')?.detail ?? '';
      lastFailure = lastEvaluationFailure;
    } else {
      consecutiveFailures = 0;
      evaluationFailures = 0;
    }
    const reason = decision.accepted ? 'accepted' : decision.reason;
    emit({
      type: 'decision',
      round: state.round,
      experimentId: result.id,
      delta: input.candidate.delta,
      decision: decision.accepted ? 'accepted' : 'refused',
      reason,
      optimization: input.optimization,
      ...(input.rebased ? { rebased: true } : {}),
    });
    return {
      experimentId: result.id,
      decision: decision.accepted ? 'accepted' : 'refused',
      reason,
      text,
      optimization: input.optimization,
      rebased: input.rebased,
      gate: decision,
    };
  };

  const engine: LoopEngine = {
    runId,
    get fingerprint() {
      return evaluator.fingerprint;
    },
    incumbent: () => incumbent,
    currentRound: () => current?.round ?? null,
    budgetSpent: () => evaluatedCount >= study.stopping.maxExperiments,

    async openRound() {
      if (finished !== null) return { kind: 'stop', outcome: finished };
      if (options.signal?.aborted) return { kind: 'stop', outcome: await interrupted() };
      const stopping = study.stopping;
      evaluatedCount = await countEvaluated(db);
      const resumed = openRound !== null;
      if (!resumed) {
        const stop = async (reason: StopReason, detail: string): Promise<OpenedRound> => {
          // A run whose every candidate gave no valid output does not end as a result (candidate-failures.ts).
          const held = candidateFailures.stopFor(stopping.maxConsecutiveFailures, { reason, detail })!;
          return { kind: 'stop', outcome: await finish(held.reason, held.detail) };
        };
        if (evaluatedCount >= stopping.maxExperiments)
          return stop('max_experiments', `${evaluatedCount} experiments evaluated (limit ${stopping.maxExperiments})`);
        if (plateau >= stopping.plateauRounds)
          return stop('plateau', `${plateau} consecutive rounds without an accepted change`);
        const patience = idlePatience(idleLimit, stopping.maxExperiments - evaluatedCount, study.candidatesPerRound);
        if (idleRounds >= patience) {
          return stop(
            'no_new_proposals',
            `${idleRounds} rounds in a row brought nothing new to evaluate (every candidate was tried before or a near-duplicate): the proposer has run out of new ideas${patience > idleLimit ? ` (patience ${patience}: stopping.idleRounds ${idleLimit} + 1 per ${IDLE_PATIENCE_ROUNDS} rounds of budget left)` : ''}`,
          );
        }
        const failing = candidateFailures.stopFor(stopping.maxConsecutiveFailures, null);
        if (failing !== null) return stop(failing.reason, failing.detail);
        if (evaluationFailures >= stopping.maxConsecutiveFailures) {
          return stop(
            'infrastructure_failure',
            `${evaluationFailures} candidates in a row could not be evaluated (stopping.maxConsecutiveFailures ${stopping.maxConsecutiveFailures}): their evaluations failed in the infrastructure after the retries, whatever the candidate${lastEvaluationFailure !== '' ? `; last: ${lastEvaluationFailure}` : ''}`,
          );
        }
        if (consecutiveFailures >= stopping.maxConsecutiveFailures) {
          if (unreadableIncumbent)
            return stop(
              'consecutive_failures',
              `the proposer cannot read the incumbent artifact, the same failure on every attempt (not retried): ${lastFailure}`,
            );
          return stop(
            'consecutive_failures',
            `${consecutiveFailures} consecutive failed proposer answers or evaluations${lastFailure !== '' ? `; last: ${lastFailure}` : ''}`,
          );
        }
        if (
          stopping.maxFailureRate !== undefined &&
          proposalAttempts >= FAILURE_RATE_MIN_ATTEMPTS &&
          proposalFailures / proposalAttempts > stopping.maxFailureRate
        ) {
          return stop(
            'failure_rate',
            `${proposalFailures} of ${proposalAttempts} proposals failed (${((100 * proposalFailures) / proposalAttempts).toFixed(1)}% > maxFailureRate ${stopping.maxFailureRate})`,
          );
        }
        const lastRound = await maxRound(db);
        if (stopping.maxRounds !== undefined && lastRound >= stopping.maxRounds)
          return stop('max_rounds', `${lastRound} rounds run (limit ${stopping.maxRounds})`);
        // Between rounds only: shadow examples graduate, or a spent shadow rotates (or the study stops).
        const boundary = await corpusBoundary(db, study, now);
        if (boundary.message !== null)
          options.onCorpusChange?.({ kind: boundary.plan.kind, message: boundary.message });
        if (boundary.plan.kind === 'spent') return stop('shadow_spent', boundary.plan.reason);
        if (boundary.corpusChanged) {
          evaluator = createStudyEvaluator(study, db, options.evaluator);
          scratchEvaluator = createScratchEvaluator(study, db, options.evaluator);
        }
        const round = lastRound + 1;
        const incumbentScore = await evaluateIncumbent('optimization', await repeatsOfIncumbent(round));
        if (stopping.target !== undefined && (incumbentScore.composite ?? 0) >= stopping.target) {
          return stop(
            'target_reached',
            `optimization composite ${incumbentScore.composite?.toFixed(4)} ≥ target ${stopping.target}`,
          );
        }
        openRound = { round, baseVersionId: incumbent.id, attempt: await countProposals(db, round) };
        await saveState(null);
      }
      const round = openRound!.round;
      // Everything the proposer and the dedupe read is derived from the notebook as it stood
      // when the round opened, so a resumed round proposes exactly what the original did.
      const decided = await loadRoundExperiments(db, round);
      current = {
        round,
        base: (await getVersion(db, openRound!.baseVersionId))!,
        prior: await loadPriorExperiments(db, round),
        ids: new Map(),
        decided,
        accepted: [...decided.values()].filter((row) => row.decision === 'accepted').length,
        refused: [...decided.values()].filter((row) => row.decision === 'refused').length,
        decidedAny: decided.size > 0,
        distances: [],
        retrials: new Map(),
      };
      return { kind: 'round', round, resumed };
    },

    async ask() {
      if (current === null || openRound === null) throw new Error('ask() needs an open round: call openRound() first');
      const state = current;
      const { round } = state;
      const attempt = openRound.attempt ?? 0;
      const baseRepeats = incumbentRepeats(study, round - 1 - (await acceptedInRound(db, state.base.id)));
      const baseOptimization = await withCallStage('incumbent', () =>
        evaluatePartition(evaluator, study, state.base.text, 'optimization', options.signal, baseRepeats),
      );
      // A proposer may score several texts at once (they run together: on the workers, or up to the executor's
      // concurrency); each score is counted for the failure streak in the order the proposer asked, as one at a time.
      let observed: Promise<unknown> = Promise.resolve();
      const proposal = await withCallStage('proposer', () =>
        askProposer({
          study,
          base: state.base,
          baseOptimization,
          prior: state.prior,
          round,
          attempt,
          ...(repeatedDeltas.length > 0 ? { repeatedDeltas } : {}),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          evaluateOptimization: (text) =>
            withCallStage('screening', () => {
              const scoring = yieldToEventLoop().then(() =>
                withArtifactOverride(text, () =>
                  scratchEvaluator.evaluate({
                    artifactText: text,
                    partition: 'optimization',
                    examples: study.partitions.optimization,
                    repeats: study.gate.repeats,
                  }),
                ),
              );
              const turn = observed
                .then(() => scoring)
                .then((score) => {
                  if (text !== state.base.text) candidateFailures.observe(score);
                  return score;
                });
              observed = turn.catch(() => undefined);
              return turn;
            }),
        }),
      );
      const failed = answerFailed(proposal);
      state.ids = candidateIds(round, [...proposal.candidates, ...(proposal.repeated ?? [])]);
      const deduped = dedupeCandidates(
        [...proposal.candidates, ...(proposal.repeated ?? [])],
        state.prior,
        study.gate.minDeltaDistance,
        {
          baseVersionId: state.base.id,
          retrials: study.gate.retrials ?? DEFAULT_RETRIALS,
        },
      );
      state.distances = deduped.distances;
      state.retrials = deduped.retrials;
      const idle = !failed && deduped.fresh.length === 0;
      await recordProposal(db, {
        runId,
        round,
        attempt,
        proposer: study.proposer.id,
        outcome: failed ? 'failed' : idle ? 'idle' : 'candidates',
        candidates: proposal.candidates.length,
        failures: proposal.failures,
        ...(proposal.usage !== undefined ? { usage: proposal.usage } : {}),
        candidateIds: failed ? [] : [...state.ids.values()],
        now,
      });
      emit({
        type: 'round',
        round,
        candidates: proposal.candidates.length,
        failures: proposal.failures.length,
        repeats: proposal.repeats ?? 0,
        skipped: deduped.skipped.length,
        failureReasons: proposal.failures.map((failure) => failure.reason),
      });
      if (failed) {
        // One failed answer is one failure, however many candidates it meant to hold; the retry draws afresh.
        consecutiveFailures += 1;
        proposalAttempts += 1;
        proposalFailures += 1;
        lastFailure = proposal.failures.map((failure) => failure.reason).join('; ');
        // A proposer that cannot read the incumbent fails the same way on every attempt: no retry, the run stops now.
        if (proposal.failures.every((failure) => failure.code === INVALID_INCUMBENT)) {
          consecutiveFailures = Math.max(consecutiveFailures, study.stopping.maxConsecutiveFailures);
          unreadableIncumbent = true;
        }
        current = null;
        await closeRound();
        return { status: 'failed', candidates: [], proposal };
      }
      // Skipped before anything is paid for; never "tried" for later rounds.
      for (const skipped of deduped.skipped) {
        if (isDecided(state, skipped.candidate)) continue;
        const check: GateCheck =
          skipped.kind === 'evaluation_failed'
            ? {
                name: 'evaluation',
                passed: false,
                statistic: skipped.failures ?? MAX_EVALUATION_FAILURES,
                threshold: MAX_EVALUATION_FAILURES,
                detail: skipped.reason,
              }
            : {
                name: 'diversity',
                passed: false,
                statistic: skipped.distance,
                threshold: study.gate.minDeltaDistance,
                detail: skipped.reason,
              };
        const { id } = await record({
          base: state.base,
          hash: skipped.hash,
          candidate: skipped.candidate,
          candidateId: idOf(state, skipped.candidate),
          decision: { accepted: false, reason: skipped.kind, checks: [check], shadowConsulted: false },
          skipped: true,
        });
        emit({
          type: 'decision',
          round,
          experimentId: id,
          delta: skipped.candidate.delta,
          decision: 'skipped',
          reason: skipped.kind,
          optimization: null,
        });
      }
      if (idle) {
        idleRounds += 1;
        repeatedDeltas = [
          ...new Set(
            deduped.skipped.filter((skipped) => skipped.kind === 'duplicate').map((skipped) => skipped.candidate.delta),
          ),
        ];
        current = null;
        await closeRound();
        emit({
          type: 'round-end',
          round,
          accepted: 0,
          refused: 0,
          best: baseOptimization.composite,
          diversity: summarizeDistances(deduped.distances),
        });
        return { status: 'idle', candidates: [], proposal };
      }
      idleRounds = 0;
      repeatedDeltas = [];
      return { status: 'candidates', candidates: deduped.fresh, proposal };
    },

    screen(candidates) {
      return screenCandidates(evaluator, study, candidates, options.signal);
    },

    async tell(item) {
      if (current === null) throw new Error('tell() needs an open round with asked candidates');
      const state = current;
      if (options.signal?.aborted) return null;
      if (isDecided(state, item.candidate)) return null; // decided before a crash: never decide twice
      // Checked before deciding, not only after: a round resumed after a crash that followed its
      // last allowed decision must not decide one more.
      if (evaluatedCount >= study.stopping.maxExperiments) return null;
      let text = item.text;
      let optimization = item.optimization;
      let anchor = item.anchor;
      const rebase = rebaseCandidate(item.candidate, state.base, incumbent);
      if (rebase.kind === 'contained') return recordContained(state, item.candidate, item.hash);
      if (rebase.kind === 'rebased') {
        text = rebase.text;
        optimization = await withCallStage('candidates', () =>
          evaluatePartition(evaluator, study, text, 'optimization', options.signal),
        );
        anchor = await withCallStage('candidates', () =>
          evaluatePartition(evaluator, study, text, 'anchor', options.signal),
        );
      }
      const hash = contentHash(text);
      const rebaseEvidence = { ...rebaseEvidenceOf(rebase, item.hash), ...retrialEvidence(state, item.candidate) };
      const racingEvidence = item.racing !== undefined ? { racing: item.racing } : {};
      candidateFailures.observe(optimization);
      const failure = evaluationFailure([optimization, anchor]) ?? scorerFailure([optimization, anchor]);
      let decision: GateDecision;
      let extraEvidence: Record<string, unknown> = { ...rebaseEvidence, ...racingEvidence };
      if (failure !== undefined) {
        decision = failure;
      } else {
        const repeats = await repeatsOfIncumbent(state.round);
        await evaluateIncumbent('optimization', repeats);
        await evaluateIncumbent('anchor', repeats);
        const gated = await gateCandidate({
          evaluator,
          study,
          incumbent,
          incumbentRepeats: repeats,
          text,
          optimization,
          anchor,
          calibration,
          settings: gateSettingsFor(state, item.candidate),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          ...(study.gate.racing !== undefined
            ? { racing: { settings: study.gate.racing, seed: raceSeed(study.seed, state.round) ^ 0x5bd1e995 } }
            : {}),
        });
        decision = gated.decision;
        extraEvidence = { ...rebaseEvidence, scores: gated.scores, ...racingEvidence };
      }
      if (item.racing !== undefined) decision = withRacingCheck(decision, racingCheck(item.racing));
      return conclude(state, {
        candidate: item.candidate,
        text,
        hash,
        decision,
        extraEvidence,
        optimization: optimization.composite,
        rebased: rebase.kind === 'rebased',
      });
    },

    async race(candidates) {
      if (current === null) throw new Error('race() needs an open round with asked candidates');
      const state = current;
      const racing = study.gate.racing;
      if (racing === undefined) throw new Error('race() needs gate.racing settings');
      return raceRound(
        {
          study,
          evaluator: () => evaluator,
          calibration,
          round: state.round,
          base: state.base,
          settings: racing,
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          incumbent: () => incumbent,
          isDecided: (candidate) => isDecided(state, candidate),
          budgetSpent: () => evaluatedCount >= study.stopping.maxExperiments,
          incumbentOptimization: async () => evaluateIncumbent('optimization', await repeatsOfIncumbent(state.round)),
          incumbentRepeats: () => repeatsOfIncumbent(state.round),
          recordContained: (candidate, hash) => recordContained(state, candidate, hash),
          refuse: (input) =>
            conclude(state, {
              candidate: input.candidate,
              text: input.text,
              hash: contentHash(input.text),
              decision: input.decision,
              extraEvidence: {
                ...rebaseEvidenceOf(input.rebase, contentHash(input.candidate.text)),
                ...retrialEvidence(state, input.candidate),
                racing: input.racing,
              },
              optimization: null,
              rebased: input.rebase.kind === 'rebased',
            }),
          tell: (item) => engine.tell(item),
        },
        candidates,
      );
    },

    async endRound() {
      if (options.signal?.aborted) return interrupted();
      if (current === null) return null;
      const state = current;
      if (state.decidedAny) plateau = state.accepted > 0 ? 0 : plateau + 1;
      current = null;
      await closeRound();
      const best = await withCallStage('incumbent', async () =>
        evaluatePartition(
          evaluator,
          study,
          incumbent.text,
          'optimization',
          options.signal,
          await repeatsOfIncumbent(state.round),
        ),
      );
      emit({
        type: 'round-end',
        round: state.round,
        accepted: state.accepted,
        refused: state.refused,
        best: best.composite,
        diversity: summarizeDistances(state.distances),
      });
      return null;
    },

    finish,

    async fail(error) {
      if (isAbort(error, options.signal)) return interrupted();
      if (isBudgetError(error)) return finish('budget', (error as Error).message);
      if (isInfrastructureError(error)) return finish('infrastructure_failure', (error as Error).message);
      // Bad input met by the run (exit 2, e.g. a scorer failing on the incumbent): a run that recorded nothing is removed, not left open.
      if (KloopError.isInstance(error) && error.exitCode === 2) await removeRunIfEmpty(db, runId); // a run that ended on bad input before it did anything
      throw error;
    },
  };
  return engine;
}

/** The decision with the race's check after the constraints (what was evaluated before the gate looked). */
function withRacingCheck(decision: GateDecision, check: GateCheck): GateDecision {
  const at = decision.checks.findIndex((entry) => entry.name === 'constraints') + 1;
  return { ...decision, checks: [...decision.checks.slice(0, at), check, ...decision.checks.slice(at)] };
}

/** The evidence of a rebase, as stored with the decision. */
function rebaseEvidenceOf(rebase: Rebase, proposedHash: string): Record<string, unknown> {
  return rebase.kind === 'rebased'
    ? { rebased: { method: rebase.method, conflicts: rebase.conflicts, proposedHash } }
    : {};
}

function summarizeDistances(distances: readonly number[]): { mean: number | null; min: number | null } {
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
