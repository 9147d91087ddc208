/**
 * The open-round state of the engine: the stopping criteria, the corpus
 * boundary (graduation, rotation), the incumbent's evaluation, the round
 * recorded as open in the notebook; or a round a crash left open, resumed
 * exactly.
 *
 * @module
 */
import { corpusBoundary } from './corpus-lifecycle.ts';
import type { OpenedRound } from './engine.ts';
import { evaluateIncumbent, repeatsOfIncumbent } from './engine-incumbent.ts';
import type { EngineRun } from './engine-state.ts';
import { FAILURE_RATE_MIN_ATTEMPTS, finishRun, interrupted, saveState } from './engine-state.ts';
import { createStudyEvaluator } from './evaluate-partition.ts';
import { IDLE_PATIENCE_ROUNDS, idlePatience } from './idle-patience.ts';
import { countEvaluated, countProposals, loadPriorExperiments, loadRoundExperiments, maxRound } from './notebook.ts';
import type { StopReason } from './run-study.ts';
import { createScratchEvaluator } from './scratch-evaluator.ts';

/** Opens the next round (see LoopEngine.openRound), or resumes the round a crash left open, exactly. */
export async function openNextRound(run: EngineRun): Promise<OpenedRound> {
  if (run.finished !== null) return { kind: 'stop', outcome: run.finished };
  if (run.options.signal?.aborted) return { kind: 'stop', outcome: await interrupted(run) };
  run.evaluatedCount = await countEvaluated(run.notebook);
  const resumed = run.openRound !== null;
  if (!resumed) {
    const stopped = await beginRound(run);
    if (stopped !== null) return stopped;
  }
  const round = run.openRound!.round;
  // Everything the proposer and the dedupe read is derived from the notebook as it stood
  // when the round opened, so a resumed round proposes exactly what the original did.
  const decided = await loadRoundExperiments(run.notebook, round);
  run.current = {
    round,
    base: (await run.notebook.getVersion(run.openRound!.baseVersionId))!,
    prior: await loadPriorExperiments(run.notebook, round),
    ids: new Map(),
    decided,
    accepted: [...decided.values()].filter((row) => row.decision === 'accepted').length,
    refused: [...decided.values()].filter((row) => row.decision === 'refused').length,
    decidedAny: decided.size > 0,
    distances: [],
    retrials: new Map(),
  };
  return { kind: 'round', round, resumed };
}

/**
 * Opens a new round: the stopping criteria, the corpus boundary (graduation,
 * rotation; a changed corpus gets new evaluators), the incumbent's
 * evaluation (and the target), the round recorded as open. Returns the stop
 * that holds, or null when the round is open.
 */
async function beginRound(run: EngineRun): Promise<OpenedRound | null> {
  const stopping = run.study.stopping;
  const stop = async (reason: StopReason, detail: string): Promise<OpenedRound> => {
    // A run whose every candidate gave no valid output does not end as a result (candidate-failures.ts).
    const held = run.candidateFailures.stopFor(stopping.maxConsecutiveFailures, { reason, detail })!;
    return { kind: 'stop', outcome: await finishRun(run, held.reason, held.detail) };
  };
  const streak = streakStop(run);
  if (streak !== null) return stop(streak.reason, streak.detail);
  const lastRound = await maxRound(run.notebook);
  if (stopping.maxRounds !== undefined && lastRound >= stopping.maxRounds)
    return stop('max_rounds', `${lastRound} rounds run (limit ${stopping.maxRounds})`);
  // Between rounds only: shadow examples graduate, or a spent shadow rotates (or the study stops).
  const boundary = await corpusBoundary(run.notebook, run.study, run.now);
  if (boundary.message !== null) run.options.onCorpusChange?.({ kind: boundary.plan.kind, message: boundary.message });
  if (boundary.plan.kind === 'spent') return stop('shadow_spent', boundary.plan.reason);
  if (boundary.corpusChanged) {
    run.evaluator = createStudyEvaluator(run.study, run.notebook, run.options.evaluator);
    run.scratchEvaluator = createScratchEvaluator(run.study, run.notebook, run.options.evaluator);
  }
  const round = lastRound + 1;
  const incumbentScore = await evaluateIncumbent(run, 'optimization', await repeatsOfIncumbent(run, round));
  if (stopping.target !== undefined && (incumbentScore.composite ?? 0) >= stopping.target) {
    return stop(
      'target_reached',
      `optimization composite ${incumbentScore.composite?.toFixed(4)} ≥ target ${stopping.target}`,
    );
  }
  run.openRound = {
    round,
    baseVersionId: run.incumbent.id,
    attempt: await countProposals(run.notebook, round),
    phase: 'ask',
  };
  await saveState(run, null);
  return null;
}

