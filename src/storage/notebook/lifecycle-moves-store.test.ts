import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../study-database.ts';
import { openDatabase } from '../database.ts';
import { boundaryMovesRecordedAt, countCorpusEvents } from './lifecycle-moves-store.ts';

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

/** One corpus event as the lifecycle store writes it (fixture). */
async function event(store: StudyDatabase, kind: string, experimentId: number | null): Promise<void> {
  await store
    .insertInto('corpus_events')
    .values({
      example_id: 'e1',
      kind,
      from_partition: 'shadow',
      to_partition: 'optimization',
      reason: 'fixture',
      experiment_id: experimentId,
      details: '{}',
      created_at: '2026-03-01T10:00:00.000Z',
    })
    .execute();
}

describe('the lifecycle moves store', () => {
  it('sees a boundary only where graduation or rotation moves were recorded, before any experiment or after one', async () => {
    db = await openDatabase(':memory:');
    expect(await countCorpusEvents(db)).toBe(0);
    await event(db, 'initial', null);
    await event(db, 'admitted', 3);
    expect(await boundaryMovesRecordedAt(db, null)).toBe(false);
    expect(await boundaryMovesRecordedAt(db, 3)).toBe(false);
    await event(db, 'graduated', null);
    await event(db, 'rotated_out', 5);
    expect(await boundaryMovesRecordedAt(db, null)).toBe(true);
    expect(await boundaryMovesRecordedAt(db, 3)).toBe(false);
    expect(await boundaryMovesRecordedAt(db, 5)).toBe(true);
    expect(await countCorpusEvents(db)).toBe(4);
  });
});
