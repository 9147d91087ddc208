/**
 * The ask state of the engine: the proposer, seeded by (seed, round,
 * attempt), is asked for candidates; the call is recorded with its failures
 * and tokens; what was evaluated before or is a near-duplicate is recorded as
 * skipped and not returned. A failed answer or an idle one closes the round;
 * fresh candidates move the round to `screen`, stored with it
 * (src/loop/open-round-state.ts), and a round resumed past ask returns them
 * without asking the proposer again.
 *
 * @module
 */
import type { GateCheck } from '../gate/gate.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { Candidate, ProposalResult } from '../proposers/proposer.ts';
import { INVALID_INCUMBENT } from '../proposers/proposer.ts';
import { withCallStage } from '../providers/call-stage.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { candidateIds } from './candidate-id.ts';
import type { Asked } from './engine.ts';
import { summarizeDistances } from './engine-close.ts';
import { idOf, isDecided, recordDecision } from './engine-decide.ts';
import type { EngineRun, RoundState } from './engine-state.ts';
import { closeRound, enterPhase } from './engine-state.ts';
import { incumbentRepeats, yieldToEventLoop } from './evaluate-partition.ts';
import { evaluateIncumbentPartition } from './adaptive-evaluation.ts';
import type { StoredCandidate } from './open-round-state.ts';
import { restoreCandidate, storable, storeCandidate } from './open-round-state.ts';
import { acceptedInRound, MAX_EVALUATION_FAILURES, recordProposal } from './notebook.ts';
import { answerFailed, askProposer, dedupeCandidates } from './propose.ts';
import { DEFAULT_RETRIALS } from './retrials.ts';

/** Asks the proposer for the open round's candidates (see LoopEngine.ask): fresh ones, or the round closed as failed or idle. */
export async function ask(run: EngineRun): Promise<Asked> {
  if (run.current === null || run.openRound === null)
    throw new Error('ask() needs an open round: call openRound() first');
  const state = run.current;
  const { round } = state;
  // A round resumed past ask: its answer is in the notebook; the proposer is not asked again.
  if (run.openRound.phase !== undefined && run.openRound.phase !== 'ask' && run.openRound.reask !== true)
    return storedAnswer(run, state, run.openRound.candidates ?? []);
  const attempt = run.openRound.attempt ?? 0;
  const baseRepeats = incumbentRepeats(run.study, round - 1 - (await acceptedInRound(run.notebook, state.base.id)));
  const baseOptimization = await withCallStage('incumbent', () =>
    evaluateIncumbentPartition(run.evaluator, run.study, run.calibration, {
      text: state.base.text,
      partition: 'optimization',
      repeats: baseRepeats,
      signal: run.options.signal,
    }),
  );
  const proposal = await askRoundProposer(run, state, attempt, baseOptimization);
  const failed = answerFailed(proposal);
  state.ids = candidateIds(round, [...proposal.candidates, ...(proposal.repeated ?? [])]);
  const deduped = dedupeCandidates(
    [...proposal.candidates, ...(proposal.repeated ?? [])],
    state.prior,
    run.study.gate.minDeltaDistance,
    {
      baseVersionId: state.base.id,
      retrials: run.study.gate.retrials ?? DEFAULT_RETRIALS,
      deepen: !run.study.executor.deterministic,
    },
  );
  state.distances = deduped.distances;
  state.retrials = deduped.retrials;
  const idle = !failed && deduped.fresh.length === 0;
  await recordAnswer(run, state, { attempt, proposal, failed, idle, skipped: deduped.skipped.length });
  if (failed) {
    await closeFailedAnswer(run, proposal);
    return { status: 'failed', candidates: [], proposal };
  }
  await recordSkipped(run, state, deduped.skipped);
  if (idle) {
    run.idleRounds += 1;
    run.repeatedDeltas = [
      ...new Set(
        deduped.skipped.filter((skipped) => skipped.kind === 'duplicate').map((skipped) => skipped.candidate.delta),
      ),
    ];
    run.current = null;
    await closeRound(run);
    run.emit({
      type: 'round-end',
      round,
      accepted: 0,
      refused: 0,
      best: baseOptimization.composite,
      diversity: summarizeDistances(deduped.distances),
    });
    return { status: 'idle', candidates: [], proposal };
  }
  run.idleRounds = 0;
  run.repeatedDeltas = [];
  await storeAnswer(run, state, deduped.fresh);
  return { status: 'candidates', candidates: deduped.fresh, proposal };
}

/**
 * Moves the round to `screen` with its fresh candidates stored (identity,
 * re-trial) and the answer's distances: what a resumed round continues from.
 * A round whose candidates carry a `rebase` function (not JSON) moves on with `reask: true`: resumed, it asks again.
 */
async function storeAnswer(run: EngineRun, state: RoundState, fresh: readonly Candidate[]): Promise<void> {
  if (!storable(fresh)) {
    await enterPhase(run, 'screen', { reask: true, distances: [...state.distances] });
    return;
  }
  await enterPhase(run, 'screen', {
    candidates: fresh.map((candidate) =>
      storeCandidate(candidate, idOf(state, candidate), state.retrials.get(candidate)),
    ),
    distances: [...state.distances],
  });
}

/**
 * The answer of a round resumed past ask, as stored: the fresh candidates
 * with the identities and re-trials they had, the answer's distances. Its
 * proposer call, its skipped candidates and the streaks after it were
 * recorded before the interruption; nothing is recorded again.
 */
