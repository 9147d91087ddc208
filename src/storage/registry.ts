/**
 * The prompt registry: artifact versions live in the database with an
 * `active` pointer. Runtime code asks for the active artifact; evaluation of a
 * candidate runs inside {@link withArtifactOverride}, a context-local override
 * (AsyncLocalStorage) that no other async context sees and that leaves nothing
 * behind when it ends.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { contentHash } from '../artifact/content-hash.ts';
import type { StudyDatabase } from './study-database.ts';
import { isoNow } from './study-database.ts';

/** A stored artifact version (read-only record). */
export interface ArtifactVersion {
  readonly id: number;
  readonly hash: string;
  readonly text: string;
  readonly parentId: number | null;
  readonly source: string;
  readonly experimentId: number | null;
  readonly createdAt: string;
}

/**
 * The registry's part of the notebook interface (src/storage/notebook/index.ts):
 * versions and their activation, each function below without the database.
 */
export interface RegistryStore {
  getActiveArtifactText(name?: string): Promise<string>;
  getRegistryVersion(name?: string): Promise<ArtifactVersion | undefined>;
  getVersion(id: number): Promise<ArtifactVersion | undefined>;
  listVersions(): Promise<ArtifactVersion[]>;
  putVersion(
    text: string,
    source: string,
    parentId: number | null,
    experimentId: number | null,
    now?: () => Date,
  ): Promise<ArtifactVersion>;
  setRegistryVersion(versionId: number, reason: string, name?: string, now?: () => Date): Promise<void>;
}

const overrideStorage = new AsyncLocalStorage<string>();

/**
 * Runs `work` with `artifactText` as the active artifact for this async
 * context only. Concurrent callers outside `work` keep seeing the stored
 * active version.
 */
export function withArtifactOverride<T>(artifactText: string, work: () => Promise<T>): Promise<T> {
  return overrideStorage.run(artifactText, work);
}

/** The override of the current async context, if any. */
export function currentArtifactOverride(): string | undefined {
  return overrideStorage.getStore();
}

/**
 * The artifact text runtime code should use: the context-local override when
 * one is set, else the stored active version.
 *
 * @throws Error when the registry has no active version
 */
export async function getActiveArtifactText(db: StudyDatabase, name = 'active'): Promise<string> {
  const override = currentArtifactOverride();
  if (override !== undefined) return override;
  const active = await getRegistryVersion(db, name);
  if (active === undefined) throw new Error(`the prompt registry has no '${name}' version yet: run the study first`);
  return active.text;
}

function toVersion(row: {
  id: number;
  hash: string;
  text: string;
  parent_id: number | null;
  source: string;
  experiment_id: number | null;
  created_at: string;
}): ArtifactVersion {
  return Object.freeze({
    id: row.id,
    hash: row.hash,
    text: row.text,
    parentId: row.parent_id,
    source: row.source,
    experimentId: row.experiment_id,
    createdAt: row.created_at,
  });
}

/** The version a registry pointer names, or undefined. */
export async function getRegistryVersion(db: StudyDatabase, name = 'active'): Promise<ArtifactVersion | undefined> {
  const row = await db
    .selectFrom('registry')
    .innerJoin('artifact_versions', 'artifact_versions.id', 'registry.version_id')
    .selectAll('artifact_versions')
    .where('registry.name', '=', name)
    .executeTakeFirst();
  return row === undefined ? undefined : toVersion(row);
}

/** A version by id, or undefined. */
export async function getVersion(db: StudyDatabase, id: number): Promise<ArtifactVersion | undefined> {
  const row = await db.selectFrom('artifact_versions').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toVersion(row);
}

/** All versions, oldest first. */
export async function listVersions(db: StudyDatabase): Promise<ArtifactVersion[]> {
  const rows = await db.selectFrom('artifact_versions').selectAll().orderBy('id').execute();
  return rows.map(toVersion);
}

/**
 * Stores an artifact version (idempotent by content hash) and returns it.
 * Runs inside the caller's transaction when given one.
 */
export async function putVersion(
  db: StudyDatabase,
  text: string,
  source: string,
  parentId: number | null,
  experimentId: number | null,
  now: () => Date = () => new Date(),
): Promise<ArtifactVersion> {
  const hash = contentHash(text);
  const existing = await db.selectFrom('artifact_versions').selectAll().where('hash', '=', hash).executeTakeFirst();
  if (existing !== undefined) return toVersion(existing);
  const inserted = await db
    .insertInto('artifact_versions')
    .values({ hash, text, parent_id: parentId, source, experiment_id: experimentId, created_at: isoNow(now) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toVersion(inserted);
}

/** Points a registry name at a version, recording the move. */
export async function setRegistryVersion(
  db: StudyDatabase,
  versionId: number,
  reason: string,
  name = 'active',
  now: () => Date = () => new Date(),
): Promise<void> {
  const at = isoNow(now);
  await db
    .insertInto('registry')
    .values({ name, version_id: versionId, updated_at: at })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ version_id: versionId, updated_at: at }))
    .execute();
  await db.insertInto('registry_events').values({ name, version_id: versionId, reason, created_at: at }).execute();
}
