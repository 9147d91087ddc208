/**
 * The notebook's runs (the `runs` table: one row per `kloop run` or library
 * run of the loop) and the loop's small persistent state (the `study_state`
 * table, one JSON value per key). Rows are storage-level shapes: the report
 * and the state are JSON text, written and read by src/loop/.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';
import type { ArtifactVersion } from '../registry.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from '../registry.ts';

/** The end of a run as stored. */
export interface RunEndRow {
  /** ISO 8601 UTC. */
  endedAt: string;
  stopReason: string;
  /** JSON text. */
  report: string;
}

/** The engine's runs store: what it exports, without the `db` argument (the notebook interface aggregates it). */
export interface EngineRunsStore {
  insertRun(startedAt: string): Promise<number>;
  endRun(runId: number, end: RunEndRow): Promise<void>;
  removeRunIfEmpty(runId: number): Promise<boolean>;
  readStudyStateValue(key: string): Promise<string | undefined>;
  writeStudyStateValue(key: string, value: string): Promise<void>;
  activeOrSeedVersion(text: string, now: () => Date): Promise<ArtifactVersion>;
}

/** Opens a run started at `startedAt` (ISO 8601 UTC); returns its id. */
export async function insertRun(db: StudyDatabase, startedAt: string): Promise<number> {
  const run = await db
    .insertInto('runs')
    .values({ started_at: startedAt, ended_at: null, stop_reason: null, report: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return run.id;
}

/** Stores how run `runId` ended. */
export async function endRun(db: StudyDatabase, runId: number, end: RunEndRow): Promise<void> {
  await db
    .updateTable('runs')
    .set({ ended_at: end.endedAt, stop_reason: end.stopReason, report: end.report })
    .where('id', '=', runId)
    .execute();
}

/**
 * Deletes run `runId` when nothing refers to it (no experiment, no proposer
 * call), in one transaction. Returns whether it deleted it.
 */
export async function removeRunIfEmpty(db: StudyDatabase, runId: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    const experiment = await transaction
      .selectFrom('experiments')
      .select('id')
      .where('run_id', '=', runId)
      .executeTakeFirst();
    const proposal = await transaction
      .selectFrom('proposals')
      .select('id')
      .where('run_id', '=', runId)
      .executeTakeFirst();
    if (experiment !== undefined || proposal !== undefined) return false;
    await transaction.deleteFrom('runs').where('id', '=', runId).execute();
    return true;
  });
}

/** The stored value of `key` in `study_state` (JSON text); undefined when there is none. */
export async function readStudyStateValue(db: StudyDatabase, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('study_state').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/** Stores `value` (JSON text) under `key` in `study_state`, replacing what was there. */
export async function writeStudyStateValue(db: StudyDatabase, key: string, value: string): Promise<void> {
  await db
    .insertInto('study_state')
    .values({ key, value })
    .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * The active version; on a new study (no active version) stores `text` as
 * the seed and points both `active` and `seed` at it, in one transaction.
 */
export async function activeOrSeedVersion(db: StudyDatabase, text: string, now: () => Date): Promise<ArtifactVersion> {
  const active = await getRegistryVersion(db);
  if (active !== undefined) return active;
  return db.transaction().execute(async (transaction) => {
    const version = await putVersion(transaction, text, 'seed', null, null, now);
    await setRegistryVersion(transaction, version.id, 'seed', 'active', now);
    await setRegistryVersion(transaction, version.id, 'seed', 'seed', now);
    return version;
  });
}
