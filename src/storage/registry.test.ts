import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from './study-database.ts';
import { openDatabase } from './database.ts';
import {
  currentArtifactOverride,
  getActiveArtifactText,
  putVersion,
  setRegistryVersion,
  withArtifactOverride,
} from './registry.ts';

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

describe('the prompt registry and its context-local override', () => {
  it('serves the active version to runtime code', async () => {
    db = await openDatabase(':memory:');
    const version = await putVersion(db, 'stored prompt', 'seed', null, null);
    await setRegistryVersion(db, version.id, 'seed');
    expect(await getActiveArtifactText(db)).toBe('stored prompt');
  });

  it('an override is invisible to a concurrent caller and leaves nothing behind', async () => {
    db = await openDatabase(':memory:');
    const store = db;
    const version = await putVersion(store, 'stored prompt', 'seed', null, null);
    await setRegistryVersion(store, version.id, 'seed');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seenInside: string[] = [];
    const inside = withArtifactOverride('candidate prompt', async () => {
      seenInside.push(await getActiveArtifactText(store));
      await gate; // stay inside the override while the other caller runs
      seenInside.push(await getActiveArtifactText(store));
    });
    // A concurrent caller, interleaved while the override is live.
    const outside = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const seen = await getActiveArtifactText(store);
      release();
      return seen;
    })();
    const [, seenOutside] = await Promise.all([inside, outside]);
    expect(seenInside).toEqual(['candidate prompt', 'candidate prompt']);
    expect(seenOutside).toBe('stored prompt');
    expect(currentArtifactOverride()).toBeUndefined();
    expect(await getActiveArtifactText(store)).toBe('stored prompt');
  });

  it('versions are idempotent by content hash', async () => {
    db = await openDatabase(':memory:');
    const first = await putVersion(db, 'same', 'seed', null, null);
    const second = await putVersion(db, 'same', 'accepted', null, null);
    expect(second.id).toBe(first.id);
  });
});
