/**
 * The loop: seed → propose → evaluate (parallel explore) → gate (sequential
 * integrate) → record → repeat → stop.
 *
 * One round, phase by phase (each phase in its own module):
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
 * Failures are counted per failed proposer answer and per failed evaluation,
 * never per candidate; a round that brings nothing new is *idle*, and
 * `stopping.idleRounds` idle rounds in a row stop the run as
 * `no_new_proposals`. A failed answer is retried with the next attempt, whose
 * nonce differs, so it is never replayed from the response cache.
 */
import type { PartitionName } from '../corpus/example.ts';
import type { BoundaryPlan } from '../corpus/lifecycle.ts';
import { InfrastructureError, KloopError } from '../errors.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration, GateDecision } from '../gate/gate.ts';
import type { Candidate } from '../proposers/proposer.ts';
import { NO_CALIBRATION } from '../gate/gate.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { getRegistryVersion, getVersion, putVersion, setRegistryVersion, withArtifactOverride } from '../storage/registry.ts';
import { corpusBoundary, startCorpusLifecycle } from '../study/corpus-lifecycle.ts';
import type { LoadedStudy } from '../study/loaded-study.ts';
import { readStudyState, writeStudyState } from '../study/study-state.ts';
import { contentHash } from '../artifact/content-hash.ts';
import { createStudyEvaluator, evaluatePartition, incumbentRepeats, yieldToEventLoop } from './evaluate-partition.ts';
import type { StudyEvaluatorOptions } from './evaluate-partition.ts';
import { changeOf, evaluationFailure, gateCandidate, rebaseCandidate, screenCandidates } from './integrate.ts';
import {
  acceptedInRound,
  countEvaluated,
  countProposals,
  loadPriorExperiments,
  loadRoundExperiments,
  maxRound,
  recordExperiment,
  recordProposal,
} from './notebook.ts';
import { answerFailed, askProposer, dedupeCandidates } from './propose.ts';

/** Why a run stopped. Distinct outcomes, never conflated. */
export type StopReason =
  | 'target_reached'
  | 'plateau'
  | 'max_experiments'
  | 'max_rounds'
  | 'no_new_proposals'
  | 'consecutive_failures'
  | 'failure_rate'
  | 'budget'
  | 'infrastructure_failure'
  | 'shadow_spent'
  | 'interrupted';

/** Proposals a run must have attempted before `stopping.maxFailureRate` can stop it. */
export const FAILURE_RATE_MIN_ATTEMPTS = 10;

/** Default of `stopping.idleRounds`. */
export const DEFAULT_IDLE_ROUNDS = 2;

/** Progress events printed by the CLI. */
export type RunEvent =
  | { type: 'start'; runId: number; fingerprint: string; experiments: number; incumbent: number }
  | { type: 'baseline'; scores: Record<PartitionName, number | null> }
  | { type: 'round'; round: number; candidates: number; failures: number; repeats?: number; skipped?: number; failureReasons?: string[] }
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
  | { type: 'round-end'; round: number; accepted: number; refused: number; best: number | null; diversity: { mean: number | null; min: number | null } }
  | { type: 'stop'; reason: StopReason; detail: string };

