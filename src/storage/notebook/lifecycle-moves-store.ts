/**
 * Reads of the corpus lifecycle's moves (`corpus_events`,
 * src/storage/schema.ts) that the study's lifecycle hooks
 * (src/loop/corpus-lifecycle.ts) make beside the lifecycle store's own:
 * whether a round boundary already moved examples at a point of the
 * notebook, and how many events there are.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/**
 * Whether graduation or rotation moves (`graduated`, `rotated_out` events)
 * were already recorded at this point of the notebook: after experiment
 * `experimentId`, or before any experiment when it is null.
 */
export async function boundaryMovesRecordedAt(db: StudyDatabase, experimentId: number | null): Promise<boolean> {
  let query = db.selectFrom('corpus_events').select('id').where('kind', 'in', ['graduated', 'rotated_out']);
  query =
    experimentId === null ? query.where('experiment_id', 'is', null) : query.where('experiment_id', '=', experimentId);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

/** The number of corpus lifecycle events recorded (every kind). */
export async function countCorpusEvents(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('corpus_events')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The lifecycle moves store's functions, the database bound (the lead aggregates these into the notebook interface). */
export interface LifecycleMovesStore {
  boundaryMovesRecordedAt(experimentId: number | null): Promise<boolean>;
  countCorpusEvents(): Promise<number>;
}
