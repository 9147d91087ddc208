/**
 * The notebook's proposer calls (the `proposals` table: one row per call,
 * append-only). Rows are storage-level shapes: failures and candidate ids
 * are JSON text, written by the loop (src/loop/notebook.ts).
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/** One proposer call to record. */
export interface NewProposalRow {
  runId: number;
  round: number;
  /** 0-based attempt within the round. */
  attempt: number;
  proposer: string;
  /** `candidates`, `failed` or `idle`. */
  outcome: string;
  /** Usable candidates returned. */
  candidates: number;
  /** JSON text: Array<{ code, scope, reason, raw? }>. */
  failures: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** JSON array of the call's candidate identities; null for none. */
  candidateIds: string | null;
}

/** The proposals store: what it exports, without the `db` argument (the notebook interface aggregates it). */
export interface ProposalsStore {
  countProposals(round: number): Promise<number>;
  insertProposalOnce(row: NewProposalRow): Promise<boolean>;
}

/** Proposer calls recorded for `round` so far. */
export async function countProposals(db: StudyDatabase, round: number): Promise<number> {
  const row = await db
    .selectFrom('proposals')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('round', '=', round)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Inserts a proposer call unless one is recorded for the same (round,
 * attempt) already (a resumed round does not record its call twice).
 * Returns whether it inserted.
 */
export async function insertProposalOnce(db: StudyDatabase, row: NewProposalRow): Promise<boolean> {
  const existing = await db
    .selectFrom('proposals')
    .select('id')
    .where('round', '=', row.round)
    .where('attempt', '=', row.attempt)
    .executeTakeFirst();
  if (existing !== undefined) return false;
  await db
    .insertInto('proposals')
    .values({
      run_id: row.runId,
      round: row.round,
      attempt: row.attempt,
      proposer: row.proposer,
      outcome: row.outcome,
      candidates: row.candidates,
      failures: row.failures,
      input_tokens: row.inputTokens,
      output_tokens: row.outputTokens,
      cost_usd: row.costUsd,
      created_at: row.createdAt,
      candidate_ids: row.candidateIds,
    })
    .execute();
  return true;
}
