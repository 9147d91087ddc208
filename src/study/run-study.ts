/**
 * The loop: seed → propose → evaluate (parallel explore) → gate (sequential
 * integrate) → record → repeat → stop.
 *
 * Orchestration is split by phase: propose (the proposer), screen (concurrent
 * evaluation of every candidate on the optimization and anchor partitions),
 * integrate (candidates gated one at a time against the incumbent as it stands
 * after the previous merge), record (one transaction per decision).
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionName } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import { createEvaluator, mapWithConcurrency } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration, GateDecision, RefusalReason } from '../gate/gate.ts';
import { NO_CALIBRATION, decide } from '../gate/gate.ts';
import type { Candidate, HistoryEntry } from '../proposers/proposer.ts';
import { bigramJaccardDistance, createSeededRandom } from '../stats/index.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { getRegistryVersion, getVersion, putVersion, setRegistryVersion, withArtifactOverride } from '../storage/registry.ts';
import { InfrastructureError, KloopError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { BoundaryPlan } from '../corpus/lifecycle.ts';
import { recordShadowExposure } from '../corpus/lifecycle-store.ts';
import { corpusBoundary, startCorpusLifecycle } from './corpus-lifecycle.ts';
import { readStudyState, writeStudyState } from './study-state.ts';

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

/** Progress events printed by the CLI. */
export type RunEvent =
  | { type: 'start'; runId: number; fingerprint: string; experiments: number; incumbent: number }
  | { type: 'baseline'; scores: Record<PartitionName, number | null> }
  | { type: 'round'; round: number; candidates: number; failures: number }
  | { type: 'decision'; round: number; experimentId: number; delta: string; decision: 'accepted' | 'refused' | 'skipped'; reason: string; optimization: number | null }
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
}

export interface RunOutcome {
  runId: number;
  stopReason: StopReason;
  stopDetail: string;
  /** Experiments evaluated and decided in this run. */
  newExperiments: number;
  fingerprint: string;
}

interface ScreenedCandidate {
  candidate: Candidate;
  text: string;
  hash: string;
  optimization: PartitionScore;
  anchor: PartitionScore;
}

/** Evaluates one artifact on a named partition of the study. */
export function evaluatePartition(
  evaluator: Evaluator,
  study: LoadedStudy,
  artifactText: string,
  partition: PartitionName,
  signal?: AbortSignal,
): Promise<PartitionScore> {
  return withArtifactOverride(artifactText, async () => {
    // Let timers and signal handlers (Ctrl-C) run between evaluations: the offline executor never yields.
    await yieldToEventLoop();
    return evaluator.evaluate({
      artifactText,
      partition,
      examples: study.partitions[partition],
      repeats: study.gate.repeats,
      ...(signal !== undefined ? { signal } : {}),
    });
  });
}

