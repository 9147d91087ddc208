/**
 * What `kloop history` and `kloop show` read of a study's notebook beside
 * the experiment scores and the registry (read by their own modules): one
 * experiment as stored, the stop of every run, and the failed proposer
 * answers.
 */
import type { StudyDatabase } from '../study-database.ts';

/** One experiment as stored; `evidence` is the gate's evidence as JSON text (parsed by its reader). */
export interface StoredExperiment {
  id: number;
  runId: number;
  round: number;
  proposer: string;
  baseVersionId: number;
  candidateHash: string;
  delta: string;
  rationale: string;
  /** `accepted`, `refused` or `skipped`. */
  decision: string;
  /** `accepted`, or the refusal or skip reason code. */
  reason: string;
  /** JSON text of the gate's evidence. */
  evidence: string;
  acceptedVersionId: number | null;
  fingerprint: string;
  seed: number;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** A run's stop as stored: times ISO 8601 UTC (null while open); `stopDetail` from its stored report (null without one, or one that does not parse). */
export interface StoredRunStop {
  id: number;
  startedAt: string;
  endedAt: string | null;
  stopReason: string | null;
  stopDetail: string | null;
}

/** A failed proposer answer: its first failure's code, reason and raw answer (capped), with the call's usage. */
export interface StoredProposalFailure {
  id: number;
  run: number;
  round: number;
  attempt: number;
  proposer: string;
  /** The first failure's code (`unusable` when none was recorded). */
  code: string;
  reason: string;
  /** The raw answer, or null when the call itself failed. */
  raw: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  createdAt: string;
}

/** The functions of this module, without their database argument (for the notebook interface). */
export interface HistoryQueriesStore {
  readExperiment(id: number): Promise<StoredExperiment | undefined>;
  listRunStops(): Promise<StoredRunStop[]>;
  listProposalFailures(id?: number): Promise<StoredProposalFailure[]>;
}

/** Experiment `id` as stored, or undefined when there is none. */
export async function readExperiment(db: StudyDatabase, id: number): Promise<StoredExperiment | undefined> {
  const row = await db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    runId: row.run_id,
    round: row.round,
    proposer: row.proposer,
    baseVersionId: row.base_version_id,
    candidateHash: row.candidate_hash,
    delta: row.delta,
    rationale: row.rationale,
    decision: row.decision,
    reason: row.reason,
    evidence: row.evidence,
    acceptedVersionId: row.accepted_version_id,
    fingerprint: row.fingerprint,
    seed: row.seed,
    createdAt: row.created_at,
  };
}

/** Every run's stop, by id. */
export async function listRunStops(db: StudyDatabase): Promise<StoredRunStop[]> {
  const rows = await db
    .selectFrom('runs')
    .select(['id', 'started_at', 'ended_at', 'stop_reason', 'report'])
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    stopReason: row.stop_reason,
    stopDetail: stopDetailOf(row.report),
  }));
}

/** The `stopDetail` of a stored report; null for none, or a report that does not parse. */
function stopDetailOf(report: string | null): string | null {
  try {
    const parsed = JSON.parse(report ?? 'null') as { stopDetail?: unknown } | null;
    return typeof parsed?.stopDetail === 'string' ? parsed.stopDetail : null;
  } catch {
    return null;
  }
}

/**
 * The failed proposer answers (outcome `failed`), by id; only answer `id`
 * when given. The `proposals` table must exist (a notebook written before
 * proposer calls were recorded, opened read-only, has none: check first).
 */
export async function listProposalFailures(db: StudyDatabase, id?: number): Promise<StoredProposalFailure[]> {
  let query = db.selectFrom('proposals').selectAll().where('outcome', '=', 'failed');
  if (id !== undefined) query = query.where('id', '=', id);
  const rows = await query.orderBy('id').execute();
  return rows.map((row) => {
    const first = (JSON.parse(row.failures) as Array<{ code?: string; reason?: string; raw?: string }>)[0] ?? {};
    return {
      id: row.id,
      run: row.run_id,
      round: row.round,
      attempt: row.attempt,
      proposer: row.proposer,
      code: first.code ?? 'unusable',
      reason: first.reason ?? '',
      raw: first.raw ?? null,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      costUsd: row.cost_usd,
      createdAt: row.created_at,
    };
  });
}