export interface RunOptions {
  study: LoadedStudy;
  db: StudyDatabase;
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

/** Makes sure the registry has an active version (the seed artifact on a new study). */
export async function ensureSeedVersion(db: StudyDatabase, study: LoadedStudy, now: () => Date): Promise<ArtifactVersion> {
  const active = await getRegistryVersion(db);
  if (active !== undefined) return active;
  return db.transaction().execute(async (transaction) => {
    const version = await putVersion(transaction, study.artifactText, 'seed', null, null, now);
    await setRegistryVersion(transaction, version.id, 'seed', 'active', now);
    await setRegistryVersion(transaction, version.id, 'seed', 'seed', now);
    return version;
  });
}

/** An incumbent the loop cannot evaluate (transient failures that persist): the run stops. */
class IncumbentUnavailable extends InfrastructureError {}

/**
 * Runs (or continues) the study until a stopping criterion holds.
 * Every decision is written in its own transaction as it is made.
 */
export async function runStudy(options: RunOptions): Promise<RunOutcome> {
  const { study, db } = options;
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => undefined);
  const calibration = options.calibration ?? NO_CALIBRATION;
  const idleLimit = study.stopping.idleRounds ?? DEFAULT_IDLE_ROUNDS;
  // The corpus lifecycle: partitions (and admitted examples) as recorded; initialised from the files on the first run.
  const corpusStart = await startCorpusLifecycle(db, study, now);
  if (corpusStart.moves.length > 0) options.onCorpusChange?.({ kind: 'start', message: `corpus: ${corpusStart.moves.length} lifecycle move(s) recorded at the start (${[...new Set(corpusStart.moves.map((move) => move.kind))].join(', ')})` });
  let evaluator = createStudyEvaluator(study, db, options.evaluator);
  // Screening candidates inside the proposer is not stored: it can be hundreds per round.
  let scratchEvaluator = createStudyEvaluator(study);

  await ensureSeedVersion(db, study, now);
  const run = await db.insertInto('runs').values({ started_at: isoNow(now), ended_at: null, stop_reason: null, report: null }).returning('id').executeTakeFirstOrThrow();
  const runId = run.id;

  // Plateau and failure streaks belong to a run; an interrupted run's streaks carry over.
  const initialState = await readStudyState(db);
  const carryOver = initialState.lastStopReason === null || initialState.lastStopReason === 'interrupted';
  let plateau = carryOver ? initialState.plateauRounds : 0;
  let consecutiveFailures = carryOver ? initialState.consecutiveFailures : 0;
  let idleRounds = carryOver ? initialState.idleRounds ?? 0 : 0;
  let proposalAttempts = carryOver ? initialState.proposalAttempts ?? 0 : 0;
  let proposalFailures = carryOver ? initialState.proposalFailures ?? 0 : 0;
  // A round a crash left open is finished first, exactly as it would have gone.
  let openRound = carryOver ? initialState.openRound ?? null : null;
  let newExperiments = 0;
  let incumbent = (await getRegistryVersion(db))!;
  const saveState = (lastStopReason: string | null): Promise<void> =>
    writeStudyState(db, { plateauRounds: plateau, consecutiveFailures, idleRounds, proposalAttempts, proposalFailures, lastStopReason, openRound });

  emit({ type: 'start', runId, fingerprint: evaluator.fingerprint, experiments: await countEvaluated(db), incumbent: incumbent.id });

  const finish = async (reason: StopReason, detail: string): Promise<RunOutcome> => {
    await saveState(reason);
    await db.updateTable('runs').set({ ended_at: isoNow(now), stop_reason: reason }).where('id', '=', runId).execute();
    emit({ type: 'stop', reason, detail });
    return { runId, stopReason: reason, stopDetail: detail, newExperiments, fingerprint: evaluator.fingerprint };
  };

  /** The incumbent's repeats in `round`: topped up for each round it has served. */
  const repeatsOfIncumbent = async (round: number): Promise<number> => incumbentRepeats(study, round - 1 - (await acceptedInRound(db, incumbent.id)));

  /**
   * The incumbent on a partition, with every example-repeat evaluated: transient failures are
   * tried once more (they were not stored); if they persist, the run cannot judge anything.
   */
  const evaluateIncumbent = async (partition: PartitionName, repeats: number): Promise<PartitionScore> => {
    let score = await evaluatePartition(evaluator, study, incumbent.text, partition, options.signal, repeats);
    if (score.transient > 0) score = await evaluatePartition(evaluator, study, incumbent.text, partition, options.signal, repeats);
    if (score.transient > 0) {
      const message = score.examples.find((record) => !record.valid && record.transient === true);
      throw new IncumbentUnavailable(
        `the incumbent (version ${incumbent.id}) cannot be evaluated on the ${partition} partition: ${score.transient} of ${score.total} example-repeats failed twice in the infrastructure${message !== undefined && !message.valid ? ` (${message.message})` : ''}`,
      );
    }
    return score;
  };

