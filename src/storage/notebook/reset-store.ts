/**
 * The notebook's side of `kloop reset` (src/study/reset-study.ts): counting
 * what a reset moves aside, reading the corpus lifecycle tables as they are,
 * and writing the carried corpus history into a fresh notebook.
 */
import type { StudyDatabase } from '../study-database.ts';
import type { CorpusEventTable, CorpusMemberTable } from '../schema.ts';

/** What the notebook held, before a reset (row counts). */
export interface NotebookCounts {
  experiments: number;
  runs: number;
  artifactVersions: number;
  calibrations: number;
  corpusMembers: number;
  corpusEvents: number;
  reviewItems: number;
  signals: number;
}

/** The corpus lifecycle rows as stored: members by example id, events oldest first (with their ids). */
export interface CorpusHistoryTables {
  members: CorpusMemberTable[];
  events: Array<Omit<CorpusEventTable, 'id'> & { id: number }>;
}

/** The `reset` event written after the carried history. */
export interface ResetEventInput {
  /** The event's reason (names where the previous notebook is). */
  reason: string;
  /** The event's details (serialized as JSON). */
  details: Readonly<Record<string, unknown>>;
  /** ISO 8601 time of the reset. */
  at: string;
}

/** The functions of this module, without their `db` argument. */
export interface ResetStore {
  notebookCounts(): Promise<NotebookCounts>;
  readCorpusHistoryTables(): Promise<CorpusHistoryTables>;
  writeCorpusHistory(history: CorpusHistoryTables, resetEvent: ResetEventInput): Promise<void>;
}

type CountedTable =
  | 'experiments'
  | 'runs'
  | 'artifact_versions'
  | 'calibrations'
  | 'corpus_members'
  | 'corpus_events'
  | 'review_items'
  | 'signals';

async function countRows(db: StudyDatabase, table: CountedTable): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Counts the rows a reset moves aside. */
export async function notebookCounts(db: StudyDatabase): Promise<NotebookCounts> {
  return {
    experiments: await countRows(db, 'experiments'),
    runs: await countRows(db, 'runs'),
    artifactVersions: await countRows(db, 'artifact_versions'),
    calibrations: await countRows(db, 'calibrations'),
    corpusMembers: await countRows(db, 'corpus_members'),
    corpusEvents: await countRows(db, 'corpus_events'),
    reviewItems: await countRows(db, 'review_items'),
    signals: await countRows(db, 'signals'),
  };
}

/** Reads the corpus lifecycle tables as they are (members by example id, events by id). */
export async function readCorpusHistoryTables(db: StudyDatabase): Promise<CorpusHistoryTables> {
  return {
    members: await db.selectFrom('corpus_members').selectAll().orderBy('example_id').execute(),
    events: await db.selectFrom('corpus_events').selectAll().orderBy('id').execute(),
  };
}

/**
 * Writes carried corpus history into a fresh notebook, in one transaction:
 * every member as it was; every event with a new id, its experiment id moved
 * to `details.previousExperimentId` (those experiments are gone); then the
 * `reset` event.
 */
export async function writeCorpusHistory(
  db: StudyDatabase,
  history: CorpusHistoryTables,
  resetEvent: ResetEventInput,
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    for (const member of history.members) await transaction.insertInto('corpus_members').values(member).execute();
    for (const event of history.events) {
      const details = JSON.parse(event.details) as Record<string, unknown>;
      const { id: _id, ...row } = event;
      await transaction
        .insertInto('corpus_events')
        .values({
          ...row,
          experiment_id: null,
          details: JSON.stringify(
            event.experiment_id === null ? details : { ...details, previousExperimentId: event.experiment_id },
          ),
        })
        .execute();
    }
    await transaction
      .insertInto('corpus_events')
      .values({
        example_id: null,
        kind: 'reset',
        from_partition: null,
        to_partition: null,
        reason: resetEvent.reason,
        experiment_id: null,
        details: JSON.stringify(resetEvent.details),
        created_at: resetEvent.at,
      })
      .execute();
  });
}
