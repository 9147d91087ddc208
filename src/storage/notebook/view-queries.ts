/**
 * The viewer's reads of the notebook's versions, experiments, runs and corpus
 * moves (`kloop view`, `kloop report --html`, `kloop history`): plain rows as
 * stored (JSON columns as text), parsed by the viewer (src/view/).
 * Read-only.
 *
 * @module
 */
import type { Selectable } from 'kysely';
import type { StudyDatabase } from '../study-database.ts';
import type { ArtifactVersionTable, ExperimentTable, RunTable } from '../schema.ts';

/** One artifact version as stored (`artifact_versions`). */
export type ArtifactVersionRow = Selectable<ArtifactVersionTable>;

/** One experiment as stored (`experiments`; `evidence` is JSON text). */
export type ExperimentRow = Selectable<ExperimentTable>;

/** One run as stored (`runs`; `report` is JSON text, null while it runs). */
export type RunRow = Selectable<RunTable>;

/** One corpus move that changed a partition's membership (`corpus_events`, the initial placement aside). */
export interface MembershipMoveRow {
  /** The last experiment decided when the move happened; null: none yet. */
  experimentId: number | null;
  /** 'admitted' | 'shadow' | 'graduated' | 'rotated_out' | 'removed' */
  kind: string;
  createdAt: string;
}

/** The reads of this module, without the database argument. */
export interface ViewStore {
  readVersions(): Promise<ArtifactVersionRow[]>;
  readVersionHashes(): Promise<Map<number, string>>;
  readVersionTexts(): Promise<Map<number, string>>;
  readVersion(id: number): Promise<{ hash: string; text: string } | undefined>;
  readExperiments(): Promise<ExperimentRow[]>;
  readLastExperimentId(): Promise<number>;
  readRuns(): Promise<RunRow[]>;
  readOpenRunId(): Promise<number | null>;
  readMembershipMoves(): Promise<MembershipMoveRow[]>;
  readOnlineClockEnd(): Promise<string>;
}

/** Every artifact version, by id. */
export async function readVersions(db: StudyDatabase): Promise<ArtifactVersionRow[]> {
  return db.selectFrom('artifact_versions').selectAll().orderBy('id').execute();
}

/** Content hash (SHA-256 hex) of every artifact version, by version id. */
export async function readVersionHashes(db: StudyDatabase): Promise<Map<number, string>> {
  return new Map(
    (await db.selectFrom('artifact_versions').select(['id', 'hash']).execute()).map((row) => [row.id, row.hash]),
  );
}

/** Text of every artifact version, by version id. */
export async function readVersionTexts(db: StudyDatabase): Promise<Map<number, string>> {
  return new Map(
    (await db.selectFrom('artifact_versions').select(['id', 'text']).execute()).map((row) => [row.id, row.text]),
  );
}

/** One artifact version's hash and text; undefined when no version has that id. */
export async function readVersion(db: StudyDatabase, id: number): Promise<{ hash: string; text: string } | undefined> {
  return db.selectFrom('artifact_versions').select(['hash', 'text']).where('id', '=', id).executeTakeFirst();
}

/** Every experiment, oldest first. */
export async function readExperiments(db: StudyDatabase): Promise<ExperimentRow[]> {
  return db.selectFrom('experiments').selectAll().orderBy('id').execute();
}

/** The id of the last experiment; 0 when there is none. */
export async function readLastExperimentId(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.max<number>('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** Every run, oldest first. */
export async function readRuns(db: StudyDatabase): Promise<RunRow[]> {
  return db.selectFrom('runs').selectAll().orderBy('id').execute();
}

/** The id of the newest run not ended; null when every run ended. */
export async function readOpenRunId(db: StudyDatabase): Promise<number | null> {
  const open = await db
    .selectFrom('runs')
    .select('id')
    .where('ended_at', 'is', null)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return open?.id ?? null;
}

/** Kinds of corpus events that change a partition's membership (the initial placement aside). */
const MEMBERSHIP_MOVES = ['admitted', 'shadow', 'graduated', 'rotated_out', 'removed'];

/** Every corpus move that changed a partition's membership, oldest first. Throws when the notebook has no corpus lifecycle. */
export async function readMembershipMoves(db: StudyDatabase): Promise<MembershipMoveRow[]> {
  return db
    .selectFrom('corpus_events')
    .select(['experiment_id as experimentId', 'kind', 'created_at as createdAt'])
    .where('kind', 'in', MEMBERSHIP_MOVES)
    .orderBy('id')
    .execute();
}

/**
 * The time a simulated online notebook's clock stopped at (ISO): the latest
 * start or decision of its experiments, or of its looks; '' when there is
 * none.
 */
export async function readOnlineClockEnd(db: StudyDatabase): Promise<string> {
  const experiments = await db
    .selectFrom('online_experiments')
    .select((eb) => [eb.fn.max('decided_at').as('decided'), eb.fn.max('started_at').as('started')])
    .executeTakeFirst();
  const looks = await db
    .selectFrom('online_looks')
    .select((eb) => eb.fn.max('at').as('at'))
    .executeTakeFirst();
  return [String(experiments?.decided ?? ''), String(experiments?.started ?? ''), String(looks?.at ?? '')]
    .sort()
    .at(-1)!;
}
