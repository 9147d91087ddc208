/**
 * The loop's reads and writes of the lab notebook: experiments (one per
 * candidate, append-only), proposer calls, and what the proposer and the
 * dedupe may read of earlier rounds, in the loop's terms, over the notebook's
 * stores (src/storage/notebook/, which hold the SQL). Every write is one
 * transaction. Stored evidence is parsed with src/gate/evidence-schema.ts:
 * malformed evidence is an error naming the experiment, never a default.
 */
import type { GateDecision, RefusalReason } from '../gate/gate.ts';
import { parseStoredEvidence, type StoredEvidence } from '../gate/evidence-schema.ts';
import type { Candidate, HistoryEntry, ProposalFailure } from '../proposers/proposer.ts';
import type { JudgedExperiment } from './retrials.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import type { ArtifactVersion } from '../storage/registry.ts';

/** Experiments evaluated and decided (candidates skipped before evaluation do not count). */
export async function countEvaluated(notebook: Notebook): Promise<number> {
  return notebook.countEvaluatedExperiments();
}

/** The highest round that recorded an experiment (0 before the first). */
export async function maxRound(notebook: Notebook): Promise<number> {
  return notebook.maxExperimentRound();
}

/** Proposer calls recorded for `round` so far: the next call's attempt number. */
export async function countProposals(notebook: Notebook, round: number): Promise<number> {
  return notebook.countProposals(round);
}

/** What the proposer and the dedupe read of the rounds before `round`. */
export interface PriorExperiments {
  /** Every earlier experiment; a refusal that consulted the shadow shows only as `refused` (the gate's yes/no). */
  history: HistoryEntry[];
  /** Deltas of the candidates that were evaluated (skipped ones were never tried). */
  deltas: string[];
  /**
   * The evaluated experiments with the incumbent each was judged on (the
   * re-trial rule, src/loop/retrials.ts); absent: every delta counts as
   * judged on the incumbent of now (no re-trials).
   */
  judged?: JudgedExperiment[];
  /**
   * Content hashes of every artifact evaluated before, of every stored
   * version, and of every candidate whose evaluation failed
   * {@link MAX_EVALUATION_FAILURES} times.
   */
  triedHashes: Set<string>;
  /**
   * Candidates refused `evaluation_failed` before, by content hash: how many
   * times, and the last failure's detail (the server's error). A candidate
   * that failed once is evaluated again when proposed again; one that failed
   * {@link MAX_EVALUATION_FAILURES} times is skipped.
   */
  failedEvaluations: Map<string, { count: number; detail: string }>;
}

/**
 * How many times a candidate (a content hash) is evaluated when every
 * evaluation fails in the infrastructure: a failure is not an outcome of the
 * candidate (a server's bad minute), so it is tried once more when proposed
 * again, in this run or a later one; after the second failure it is skipped
 * (recorded as `skipped`, reason `evaluation_failed`) and never paid for
 * again, so a candidate the server always fails on cannot stop a study run
 * after run.
 */
export const MAX_EVALUATION_FAILURES = 2;

/**
 * The notebook as it stood when `round` opened. Built from rounds before it
 * only, so a resumed round proposes and dedupes exactly as the original did.
 */
export async function loadPriorExperiments(notebook: Notebook, round: number): Promise<PriorExperiments> {
  const rows = await notebook.readExperimentsBefore(round);
  const versions = await notebook.readVersionRounds();
  // Malformed evidence is an error naming the experiment and the field (src/gate/evidence-schema.ts), never a default.
  const evidence = new Map(rows.map((row) => [row.id, parseStoredEvidence(row.evidence, row.id)]));
  // A skipped candidate was never evaluated: it is not "tried". A failed evaluation was not judged either.
  const evaluated = rows.filter((row) => row.decision !== 'skipped' && row.reason !== 'evaluation_failed');
  const triedHashes = new Set(evaluated.map((row) => row.candidateHash));
  for (const version of versions) if (version.round === null || version.round < round) triedHashes.add(version.hash);
  const failedEvaluations = new Map<string, { count: number; detail: string }>();
  for (const row of rows) {
    if (row.decision !== 'refused' || row.reason !== 'evaluation_failed') continue;
    failedEvaluations.set(row.candidateHash, {
      count: (failedEvaluations.get(row.candidateHash)?.count ?? 0) + 1,
      detail: evaluationFailureDetail(evidence.get(row.id)!),
    });
  }
  for (const [hash, failure] of failedEvaluations) if (failure.count >= MAX_EVALUATION_FAILURES) triedHashes.add(hash);
  return {
    history: rows.map((row) => ({
      delta: row.delta,
      decision: row.decision as HistoryEntry['decision'],
      reason: row.decision === 'refused' && evidence.get(row.id)!.shadowConsulted ? 'refused' : row.reason,
      ...optimizationScoreOf(evidence.get(row.id)!),
    })),
    deltas: evaluated.map((row) => row.delta),
    judged: evaluated.map((row) => ({
      id: row.id,
      delta: row.delta,
      baseVersionId: row.baseVersionId,
      decision: row.decision === 'accepted' ? 'accepted' : 'refused',
      reason: row.reason,
    })),
    triedHashes,
    failedEvaluations,
  };
}

/** The detail of an `evaluation_failed` refusal's evaluation check ('' when it has none). */
function evaluationFailureDetail(evidence: StoredEvidence): string {
  return evidence.checks.find((check) => check.name === 'evaluation')?.detail ?? '';
}

