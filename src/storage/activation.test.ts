import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { activateVersion, activateVersionExclusive, listRegistryEvents } from './activation.ts';
import type { StudyDatabase } from './study-database.ts';
import { openDatabase } from './database.ts';
import { acquireLease } from './lease.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from './registry.ts';

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

async function threeVersions(): Promise<StudyDatabase> {
  db = await openDatabase(':memory:');
  const seed = await putVersion(db, 'v1', 'seed', null, null);
  await setRegistryVersion(db, seed.id, 'seed');
  const second = await putVersion(db, 'v2', 'accepted', seed.id, 1);
  await setRegistryVersion(db, second.id, 'experiment 1 accepted');
  const third = await putVersion(db, 'v3', 'accepted', second.id, 2);
  await setRegistryVersion(db, third.id, 'experiment 2 accepted');
  return db;
}

const at = () => new Date('2026-03-01T10:00:00Z');

describe('activating a version by hand', () => {
  it('moves the active pointer and records who did it, and why', async () => {
    const store = await threeVersions();
    const result = await activateVersion(store, {
      versionId: 1,
      actor: '  Ana Lima ',
      note: 'v3 broke production',
      now: at,
    });
    expect(result).toMatchObject({ ok: true, previousVersionId: 3, changed: true, rollback: true });
    expect((await getRegistryVersion(store))!.id).toBe(1);
    const events = await listRegistryEvents(store);
    expect(events.map((event) => [event.versionId, event.actor])).toEqual([
      [1, null],
      [2, null],
      [3, null],
      [1, 'Ana Lima'],
    ]);
    expect(events.at(-1)).toMatchObject({
      reason: 'activated by Ana Lima (rollback from version 3): v3 broke production',
      createdAt: '2026-03-01T10:00:00.000Z',
    });
    // Forward again is not a rollback.
    expect(await activateVersion(store, { versionId: 2, actor: 'Ana Lima' })).toMatchObject({
      ok: true,
      rollback: false,
      changed: true,
    });
    expect((await listRegistryEvents(store)).at(-1)!.reason).toBe('activated by Ana Lima (from version 1)');
  });

  it('records nothing when the version is already active, and refuses an unknown version', async () => {
    const store = await threeVersions();
    expect(await activateVersion(store, { versionId: 3, actor: 'ana' })).toMatchObject({
      ok: true,
      changed: false,
      event: null,
    });
    expect(await activateVersion(store, { versionId: 9, actor: 'ana' })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
    expect(await listRegistryEvents(store)).toHaveLength(3);
  });

  it('needs a name', async () => {
    const store = await threeVersions();
    await expect(activateVersion(store, { versionId: 1, actor: '   ' })).rejects.toBeInstanceOf(InputError);
    await expect(activateVersion(store, { versionId: 1, actor: 'x'.repeat(101) })).rejects.toThrow(/longer than 100/);
    await expect(activateVersion(store, { versionId: 1, actor: 'a\nb' })).rejects.toThrow(/control characters/);
  });

  it('is refused while a live run holds the study, and runs its follow-up under the lease otherwise', async () => {
    const store = await threeVersions();
    const lease = await acquireLease(store, { studyKey: '/study', ownerId: 'other-run' });
    const busy = await activateVersionExclusive(store, '/study', { versionId: 1, actor: 'ana' });
    expect(busy).toMatchObject({ ok: false, reason: 'busy' });
    expect((await getRegistryVersion(store))!.id).toBe(3);
    await store.deleteFrom('leases').where('owner_id', '=', lease.ownerId).execute();
    const seenLeases: number[] = [];
    const done = await activateVersionExclusive(
      store,
      '/study',
      { versionId: 1, actor: 'ana' },
      {
        whileHeld: async () => void seenLeases.push((await store.selectFrom('leases').selectAll().execute()).length),
      },
    );
    expect(done).toMatchObject({ ok: true, changed: true });
    expect(seenLeases).toEqual([1]);
    expect(await store.selectFrom('leases').selectAll().execute()).toHaveLength(0);
  });
});