/**
 * Experiments to evaluate before a plateau may stop the run:
 * ⌈`plateauMinSpent` × `maxExperiments`⌉ (0 when the setting is absent or 0).
 */
export function plateauSpendFloor(stopping: { maxExperiments: number; plateauMinSpent?: number }): number {
  return Math.max(0, Math.ceil((stopping.plateauMinSpent ?? 0) * stopping.maxExperiments - 1e-9));
}

/** The stop the run's counts call for before a new round (budget, plateau, idle rounds, failures), or null. */
function streakStop(run: EngineRun): { reason: StopReason; detail: string } | null {
  const stopping = run.study.stopping;
  const stopWith = (reason: StopReason, detail: string) => ({ reason, detail });
  if (run.evaluatedCount >= stopping.maxExperiments)
    return stopWith(
      'max_experiments',
      `${run.evaluatedCount} experiments evaluated (limit ${stopping.maxExperiments})`,
    );
  if (run.plateau >= stopping.plateauRounds && run.evaluatedCount >= plateauSpendFloor(stopping)) {
    const spent =
      (stopping.plateauMinSpent ?? 0) > 0
        ? ` (${run.evaluatedCount} of ${stopping.maxExperiments} experiments evaluated, stopping.plateauMinSpent ${stopping.plateauMinSpent})`
        : '';
    return stopWith('plateau', `${run.plateau} consecutive rounds without an accepted change${spent}`);
  }
  const patience = idlePatience(
    run.idleLimit,
    stopping.maxExperiments - run.evaluatedCount,
    run.study.candidatesPerRound,
  );
  if (run.idleRounds >= patience) {
    return stopWith(
      'no_new_proposals',
      `${run.idleRounds} rounds in a row brought nothing new to evaluate (every candidate was tried before or a near-duplicate): the proposer has run out of new ideas${patience > run.idleLimit ? ` (patience ${patience}: stopping.idleRounds ${run.idleLimit} + 1 per ${IDLE_PATIENCE_ROUNDS} rounds of budget left)` : ''}`,
    );
  }
  const failing = run.candidateFailures.stopFor(stopping.maxConsecutiveFailures, null);
  if (failing !== null) return stopWith(failing.reason, failing.detail);
  if (run.evaluationFailures >= stopping.maxConsecutiveFailures) {
    return stopWith(
      'infrastructure_failure',
      `${run.evaluationFailures} candidates in a row could not be evaluated (stopping.maxConsecutiveFailures ${stopping.maxConsecutiveFailures}): their evaluations failed in the infrastructure after the retries, whatever the candidate${run.lastEvaluationFailure !== '' ? `; last: ${run.lastEvaluationFailure}` : ''}`,
    );
  }
  if (run.consecutiveFailures >= stopping.maxConsecutiveFailures) {
    if (run.unreadableIncumbent)
      return stopWith(
        'consecutive_failures',
        `the proposer cannot read the incumbent artifact, the same failure on every attempt (not retried): ${run.lastFailure}`,
      );
    return stopWith(
      'consecutive_failures',
      `${run.consecutiveFailures} consecutive failed proposer answers or evaluations${run.lastFailure !== '' ? `; last: ${run.lastFailure}` : ''}`,
    );
  }
  if (
    stopping.maxFailureRate !== undefined &&
    run.proposalAttempts >= FAILURE_RATE_MIN_ATTEMPTS &&
    run.proposalFailures / run.proposalAttempts > stopping.maxFailureRate
  ) {
    return stopWith(
      'failure_rate',
      `${run.proposalFailures} of ${run.proposalAttempts} proposals failed (${((100 * run.proposalFailures) / run.proposalAttempts).toFixed(1)}% > maxFailureRate ${stopping.maxFailureRate})`,
    );
  }
  return null;
}