/** The candidate's optimization composite stored with the decision (`scores.optimization.candidate`), when there is one. */
function optimizationScoreOf(evidence: StoredEvidence): { optimizationScore?: number } {
  const score = evidence.scores?.optimization?.candidate;
  return typeof score === 'number' && Number.isFinite(score) ? { optimizationScore: score } : {};
}

/** An experiment already recorded in a round (a round a crash interrupted). */
export interface RoundExperiment {
  decision: string;
  candidate_hash: string;
}

/**
 * Experiments already recorded in `round` (a round a crash interrupted), by
 * the identity of the candidate they decided (src/loop/candidate-id.ts). A
 * row older than migration 0008 has no identity: it is keyed
 * `delta:<its delta>` ({@link legacyDecisionKey}).
 */
export async function loadRoundExperiments(notebook: Notebook, round: number): Promise<Map<string, RoundExperiment>> {
  const rows = await notebook.readRoundExperiments(round);
  return new Map(
    rows.map((row) => [
      row.candidateId ?? legacyDecisionKey(row.delta),
      { decision: row.decision, candidate_hash: row.candidateHash },
    ]),
  );
}

/** The key of a decided experiment recorded without a candidate identity (before migration 0008). */
export function legacyDecisionKey(delta: string): string {
  return `delta:${delta}`;
}

/** One proposer call as recorded. */
export interface ProposalRecord {
  runId: number;
  round: number;
  attempt: number;
  proposer: string;
  outcome: 'candidates' | 'failed' | 'idle';
  candidates: number;
  failures: readonly ProposalFailure[];
  usage?: { inputTokens: number; outputTokens: number; costUsd: number };
  /** The identities of the call's candidates, in the proposer's order (src/loop/candidate-id.ts). */
  candidateIds?: readonly string[];
  now: () => Date;
}

/** Records a proposer call, once per (round, attempt): a resumed round does not record its call twice. */
export async function recordProposal(notebook: Notebook, record: ProposalRecord): Promise<void> {
  await notebook.insertProposalOnce({
    runId: record.runId,
    round: record.round,
    attempt: record.attempt,
    proposer: record.proposer,
    outcome: record.outcome,
    candidates: record.candidates,
    failures: JSON.stringify(
      record.failures.map((failure) => ({
        code: failure.code ?? 'unusable',
        scope: failure.scope ?? 'answer',
        reason: failure.reason,
        ...(failure.raw !== undefined ? { raw: failure.raw } : {}),
      })),
    ),
    inputTokens: record.usage?.inputTokens ?? 0,
    outputTokens: record.usage?.outputTokens ?? 0,
    costUsd: record.usage?.costUsd ?? 0,
    createdAt: record.now().toISOString(),
    candidateIds:
      record.candidateIds !== undefined && record.candidateIds.length > 0 ? JSON.stringify(record.candidateIds) : null,
  });
}

/** One experiment to record. */
export interface ExperimentRecord {
  runId: number;
  round: number;
  proposer: string;
  base: ArtifactVersion;
  hash: string;
  candidate: Candidate;
  /** The identity of the proposed candidate (src/loop/candidate-id.ts): what a resumed round finds its decision by. */
  candidateId: string;
  /** The lines the candidate adds and removes against its base. */
  change: string;
  decision: GateDecision;
  /**
   * True for a candidate dropped before evaluation (decision `skipped`): a
   * `duplicate` always is; an `evaluation_failed` one is skipped when it
   * failed too often before, refused when its own evaluation failed.
   */
  skipped?: boolean;
  /** Evidence beyond the checks (scores, usage, rebase), stored with them. */
  extraEvidence?: Record<string, unknown>;
  fingerprint: string;
  seed: number;
  now: () => Date;
  /** The shadow examples of this decision: each gains one exposure when the gate consulted shadow. */
  shadowIds: readonly string[];
}

/**
 * Records one experiment and, when accepted, the new version and the registry
 * move, all in one transaction. Returns the experiment id and the accepted
 * version (if any).
 */
export async function recordExperiment(
  notebook: Notebook,
  input: ExperimentRecord,
): Promise<{ id: number; accepted?: ArtifactVersion }> {
  const reason: string = input.decision.accepted ? 'accepted' : (input.decision.reason as RefusalReason);
  const decisionName = input.decision.accepted
    ? 'accepted'
    : reason === 'duplicate' || input.skipped === true
      ? 'skipped'
      : 'refused';
  return notebook.insertExperiment(
    {
      runId: input.runId,
      round: input.round,
      proposer: input.proposer,
      baseVersionId: input.base.id,
      candidateHash: input.hash,
      delta: input.candidate.delta,
      rationale: input.candidate.rationale,
      decision: decisionName,
      reason,
      evidence: JSON.stringify({
        checks: input.decision.checks,
        shadowConsulted: input.decision.shadowConsulted,
        ...(input.extraEvidence ?? {}),
      }),
      fingerprint: input.fingerprint,
      seed: input.seed,
      createdAt: input.now().toISOString(),
      change: input.change,
      candidateId: input.candidateId,
    },
    {
      ...(input.decision.shadowConsulted ? { shadowIds: input.shadowIds } : {}),
      ...(input.decision.accepted ? { acceptedText: input.candidate.text } : {}),
      now: input.now,
    },
  );
}

/** The round in which `versionId` was accepted (0 for a version no experiment accepted: the seed, an approved or imported one). */
export async function acceptedInRound(notebook: Notebook, versionId: number): Promise<number> {
  return notebook.roundAcceptingVersion(versionId);
}