function storedAnswer(run: EngineRun, state: RoundState, stored: readonly StoredCandidate[]): Asked {
  const candidates = stored.map(restoreCandidate);
  state.ids = new Map(candidates.map((candidate, index) => [candidate, stored[index]!.id]));
  state.retrials = new Map();
  candidates.forEach((candidate, index) => {
    const retrial = stored[index]!.retrial;
    if (retrial !== undefined) state.retrials.set(candidate, retrial);
  });
  state.distances = [...(run.openRound?.distances ?? [])];
  run.idleRounds = 0;
  run.repeatedDeltas = [];
  return { status: 'candidates', candidates, proposal: { candidates, failures: [] }, resumed: true };
}

/**
 * Asks the proposer of the open round, seeded by (seed, round, attempt), with
 * the incumbent's optimization scores; the texts it scores are screened on
 * the scratch evaluator, and each score counts for the failure streak in the
 * order the proposer asked.
 */
async function askRoundProposer(
  run: EngineRun,
  state: RoundState,
  attempt: number,
  baseOptimization: PartitionScore,
): Promise<ProposalResult> {
  const { round } = state;
  // A proposer may score several texts at once (they run together: on the workers, or up to the executor's
  // concurrency); each score is counted for the failure streak in the order the proposer asked, as one at a time.
  let observed: Promise<unknown> = Promise.resolve();
  return withCallStage('proposer', () =>
    askProposer({
      study: run.study,
      base: state.base,
      baseOptimization,
      prior: state.prior,
      round,
      attempt,
      ...(run.repeatedDeltas.length > 0 ? { repeatedDeltas: run.repeatedDeltas } : {}),
      ...(run.options.signal !== undefined ? { signal: run.options.signal } : {}),
      evaluateOptimization: (text) =>
        withCallStage('screening', () => {
          const scoring = yieldToEventLoop().then(() =>
            withArtifactOverride(text, () =>
              run.scratchEvaluator.evaluate({
                artifactText: text,
                partition: 'optimization',
                examples: run.study.partitions.optimization,
                repeats: run.study.gate.repeats,
              }),
            ),
          );
          const turn = observed
            .then(() => scoring)
            .then((score) => {
              if (text !== state.base.text) run.candidateFailures.observe(score);
              return score;
            });
          observed = turn.catch(() => undefined);
          return turn;
        }),
    }),
  );
}

/** Records the proposer call of the open round (once per round and attempt) and emits the round's `round` event. */
async function recordAnswer(
  run: EngineRun,
  state: RoundState,
  answer: { attempt: number; proposal: ProposalResult; failed: boolean; idle: boolean; skipped: number },
): Promise<void> {
  const { round } = state;
  const { attempt, proposal, failed, idle } = answer;
  await recordProposal(run.notebook, {
    runId: run.runId,
    round,
    attempt,
    proposer: run.study.proposer.id,
    outcome: failed ? 'failed' : idle ? 'idle' : 'candidates',
    candidates: proposal.candidates.length,
    failures: proposal.failures,
    ...(proposal.usage !== undefined ? { usage: proposal.usage } : {}),
    candidateIds: failed ? [] : [...state.ids.values()],
    now: run.now,
  });
  run.emit({
    type: 'round',
    round,
    candidates: proposal.candidates.length,
    failures: proposal.failures.length,
    repeats: proposal.repeats ?? 0,
    skipped: answer.skipped,
    failureReasons: proposal.failures.map((failure) => failure.reason),
  });
}

/** A failed answer: one more failure in the run's streaks (the run stops at once when the proposer cannot read the incumbent); the round closes. */
async function closeFailedAnswer(run: EngineRun, proposal: ProposalResult): Promise<void> {
  // One failed answer is one failure, however many candidates it meant to hold; the retry draws afresh.
  run.consecutiveFailures += 1;
  run.proposalAttempts += 1;
  run.proposalFailures += 1;
  run.lastFailure = proposal.failures.map((failure) => failure.reason).join('; ');
  // A proposer that cannot read the incumbent fails the same way on every attempt: no retry, the run stops now.
  if (proposal.failures.every((failure) => failure.code === INVALID_INCUMBENT)) {
    run.consecutiveFailures = Math.max(run.consecutiveFailures, run.study.stopping.maxConsecutiveFailures);
    run.unreadableIncumbent = true;
  }
  run.current = null;
  await closeRound(run);
}

/** Records the candidates skipped before anything is paid for (duplicates, repeated evaluation failures); never "tried" for later rounds. */
async function recordSkipped(
  run: EngineRun,
  state: RoundState,
  skippedCandidates: ReturnType<typeof dedupeCandidates>['skipped'],
): Promise<void> {
  const { round } = state;
  // Skipped before anything is paid for; never "tried" for later rounds.
  for (const skipped of skippedCandidates) {
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
            threshold: run.study.gate.minDeltaDistance,
            detail: skipped.reason,
          };
    const { id } = await recordDecision(run, {
      base: state.base,
      hash: skipped.hash,
      candidate: skipped.candidate,
      candidateId: idOf(state, skipped.candidate),
      decision: { accepted: false, reason: skipped.kind, checks: [check], shadowConsulted: false },
      skipped: true,
    });
    run.emit({
      type: 'decision',
      round,
      experimentId: id,
      delta: skipped.candidate.delta,
      decision: 'skipped',
      reason: skipped.kind,
      optimization: null,
    });
  }
}
