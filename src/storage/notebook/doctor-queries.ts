/**
 * `kloop doctor`'s reads of the notebook (src/doctor/): SQLite's integrity
 * check, counts of orphaned and dangling rows, the versions and their
 * content, decisions made twice, unfinished runs, the candidates proposed
 * and decided, and the stored outcomes of an artifact. Read-only.
 *
 * @module
 */
import { sql } from 'kysely';
import type { StudyDatabase } from '../study-database.ts';
import { backendOf } from '../study-database.ts';

/** Counts of rows that point nowhere, each 0 in a sound notebook. */
export interface DanglingCounts {
  /** Per-example scores (`evaluation_examples`) of no evaluation. */
  orphanedExamples: number;
  /** Evaluations of more than 0 examples with no per-example score. */
  emptyEvaluations: number;
  /** Experiments whose base version is missing. */
  missingBase: number;
  /** Experiments whose accepted version is missing. */
  missingAccepted: number;
  /** Accepted experiments with no accepted version. */
  acceptedWithoutVersion: number;
  /** Registry pointers named `active`. */
  activePointers: number;
}

/** A registry pointer to a version that is not stored. */
export interface DanglingPointerRow {
  name: string;
  versionId: number;
}

/** A round's candidate decided more than once (grouped by identity, or by delta text in notebooks before identities). */
export interface DecidedTwiceRow {
  round: number;
  delta: string;
  times: number;
}

/** A version accepted by more than one experiment. */
export interface AcceptedTwiceRow {
  version: number;
  times: number;
}

/** The reads of this module, without the database argument. */
export interface DoctorStore {
  readIntegrityMessages(): Promise<string[]>;
  countDanglingRows(): Promise<DanglingCounts>;
  readDanglingPointers(): Promise<DanglingPointerRow[]>;
  readVersionContents(): Promise<Array<{ id: number; hash: string; text: string }>>;
  readDecidedTwice(byIdentity: boolean): Promise<DecidedTwiceRow[]>;
  readAcceptedTwice(): Promise<AcceptedTwiceRow[]>;
  readUnfinishedRuns(): Promise<Array<{ id: number; startedAt: string }>>;
  countStoredOutcomes(artifactHash: string): Promise<{ total: number; valid: number }>;
  readProposedCandidateIds(): Promise<Array<{ round: number; candidateIds: string }>>;
  readDecidedCandidateIds(): Promise<Set<string>>;
  hasAppliedMigration(name: string): Promise<boolean>;
  readLastStopReasonOfRound(round: number): Promise<string | null | undefined>;
}

/**
 * SQLite's `pragma integrity_check` messages (`['ok']` when sound); `['ok']`
 * for PostgreSQL, which keeps its own storage sound (no file to check).
 */
export async function readIntegrityMessages(db: StudyDatabase): Promise<string[]> {
  if (backendOf(db) === 'postgres') return ['ok'];
  const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db);
  return integrity.rows.map((row) => Object.values(row)[0] as string);
}

async function count(db: StudyDatabase, query: ReturnType<typeof sql<{ count: number }>>): Promise<number> {
  const result = await query.execute(db);
  return Number(result.rows[0]?.count ?? 0);
}

/** Counts the rows that point nowhere (see {@link DanglingCounts}); needs the tables of a migrated notebook. */
export async function countDanglingRows(db: StudyDatabase): Promise<DanglingCounts> {
  return {
    orphanedExamples: await count(
      db,
      sql<{
        count: number;
      }>`select count(*) as count from evaluation_examples where evaluation_id not in (select id from evaluations)`,
    ),
    emptyEvaluations: await count(
      db,
      sql<{
        count: number;
      }>`select count(*) as count from evaluations e where e.total > 0 and (select count(*) from evaluation_examples x where x.evaluation_id = e.id) = 0`,
    ),
    missingBase: await count(
      db,
      sql<{
        count: number;
      }>`select count(*) as count from experiments where base_version_id not in (select id from artifact_versions)`,
    ),
    missingAccepted: await count(
      db,
      sql<{
        count: number;
      }>`select count(*) as count from experiments where accepted_version_id is not null and accepted_version_id not in (select id from artifact_versions)`,
    ),
    acceptedWithoutVersion: await count(
      db,
      sql<{
        count: number;
      }>`select count(*) as count from experiments where decision = 'accepted' and accepted_version_id is null`,
    ),
    activePointers: await count(
      db,
      sql<{ count: number }>`select count(*) as count from registry where name = 'active'`,
    ),
  };
}