/** Resolves after pending timers, I/O and signal handlers have had their turn. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Creates the study's frozen evaluator (stored results in `db`). */
export function createStudyEvaluator(study: LoadedStudy, db?: StudyDatabase): Evaluator {
  return createEvaluator({
    executor: study.executor,
    corpus: study.corpus,
    weights: study.weights,
    concurrency: study.concurrency * 2,
    ...(db !== undefined ? { db } : {}),
  });
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

/**
 * Runs (or continues) the study until a stopping criterion holds.
 * Every decision is written in its own transaction as it is made.
 */
export async function runStudy(options: RunOptions): Promise<RunOutcome> {
  const { study, db } = options;
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => undefined);
  const calibration = options.calibration ?? NO_CALIBRATION;
  // The corpus lifecycle: partitions (and admitted examples) as recorded; initialised from the files on the first run.
  const corpusStart = await startCorpusLifecycle(db, study, now);
  if (corpusStart.moves.length > 0) options.onCorpusChange?.({ kind: 'start', message: `corpus: ${corpusStart.moves.length} lifecycle move(s) recorded at the start (${[...new Set(corpusStart.moves.map((move) => move.kind))].join(', ')})` });
  let evaluator = createStudyEvaluator(study, db);
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
  let proposalAttempts = carryOver ? initialState.proposalAttempts ?? 0 : 0;
  let proposalFailures = carryOver ? initialState.proposalFailures ?? 0 : 0;
  // A round a crash left open is finished first, exactly as it would have gone.
  let openRound = carryOver ? initialState.openRound ?? null : null;
  let newExperiments = 0;
  let incumbent = (await getRegistryVersion(db))!;
  const saveState = (lastStopReason: string | null): Promise<void> =>
    writeStudyState(db, { plateauRounds: plateau, consecutiveFailures, proposalAttempts, proposalFailures, lastStopReason, openRound });

  emit({ type: 'start', runId, fingerprint: evaluator.fingerprint, experiments: await countEvaluated(db), incumbent: incumbent.id });

  const finish = async (reason: StopReason, detail: string): Promise<RunOutcome> => {
    await saveState(reason);
    await db.updateTable('runs').set({ ended_at: isoNow(now), stop_reason: reason }).where('id', '=', runId).execute();
    emit({ type: 'stop', reason, detail });
    return { runId, stopReason: reason, stopDetail: detail, newExperiments, fingerprint: evaluator.fingerprint };
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
        if (consecutiveFailures >= stopping.maxConsecutiveFailures) return finish('consecutive_failures', `${consecutiveFailures} consecutive failed proposals or evaluations`);
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
          evaluator = createStudyEvaluator(study, db);
          scratchEvaluator = createStudyEvaluator(study);
        }
        const incumbentScore = await evaluatePartition(evaluator, study, incumbent.text, 'optimization', options.signal);
        if (stopping.target !== undefined && (incumbentScore.composite ?? 0) >= stopping.target) {
          return finish('target_reached', `optimization composite ${incumbentScore.composite?.toFixed(4)} ≥ target ${stopping.target}`);
        }
        openRound = { round: lastRound + 1, baseVersionId: incumbent.id };
        await saveState(null);
      }
      const round = openRound!.round;
      const roundBase = (await getVersion(db, openRound!.baseVersionId))!;
      // Everything the proposer and the dedupe read is derived from the notebook as it stood
      // when the round opened, so a resumed round proposes exactly what the original did.
      const prior = await loadPriorExperiments(db, round);
      const triedHashes = prior.triedHashes;
      const pastDeltas = prior.deltas;
      const decidedThisRound = await loadRoundExperiments(db, round);

      const baseOptimization = await evaluatePartition(evaluator, study, roundBase.text, 'optimization', options.signal);
      let proposal;
      try {
        proposal = await study.proposer.propose({
          incumbentText: roundBase.text,
          instructions: study.instructions,
          constraints: study.constraintsText,
          limits: { editableSections: study.constraints.editableSections, maxArtifactCharacters: study.constraints.maxArtifactCharacters },
          examples: study.partitions.optimization,
          incumbentScores: baseOptimization,
          evaluateOptimization: async (text) => {
            await yieldToEventLoop();
            return withArtifactOverride(text, () =>
              scratchEvaluator.evaluate({ artifactText: text, partition: 'optimization', examples: study.partitions.optimization, repeats: study.gate.repeats }),
            );
          },
          history: prior.history,
          triedHashes,
          maxCandidates: study.candidatesPerRound,
          random: createSeededRandom(study.seed * 7919 + round),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
        });
      } catch (error) {
        if (isBudgetError(error) || isInfrastructureError(error) || isAbort(error, options.signal)) throw error;
        consecutiveFailures += 1;
        proposalAttempts += 1;
        proposalFailures += 1;
        openRound = null;
        await saveState(null);
        emit({ type: 'round', round, candidates: 0, failures: 1 });
        continue;
      }
      consecutiveFailures = proposal.candidates.length === 0 && proposal.failures.length > 0 ? consecutiveFailures + proposal.failures.length : 0;
      proposalAttempts += proposal.candidates.length + proposal.failures.length;
      proposalFailures += proposal.failures.length;
      emit({ type: 'round', round, candidates: proposal.candidates.length, failures: proposal.failures.length });
      if (proposal.candidates.length === 0) {
        openRound = null;
        await saveState(null);
        if (proposal.failures.length > 0) continue;
        return finish('no_new_proposals', 'the proposer found no untried edit that helps the optimization partition');
      }

      const record = async (input: Omit<RecordInput, 'runId' | 'round' | 'proposer' | 'fingerprint' | 'seed' | 'now' | 'shadowIds'>): Promise<number> => {
        const id = await recordExperiment(db, { ...input, runId, round, proposer: study.proposer.id, fingerprint: evaluator.fingerprint, seed: study.seed, now, shadowIds: study.partitions.shadow.map((example) => example.id) });
        newExperiments += 1;
        return id;
      };

      // Dedupe and diversity, before anything is paid for.
      const fresh: Candidate[] = [];
      const roundDistances: number[] = [];
      for (const candidate of proposal.candidates) {
        const hash = contentHash(candidate.text);
        const nearest = pastDeltas.length === 0 ? 1 : Math.min(...pastDeltas.map((delta) => bigramJaccardDistance(delta, candidate.delta)));
        roundDistances.push(nearest);
        const duplicateReason = triedHashes.has(hash)
          ? 'same content as an artifact already tried'
          : nearest < study.gate.minDeltaDistance
            ? `delta too close to an earlier one (bigram Jaccard distance ${nearest.toFixed(3)} < ${study.gate.minDeltaDistance})`
            : undefined;
        triedHashes.add(hash);
        pastDeltas.push(candidate.delta);
        if (duplicateReason !== undefined) {
          if (!decidedThisRound.has(candidate.delta)) {
            const id = await record({
              base: roundBase, hash, candidate,
              decision: { accepted: false, reason: 'duplicate', checks: [{ name: 'diversity', passed: false, statistic: nearest, threshold: study.gate.minDeltaDistance, detail: duplicateReason }], shadowConsulted: false },
            });
            emit({ type: 'decision', round, experimentId: id, delta: candidate.delta, decision: 'skipped', reason: 'duplicate', optimization: null });
          }
          continue;
        }
        fresh.push(candidate);
      }

      // Parallel explore: screen every fresh candidate on optimization and anchor.
      const screened: ScreenedCandidate[] = [];
      await mapWithConcurrency(fresh, study.concurrency, async (candidate) => {
        const optimization = await evaluatePartition(evaluator, study, candidate.text, 'optimization', options.signal);
        const anchor = await evaluatePartition(evaluator, study, candidate.text, 'anchor', options.signal);
        screened.push({ candidate, text: candidate.text, hash: contentHash(candidate.text), optimization, anchor });
      });
      screened.sort((left, right) => (right.optimization.composite ?? -1) - (left.optimization.composite ?? -1) || left.hash.localeCompare(right.hash));

      // Sequential integrate: each survivor is gated against the incumbent as it stands now.
      let acceptedThisRound = [...decidedThisRound.values()].filter((row) => row.decision === 'accepted').length;
      let refusedThisRound = [...decidedThisRound.values()].filter((row) => row.decision === 'refused').length;
      for (const item of screened) {
        if (options.signal?.aborted) break;
        const earlier = decidedThisRound.get(item.candidate.delta);
        if (earlier !== undefined) {
          triedHashes.add(earlier.candidate_hash); // decided before a crash: keep its trace, never decide twice
          continue;
        }
        // Checked before deciding, not only after: a round resumed after a crash that followed its
        // last allowed decision must not decide one more.
        if (evaluatedCount >= study.stopping.maxExperiments) break;
        let text = item.text;
        let optimization = item.optimization;
        let anchor = item.anchor;
        if (incumbent.id !== roundBase.id) {
          const rebased = item.candidate.rebase?.(incumbent.text) ?? null;
          if (rebased === null || triedHashes.has(contentHash(rebased))) {
            const id = await record({
              base: incumbent, hash: item.hash, candidate: item.candidate,
              decision: { accepted: false, reason: 'duplicate', checks: [{ name: 'diversity', passed: false, statistic: null, threshold: null, detail: 'the edit no longer applies to, or changes nothing in, the incumbent after an earlier merge this round' }], shadowConsulted: false },
            });
            emit({ type: 'decision', round, experimentId: id, delta: item.candidate.delta, decision: 'skipped', reason: 'duplicate', optimization: null });
            continue;
          }
          text = rebased;
          triedHashes.add(contentHash(text));
          optimization = await evaluatePartition(evaluator, study, text, 'optimization', options.signal);
          anchor = await evaluatePartition(evaluator, study, text, 'anchor', options.signal);
        }
        const currentIncumbent = incumbent;
        const incumbentAnchor = await evaluatePartition(evaluator, study, currentIncumbent.text, 'anchor', options.signal);
        const incumbentOptimization = await evaluatePartition(evaluator, study, currentIncumbent.text, 'optimization', options.signal);
        const decision: GateDecision = await decide(
          {
            constraints: study.constraints.check(currentIncumbent.text, text),
            optimization: { incumbent: incumbentOptimization, candidate: optimization },
            anchor: { incumbent: incumbentAnchor, candidate: anchor },
            evaluateShadow: async () => ({
              incumbent: await evaluatePartition(evaluator, study, currentIncumbent.text, 'shadow', options.signal),
              candidate: await evaluatePartition(evaluator, study, text, 'shadow', options.signal),
            }),
            calibration,
            stochastic: !study.executor.deterministic,
          },
          study.gate,
        );
        const experimentId = await record({
          base: currentIncumbent, hash: contentHash(text), candidate: { ...item.candidate, text }, decision,
          onAccepted: async (version) => {
            incumbent = version;
          },
        });
        evaluatedCount += 1;
        if (decision.accepted) acceptedThisRound += 1;
        else refusedThisRound += 1;
        if (!decision.accepted && decision.reason === 'evaluation_failed') proposalFailures += 1;
        emit({
          type: 'decision', round, experimentId, delta: item.candidate.delta,
          decision: decision.accepted ? 'accepted' : 'refused', reason: decision.accepted ? 'accepted' : decision.reason,
          optimization: optimization.composite,
        });
        if (evaluatedCount >= study.stopping.maxExperiments) break;
      }
      if (options.signal?.aborted) return finish('interrupted', 'interrupted by the user; the next run continues from here');
      plateau = acceptedThisRound > 0 ? 0 : plateau + 1;
      openRound = null;
      await saveState(null);
      const best = await evaluatePartition(evaluator, study, incumbent.text, 'optimization', options.signal);
      emit({
        type: 'round-end', round, accepted: acceptedThisRound, refused: refusedThisRound, best: best.composite,
        diversity: {
          mean: roundDistances.length === 0 ? null : roundDistances.reduce((sum, value) => sum + value, 0) / roundDistances.length,
          min: roundDistances.length === 0 ? null : Math.min(...roundDistances),
        },
      });
    }
  } catch (error) {
    if (isAbort(error, options.signal)) return finish('interrupted', 'interrupted by the user; the next run continues from here');
    if (isBudgetError(error)) return finish('budget', (error as Error).message);
    if (isInfrastructureError(error)) return finish('infrastructure_failure', (error as Error).message);
    throw error;
  }
}