  try {
    for (;;) {
      if (options.signal?.aborted) return finish('interrupted', 'interrupted by the user; the next run continues from here');
      const stopping = study.stopping;
      let evaluatedCount = await countEvaluated(db);
      const resuming = openRound !== null;
      if (!resuming) {
        if (evaluatedCount >= stopping.maxExperiments) return finish('max_experiments', `${evaluatedCount} experiments evaluated (limit ${stopping.maxExperiments})`);
        if (plateau >= stopping.plateauRounds) return finish('plateau', `${plateau} consecutive rounds without an accepted change`);
        if (idleRounds >= idleLimit) {
          return finish('no_new_proposals', `${idleRounds} rounds in a row brought nothing new to evaluate (every candidate was tried before or a near-duplicate): the proposer has run out of new ideas`);
        }
        if (consecutiveFailures >= stopping.maxConsecutiveFailures) return finish('consecutive_failures', `${consecutiveFailures} consecutive failed proposer answers or evaluations`);
        if (stopping.maxFailureRate !== undefined && proposalAttempts >= FAILURE_RATE_MIN_ATTEMPTS && proposalFailures / proposalAttempts > stopping.maxFailureRate) {
          return finish('failure_rate', `${proposalFailures} of ${proposalAttempts} proposals failed (${((100 * proposalFailures) / proposalAttempts).toFixed(1)}% > maxFailureRate ${stopping.maxFailureRate})`);
        }
        const lastRound = await maxRound(db);
        if (stopping.maxRounds !== undefined && lastRound >= stopping.maxRounds) return finish('max_rounds', `${lastRound} rounds run (limit ${stopping.maxRounds})`);
        // Between rounds only: shadow examples graduate, or a spent shadow rotates (or the study stops).
        const boundary = await corpusBoundary(db, study, now);
        if (boundary.message !== null) options.onCorpusChange?.({ kind: boundary.plan.kind, message: boundary.message });
        if (boundary.plan.kind === 'spent') return finish('shadow_spent', boundary.plan.reason);
        if (boundary.corpusChanged) {
          evaluator = createStudyEvaluator(study, db, options.evaluator);
          scratchEvaluator = createStudyEvaluator(study);
        }
        const round = lastRound + 1;
        const incumbentScore = await evaluateIncumbent('optimization', await repeatsOfIncumbent(round));
        if (stopping.target !== undefined && (incumbentScore.composite ?? 0) >= stopping.target) {
          return finish('target_reached', `optimization composite ${incumbentScore.composite?.toFixed(4)} ≥ target ${stopping.target}`);
        }
        openRound = { round, baseVersionId: incumbent.id, attempt: await countProposals(db, round) };
        await saveState(null);
      }
      const round = openRound!.round;
      const attempt = openRound!.attempt ?? 0;
      const roundBase = (await getVersion(db, openRound!.baseVersionId))!;
      // Everything the proposer and the dedupe read is derived from the notebook as it stood
      // when the round opened, so a resumed round proposes exactly what the original did.
      const prior = await loadPriorExperiments(db, round);
      const decidedThisRound = await loadRoundExperiments(db, round);
      const baseRepeats = incumbentRepeats(study, round - 1 - (await acceptedInRound(db, roundBase.id)));
      const baseOptimization = await evaluatePartition(evaluator, study, roundBase.text, 'optimization', options.signal, baseRepeats);

      // 2. propose
      const proposal = await askProposer({
        study,
        base: roundBase,
        baseOptimization,
        prior,
        round,
        attempt,
        signal: options.signal,
        evaluateOptimization: async (text) => {
          await yieldToEventLoop();
          return withArtifactOverride(text, () => scratchEvaluator.evaluate({ artifactText: text, partition: 'optimization', examples: study.partitions.optimization, repeats: study.gate.repeats }));
        },
      });
      const failed = answerFailed(proposal);
      const deduped = dedupeCandidates(proposal.candidates, prior, study.gate.minDeltaDistance);
      const idle = !failed && deduped.fresh.length === 0;
      await recordProposal(db, {
        runId, round, attempt, proposer: study.proposer.id,
        outcome: failed ? 'failed' : idle ? 'idle' : 'candidates',
        candidates: proposal.candidates.length,
        failures: proposal.failures,
        ...(proposal.usage !== undefined ? { usage: proposal.usage } : {}),
        now,
      });
      emit({
        type: 'round', round, candidates: proposal.candidates.length, failures: proposal.failures.length,
        repeats: proposal.repeats ?? 0, skipped: deduped.skipped.length, failureReasons: proposal.failures.map((failure) => failure.reason),
      });
      if (failed) {
        // One failed answer is one failure, however many candidates it meant to hold; the retry draws afresh.
        consecutiveFailures += 1;
        proposalAttempts += 1;
        proposalFailures += 1;
        openRound = null;
        await saveState(null);
        continue;
      }

      const record = async (input: { base: ArtifactVersion; hash: string; candidate: Candidate; decision: GateDecision; extraEvidence?: Record<string, unknown> }) => {
        const result = await recordExperiment(db, {
          ...input,
          change: changeOf(input.base.text, input.candidate.text),
          runId, round, proposer: study.proposer.id, fingerprint: evaluator.fingerprint, seed: study.seed, now,
          shadowIds: study.partitions.shadow.map((example) => example.id),
        });
        newExperiments += 1;
        return result;
      };

      // Skipped before anything is paid for; never "tried" for later rounds.
      for (const skipped of deduped.skipped) {
        if (decidedThisRound.has(skipped.candidate.delta)) continue;
        const { id } = await record({
          base: roundBase, hash: skipped.hash, candidate: skipped.candidate,
          decision: { accepted: false, reason: 'duplicate', checks: [{ name: 'diversity', passed: false, statistic: skipped.distance, threshold: study.gate.minDeltaDistance, detail: skipped.reason }], shadowConsulted: false },
        });
        emit({ type: 'decision', round, experimentId: id, delta: skipped.candidate.delta, decision: 'skipped', reason: 'duplicate', optimization: null });
      }
      if (idle) {
        idleRounds += 1;
        openRound = null;
        await saveState(null);
        emit({ type: 'round-end', round, accepted: 0, refused: 0, best: baseOptimization.composite, diversity: summarizeDistances(deduped.distances) });
        continue;
      }
      idleRounds = 0;

      // 3. screen (parallel explore)
      const screened = await screenCandidates(evaluator, study, deduped.fresh, options.signal);

      // 4. integrate (sequential): each survivor is gated against the incumbent as it stands now.
      let acceptedThisRound = [...decidedThisRound.values()].filter((row) => row.decision === 'accepted').length;
      let refusedThisRound = [...decidedThisRound.values()].filter((row) => row.decision === 'refused').length;
      let decidedAny = decidedThisRound.size > 0;
      for (const item of screened) {
        if (options.signal?.aborted) break;
        if (decidedThisRound.has(item.candidate.delta)) continue; // decided before a crash: never decide twice
        // Checked before deciding, not only after: a round resumed after a crash that followed its
        // last allowed decision must not decide one more.
        if (evaluatedCount >= study.stopping.maxExperiments) break;
        let text = item.text;
        let optimization = item.optimization;
        let anchor = item.anchor;
        const rebase = rebaseCandidate(item.candidate, roundBase, incumbent);
        if (rebase.kind === 'contained') {
          const { id } = await record({
            base: incumbent, hash: item.hash, candidate: item.candidate,
            decision: { accepted: false, reason: 'duplicate', checks: [{ name: 'diversity', passed: false, statistic: 0, threshold: study.gate.minDeltaDistance, detail: 'the incumbent already contains this change (merged earlier this round)' }], shadowConsulted: false },
          });
          emit({ type: 'decision', round, experimentId: id, delta: item.candidate.delta, decision: 'skipped', reason: 'duplicate', optimization: null, rebased: true });
          continue;
        }
        if (rebase.kind === 'rebased') {
          text = rebase.text;
          optimization = await evaluatePartition(evaluator, study, text, 'optimization', options.signal);
          anchor = await evaluatePartition(evaluator, study, text, 'anchor', options.signal);
        }
        const hash = contentHash(text);
        const rebaseEvidence = rebase.kind === 'rebased' ? { rebased: { method: rebase.method, conflicts: rebase.conflicts, proposedHash: item.hash } } : {};
        const failure = evaluationFailure([optimization, anchor]);
        let decision: GateDecision;
        let extraEvidence: Record<string, unknown> = rebaseEvidence;
        if (failure !== undefined) {
          decision = failure;
        } else {
          const repeats = await repeatsOfIncumbent(round);
          await evaluateIncumbent('optimization', repeats);
          await evaluateIncumbent('anchor', repeats);
          const gated = await gateCandidate({ evaluator, study, incumbent, incumbentRepeats: repeats, text, optimization, anchor, calibration, ...(options.signal !== undefined ? { signal: options.signal } : {}) });
          decision = gated.decision;
          extraEvidence = { ...rebaseEvidence, scores: gated.scores };
        }
        const result = await record({ base: incumbent, hash, candidate: { ...item.candidate, text }, decision, extraEvidence });
        if (result.accepted !== undefined) incumbent = result.accepted;
        evaluatedCount += 1;
        proposalAttempts += 1;
        decidedAny = true;
        if (decision.accepted) acceptedThisRound += 1;
        else refusedThisRound += 1;
        if (!decision.accepted && decision.reason === 'evaluation_failed') {
          consecutiveFailures += 1;
          proposalFailures += 1;
        } else consecutiveFailures = 0;
        emit({
          type: 'decision', round, experimentId: result.id, delta: item.candidate.delta,
          decision: decision.accepted ? 'accepted' : 'refused', reason: decision.accepted ? 'accepted' : decision.reason,
          optimization: optimization.composite, ...(rebase.kind === 'rebased' ? { rebased: true } : {}),
        });
        if (evaluatedCount >= study.stopping.maxExperiments) break;
      }
      if (options.signal?.aborted) return finish('interrupted', 'interrupted by the user; the next run continues from here');
      if (decidedAny) plateau = acceptedThisRound > 0 ? 0 : plateau + 1;
      openRound = null;
      await saveState(null);
      const best = await evaluatePartition(evaluator, study, incumbent.text, 'optimization', options.signal, await repeatsOfIncumbent(round));
      emit({ type: 'round-end', round, accepted: acceptedThisRound, refused: refusedThisRound, best: best.composite, diversity: summarizeDistances(deduped.distances) });
    }
  } catch (error) {
    if (isAbort(error, options.signal)) return finish('interrupted', 'interrupted by the user; the next run continues from here');
    if (isBudgetError(error)) return finish('budget', (error as Error).message);
    if (isInfrastructureError(error)) return finish('infrastructure_failure', (error as Error).message);
    throw error;
  }
}

function summarizeDistances(distances: readonly number[]): { mean: number | null; min: number | null } {
  return {
    mean: distances.length === 0 ? null : distances.reduce((sum, value) => sum + value, 0) / distances.length,
    min: distances.length === 0 ? null : Math.min(...distances),
  };
}

function isInfrastructureError(error: unknown): boolean {
  return error instanceof InfrastructureError || (error instanceof Error && error.name === 'InfrastructureError');
}

function isBudgetError(error: unknown): boolean {
  return error instanceof KloopError && error.code === 'budget';
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && (error === signal.reason || (error instanceof Error && error.name === 'AbortError'));
}