/** Registry pointers to versions that are not stored. */
export async function readDanglingPointers(db: StudyDatabase): Promise<DanglingPointerRow[]> {
  const result = await sql<{
    name: string;
    version_id: number;
  }>`select name, version_id from registry where version_id not in (select id from artifact_versions)`.execute(db);
  return result.rows.map((row) => ({ name: row.name, versionId: row.version_id }));
}

/** Every artifact version's id, stored content hash and text. */
export async function readVersionContents(
  db: StudyDatabase,
): Promise<Array<{ id: number; hash: string; text: string }>> {
  return db.selectFrom('artifact_versions').select(['id', 'hash', 'text']).execute();
}

/**
 * Candidates decided more than once in a round: grouped by candidate identity
 * (falling back to the delta text for rows without one) when `byIdentity`,
 * else by delta text (notebooks before identities).
 */
export async function readDecidedTwice(db: StudyDatabase, byIdentity: boolean): Promise<DecidedTwiceRow[]> {
  const result = byIdentity
    ? await sql<DecidedTwiceRow>`select round, min(delta) as delta, count(*) as times from experiments group by round, coalesce(candidate_id, 'delta:' || delta) having count(*) > 1`.execute(
        db,
      )
    : await sql<DecidedTwiceRow>`select round, delta, count(*) as times from experiments group by round, delta having count(*) > 1`.execute(
        db,
      );
  return result.rows;
}

/** Versions accepted by more than one experiment. */
export async function readAcceptedTwice(db: StudyDatabase): Promise<AcceptedTwiceRow[]> {
  const result =
    await sql<AcceptedTwiceRow>`select accepted_version_id as version, count(*) as times from experiments where accepted_version_id is not null group by accepted_version_id having count(*) > 1`.execute(
      db,
    );
  return result.rows;
}

/** Runs that never recorded an end, oldest first. */
export async function readUnfinishedRuns(db: StudyDatabase): Promise<Array<{ id: number; startedAt: string }>> {
  return db
    .selectFrom('runs')
    .select(['id', 'started_at as startedAt'])
    .where('ended_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** An artifact's stored per-example outputs in the per-partition store: how many, how many valid. */
export async function countStoredOutcomes(
  db: StudyDatabase,
  artifactHash: string,
): Promise<{ total: number; valid: number }> {
  const row = await sql<{ total: number; valid: number }>`
    select count(*) as total, coalesce(sum(x.valid), 0) as valid
    from evaluation_examples x join evaluations e on e.id = x.evaluation_id
    where e.artifact_hash = ${artifactHash}`.execute(db);
  return { total: Number(row.rows[0]?.total ?? 0), valid: Number(row.rows[0]?.valid ?? 0) };
}

/** Every proposer call that recorded its candidates' identities (`candidateIds`: JSON text of a string array), by round then attempt. */
export async function readProposedCandidateIds(
  db: StudyDatabase,
): Promise<Array<{ round: number; candidateIds: string }>> {
  const rows = await db
    .selectFrom('proposals')
    .select(['round', 'candidate_ids'])
    .where('candidate_ids', 'is not', null)
    .orderBy('round')
    .orderBy('attempt')
    .execute();
  return rows.map((row) => ({ round: row.round, candidateIds: row.candidate_ids! }));
}

/** The candidate identities the experiments decided. */
export async function readDecidedCandidateIds(db: StudyDatabase): Promise<Set<string>> {
  const rows = await db
    .selectFrom('experiments')
    .select('candidate_id')
    .where('candidate_id', 'is not', null)
    .execute();
  return new Set(rows.map((row) => row.candidate_id!));
}

/** True when the migration named `name` was applied to the notebook (Kysely's `kysely_migration` table). */
export async function hasAppliedMigration(db: StudyDatabase, name: string): Promise<boolean> {
  const applied = await db
    .selectFrom('kysely_migration' as never)
    .select('name' as never)
    .where('name' as never, '=', name as never)
    .executeTakeFirst();
  return applied !== undefined;
}

/**
 * The stop reason of the run that made the last decision of `round`: null
 * while that run has not stopped, undefined when no experiment of the round
 * was decided.
 */
export async function readLastStopReasonOfRound(db: StudyDatabase, round: number): Promise<string | null | undefined> {
  const last = await db
    .selectFrom('experiments')
    .innerJoin('runs', 'runs.id', 'experiments.run_id')
    .select('runs.stop_reason as stopReason')
    .where('experiments.round', '=', round)
    .orderBy('experiments.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return last?.stopReason;
}