/** Experiments evaluated and decided (duplicates skipped before evaluation do not count). */
async function countEvaluated(db: StudyDatabase): Promise<number> {
  const row = await db.selectFrom('experiments').select((eb) => eb.fn.countAll<number>().as('count')).where('decision', '!=', 'skipped').executeTakeFirstOrThrow();
  return Number(row.count);
}

async function maxRound(db: StudyDatabase): Promise<number> {
  const row = await db.selectFrom('experiments').select((eb) => eb.fn.max<number>('round').as('round')).executeTakeFirst();
  return Number(row?.round ?? 0);
}

/** The notebook as it stood when `round` opened: history, deltas and every hash tried before. */
async function loadPriorExperiments(db: StudyDatabase, round: number): Promise<{ history: HistoryEntry[]; deltas: string[]; triedHashes: Set<string> }> {
  const rows = await db.selectFrom('experiments').select(['candidate_hash', 'delta', 'decision', 'reason']).where('round', '<', round).orderBy('id').execute();
  const versions = await db
    .selectFrom('artifact_versions')
    .leftJoin('experiments', 'experiments.id', 'artifact_versions.experiment_id')
    .select(['artifact_versions.hash as hash', 'experiments.round as round'])
    .execute();
  const triedHashes = new Set(rows.map((row) => row.candidate_hash));
  for (const version of versions) if (version.round === null || version.round < round) triedHashes.add(version.hash);
  return {
    history: rows.map((row) => ({ delta: row.delta, decision: row.decision as HistoryEntry['decision'], reason: row.reason })),
    deltas: rows.map((row) => row.delta),
    triedHashes,
  };
}

