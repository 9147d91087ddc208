/**
 * The notebook's Loop A records: the `loop_a_runs` and `loop_a_decisions`
 * tables (src/storage/schema.ts), and the reads of the Loop B notebook a
 * Loop A run proposes from (`experiments`, `artifact_versions`). Loop A
 * itself (src/loop-a/) calls these and never issues SQL.
 *
 * Rows cross this boundary in storage-level shapes (camelCase fields, JSON
 * columns given as values and serialised here with `JSON.stringify`); the
 * caller converts them to its domain types.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/** A Loop A run as stored (`loop_a_runs`). */
export interface LoopARunRow {
  id: number;
  /** ISO 8601 UTC. */
  startedAt: string;
  /** ISO 8601 UTC; null while the run is going (or after a crash). */
  endedAt: string | null;
  /** `'running' | 'done' | 'interrupted' | 'failed'`. */
  status: string;
  /** The registry version the candidates were derived from. */
  incumbentVersionId: number;
}

/** The end of a Loop A run, as {@link closeLoopARun} stores it. */
export interface LoopARunEnd {
  /** ISO 8601 UTC. */
  endedAt: string;
  /** `'done' | 'interrupted' | 'failed'`. */
  status: string;
  /** The run's report; stored as its `JSON.stringify`. */
  report: unknown;
}

/** One Loop A decision as {@link recordLoopADecision} stores it (`loop_a_decisions`, append-only). */
export interface LoopADecisionRow {
  runId: number;
  /** `'artifact' | 'pattern'`. */
  kind: string;
  /** Content hash of the candidate (for a pattern: of `pattern\n<yaml>`). */
  candidateHash: string;
  delta: string;
  rationale: string;
  /** `'queued' | 'refused' | 'skipped'`. */
  decision: string;
  /** `'queued'`, or the refusal reason code. */
  reason: string;
  /** Loop A and Loop B evidence; stored as its `JSON.stringify`. */
  evidence: unknown;
  /** The review item a queued candidate became; null otherwise. */
  reviewItemId: number | null;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** What a Loop A run's proposer reads of the notebook ({@link readLoopAProposalHistory}). */
export interface LoopAProposalHistory {
  /** Every Loop B experiment, oldest first. */
  experiments: Array<{ candidateHash: string; delta: string; decision: string; reason: string }>;
  /** Every Loop A decision on an artifact candidate, oldest first. */
  loopADecisions: Array<{ delta: string; decision: string; reason: string }>;
  /** Content hash of every version in the registry. */
  versionHashes: string[];
}

/**
 * Opens a Loop A run (`status` `'running'`, no end, no report).
 *
 * @returns the run's id
 */
export async function openLoopARun(
  db: StudyDatabase,
  run: { startedAt: string; incumbentVersionId: number },
): Promise<number> {
  const inserted = await db
    .insertInto('loop_a_runs')
    .values({
      started_at: run.startedAt,
      ended_at: null,
      incumbent_version_id: run.incumbentVersionId,
      status: 'running',
      report: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/** Closes a Loop A run: its end time, final status and report. */
export async function closeLoopARun(db: StudyDatabase, runId: number, end: LoopARunEnd): Promise<void> {
  await db
    .updateTable('loop_a_runs')
    .set({ ended_at: end.endedAt, status: end.status, report: JSON.stringify(end.report) })
    .where('id', '=', runId)
    .execute();
}

/**
 * Records one Loop A decision.
 *
 * @returns the decision's id
 */
export async function recordLoopADecision(db: StudyDatabase, row: LoopADecisionRow): Promise<number> {
  const inserted = await db
    .insertInto('loop_a_decisions')
    .values({
      run_id: row.runId,
      kind: row.kind,
      candidate_hash: row.candidateHash,
      delta: row.delta,
      rationale: row.rationale,
      decision: row.decision,
      reason: row.reason,
      evidence: JSON.stringify(row.evidence),
      review_item_id: row.reviewItemId,
      created_at: row.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/** The candidate hashes Loop A already decided (any decision), so a run never decides a candidate twice. */
export async function loopADecidedHashes(db: StudyDatabase): Promise<Set<string>> {
  const rows = await db.selectFrom('loop_a_decisions').select('candidate_hash').execute();
  return new Set(rows.map((row) => row.candidate_hash));
}

/** The Loop B experiments, Loop A's artifact decisions and the registry's hashes, as a Loop A proposal reads them. */
export async function readLoopAProposalHistory(db: StudyDatabase): Promise<LoopAProposalHistory> {
  const experiments = await db
    .selectFrom('experiments')
    .select(['candidate_hash', 'delta', 'decision', 'reason'])
    .orderBy('id')
    .execute();
  const loopADecisions = await db
    .selectFrom('loop_a_decisions')
    .select(['delta', 'decision', 'reason'])
    .where('kind', '=', 'artifact')
    .orderBy('id')
    .execute();
  const versions = await db.selectFrom('artifact_versions').select('hash').execute();
  return {
    experiments: experiments.map((row) => ({
      candidateHash: row.candidate_hash,
      delta: row.delta,
      decision: row.decision,
      reason: row.reason,
    })),
    loopADecisions: loopADecisions.map((row) => ({ delta: row.delta, decision: row.decision, reason: row.reason })),
    versionHashes: versions.map((row) => row.hash),
  };
}

/**
 * The stored Loop A runs, newest first.
 *
 * @param limit most runs returned. Default 20.
 */
export async function listLoopARuns(db: StudyDatabase, limit = 20): Promise<LoopARunRow[]> {
  const rows = await db.selectFrom('loop_a_runs').selectAll().orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    status: row.status,
    incumbentVersionId: row.incumbent_version_id,
  }));
}

/** The Loop A store's functions, the database bound (the lead aggregates these into the notebook interface). */
export interface LoopAStore {
  openLoopARun(run: { startedAt: string; incumbentVersionId: number }): Promise<number>;
  closeLoopARun(runId: number, end: LoopARunEnd): Promise<void>;
  recordLoopADecision(row: LoopADecisionRow): Promise<number>;
  loopADecidedHashes(): Promise<Set<string>>;
  readLoopAProposalHistory(): Promise<LoopAProposalHistory>;
  listLoopARuns(limit?: number): Promise<LoopARunRow[]>;
}
