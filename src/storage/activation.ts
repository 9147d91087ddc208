/**
 * Activating a version by hand (a rollback, or a move forward again): the
 * registry's `active` pointer is moved to a stored version and the move is
 * recorded in `registry_events` with who did it (`actor`) and why.
 *
 * The loop reads the active version when a run starts, so the next
 * `kloop run` continues from the activated version, and the runtime
 * (`kloop build`) uses it at once. An activation takes the study's run lease
 * for the moment it writes: while a run holds the study, activation is
 * refused (the run would overwrite the pointer with its next accepted
 * candidate).
 */
import { InputError } from '../errors.ts';
import type { StudyDatabase } from './study-database.ts';
import { isoNow } from './study-database.ts';
import type { LeaseRecord } from './lease.ts';
import { releaseLease, tryAcquireLease } from './lease.ts';
import type { ArtifactVersion } from './registry.ts';
import { getRegistryVersion, getVersion } from './registry.ts';
import { characterCount } from '../text/characters.ts';

/** One move of a registry pointer (read-only record). */
export interface RegistryEvent {
  readonly id: number;
  /** The pointer: 'active' or 'seed'. */
  readonly name: string;
  readonly versionId: number;
  /** 'seed', 'experiment N accepted', 'review item N approved by X', 'activated by X (rollback from version N)', ... */
  readonly reason: string;
  /** Who moved it by hand; null for the loop's own moves (and databases older than migration 0007). */
  readonly actor: string | null;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
}

/** Longest actor name accepted, in characters. */
export const MAX_ACTOR_CHARACTERS = 100;

/**
 * The moves of one registry pointer, oldest first. Reads databases older than
 * migration 0007 too (opened read-only, without the `actor` column).
 */
export async function listRegistryEvents(db: StudyDatabase, name = 'active'): Promise<RegistryEvent[]> {
  const rows = await db.selectFrom('registry_events').selectAll().where('name', '=', name).orderBy('id').execute();
  return rows.map((row) =>
    Object.freeze({
      id: row.id,
      name: row.name,
      versionId: row.version_id,
      reason: row.reason,
      actor: (row as { actor?: string | null }).actor ?? null,
      createdAt: row.created_at,
    }),
  );
}

/**
 * Checks and trims the name of whoever activates a version.
 *
 * @throws InputError (field `by`) when it is empty, longer than 100 characters or has control characters
 */
export function checkActor(by: unknown, field = '--by'): string {
  const name = typeof by === 'string' ? by.trim() : '';
  if (name === '')
    throw new InputError(
      'activating a version needs the name of who does it (--by NAME); it is recorded in the notebook',
      { field },
    );
  if (characterCount(name) > MAX_ACTOR_CHARACTERS)
    throw new InputError(`the name is longer than ${MAX_ACTOR_CHARACTERS} characters`, { field });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new InputError('the name has control characters', { field });
  return name;
}

/** What to activate, and who does it. */
export interface ActivationRequest {
  versionId: number;
  /** Who activates it (required; see {@link checkActor}). */
  actor: string;
  /** Why, recorded with the move. */
  note?: string;
  now?: () => Date;
}

/** The outcome of an activation (zod's `safeParse` shape: expected refusals are returned, not thrown). */
export type ActivationResult =
  | {
      ok: true;
      version: ArtifactVersion;
      /** The version that was active before; null on a study without one. */
      previousVersionId: number | null;
      /** False when the version was already active (nothing was recorded). */
      changed: boolean;
      /** True when the activated version is older than the one it replaced. */
      rollback: boolean;
      /** The recorded move; null when nothing changed. */
      event: RegistryEvent | null;
    }
  | { ok: false; reason: 'not_found'; message: string }
  | { ok: false; reason: 'busy'; message: string; holder: LeaseRecord | undefined };

/**
 * Points `active` at a stored version and records the move with its actor,
 * in one transaction. Does not look at the run lease: see
 * {@link activateVersionExclusive}.
 *
 * @throws InputError when the actor is missing or malformed
 */
export async function activateVersion(db: StudyDatabase, request: ActivationRequest): Promise<ActivationResult> {
  const actor = checkActor(request.actor);
  const note = request.note?.trim() ?? '';
  return db.transaction().execute(async (transaction) => {
    const version = await getVersion(transaction, request.versionId);
    if (version === undefined)
      return {
        ok: false as const,
        reason: 'not_found' as const,
        message: `no version ${request.versionId} in this study (see \`kloop history\` or the viewer's versions page)`,
      };
    const previous = await getRegistryVersion(transaction);
    if (previous?.id === version.id)
      return {
        ok: true as const,
        version,
        previousVersionId: previous.id,
        changed: false,
        rollback: false,
        event: null,
      };
    const rollback = previous !== undefined && version.id < previous.id;
    const reason = `activated by ${actor}${previous === undefined ? '' : rollback ? ` (rollback from version ${previous.id})` : ` (from version ${previous.id})`}${note === '' ? '' : `: ${note}`}`;
    const at = isoNow(request.now);
    await transaction
      .insertInto('registry')
      .values({ name: 'active', version_id: version.id, updated_at: at })
      .onConflict((conflict) => conflict.column('name').doUpdateSet({ version_id: version.id, updated_at: at }))
      .execute();
    const inserted = await transaction
      .insertInto('registry_events')
      .values({ name: 'active', version_id: version.id, reason, actor, created_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const event: RegistryEvent = Object.freeze({
      id: inserted.id,
      name: 'active',
      versionId: version.id,
      reason,
      actor,
      createdAt: at,
    });
    return { ok: true as const, version, previousVersionId: previous?.id ?? null, changed: true, rollback, event };
  });
}

/** Options of {@link activateVersionExclusive}. */
export interface ExclusiveActivationOptions {
  /** Runs after a successful activation that changed the pointer, while the lease is still held (e.g. the git mirror's sync). */
  whileHeld?: (result: Extract<ActivationResult, { ok: true }>) => Promise<void>;
}

/**
 * {@link activateVersion} under the study's run lease: refused with
 * `busy` while a live run holds the study (a stale lease is taken over).
 *
 * @param studyKey the study's lease key (its absolute folder)
 */
export async function activateVersionExclusive(
  db: StudyDatabase,
  studyKey: string,
  request: ActivationRequest,
  options: ExclusiveActivationOptions = {},
): Promise<ActivationResult> {
  checkActor(request.actor);
  const attempt = await tryAcquireLease(db, { studyKey });
  if (!attempt.acquired) {
    const holder = attempt.holder;
    return {
      ok: false,
      reason: 'busy',
      holder,
      message:
        holder !== undefined
          ? `a run is in progress on this study (pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}): activate a version once it has stopped`
          : `the study database stayed locked by another process for ${Math.round(attempt.lockedMs / 1000)} s: activate a version once it is done`,
    };
  }
  try {
    const result = await activateVersion(db, request);
    if (result.ok && result.changed && options.whileHeld !== undefined) await options.whileHeld(result);
    return result;
  } finally {
    await releaseLease(db, attempt.lease);
  }
}