/** Experiments already recorded in `round` (a round a crash interrupted), by delta. */
async function loadRoundExperiments(db: StudyDatabase, round: number): Promise<Map<string, { decision: string; candidate_hash: string }>> {
  const rows = await db.selectFrom('experiments').select(['delta', 'decision', 'candidate_hash']).where('round', '=', round).orderBy('id').execute();
  return new Map(rows.map((row) => [row.delta, row]));
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

interface RecordInput {
  runId: number;
  round: number;
  proposer: string;
  base: ArtifactVersion;
  hash: string;
  candidate: Candidate;
  decision: GateDecision;
  fingerprint: string;
  seed: number;
  now: () => Date;
  /** The shadow examples of this decision: each gains one exposure when the gate consulted shadow. */
  shadowIds: readonly string[];
  onAccepted?: (version: ArtifactVersion) => Promise<void>;
}

/**
 * Records one experiment and, when accepted, the new version and the registry
 * move, all in one transaction. Returns the experiment id.
 */
async function recordExperiment(db: StudyDatabase, input: RecordInput): Promise<number> {
  let accepted: ArtifactVersion | undefined;
  const id = await db.transaction().execute(async (transaction) => {
    const reason: string = input.decision.accepted ? 'accepted' : (input.decision.reason as RefusalReason);
    const decisionName = input.decision.accepted ? 'accepted' : reason === 'duplicate' ? 'skipped' : 'refused';
    const inserted = await transaction
      .insertInto('experiments')
      .values({
        run_id: input.runId,
        round: input.round,
        proposer: input.proposer,
        base_version_id: input.base.id,
        candidate_hash: input.hash,
        delta: input.candidate.delta,
        rationale: input.candidate.rationale,
        decision: decisionName,
        reason,
        evidence: JSON.stringify({ checks: input.decision.checks, shadowConsulted: input.decision.shadowConsulted }),
        accepted_version_id: null,
        fingerprint: input.fingerprint,
        seed: input.seed,
        created_at: isoNow(input.now),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (input.decision.shadowConsulted) await recordShadowExposure(transaction, input.shadowIds, input.now);
    if (input.decision.accepted) {
      accepted = await putVersion(transaction, input.candidate.text, 'accepted', input.base.id, inserted.id, input.now);
      await transaction.updateTable('experiments').set({ accepted_version_id: accepted.id }).where('id', '=', inserted.id).execute();
      await setRegistryVersion(transaction, accepted.id, `experiment ${inserted.id} accepted`, 'active', input.now);
    }
    return inserted.id;
  });
  if (accepted !== undefined) await input.onAccepted?.(accepted);
  return id;
}
