/**
 * The rows of a whole notebook, ordered, for tests that compare two
 * notebooks (src/test-support/notebook-snapshot.ts): versions, experiments,
 * registry moves, per-example results, proposer calls, corpus members and
 * events, runs. JSON columns come back as text.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';
import type { KloopDatabase } from '../schema.ts';

/** The columns the snapshot reads of each table, in the order it lists them. */
const SNAPSHOT_COLUMNS = {
  artifact_versions: ['id', 'hash', 'parent_id', 'source', 'experiment_id'],
  experiments: [
    'id',
    'run_id',
    'round',
    'proposer',
    'base_version_id',
    'candidate_hash',
    'delta',
    'rationale',
    'decision',
    'reason',
    'evidence',
    'accepted_version_id',
    'fingerprint',
    'seed',
    'change',
  ],
  registry_events: ['id', 'name', 'version_id', 'reason', 'actor'],
  example_results: ['fingerprint', 'artifact_hash', 'example_id', 'repeat', 'valid', 'composite', 'score', 'usage'],
  proposals: ['id', 'round', 'attempt', 'proposer', 'outcome', 'candidates', 'failures'],
  corpus_members: ['example_id', 'origin', 'source', 'partition', 'shadow_exposures'],
  corpus_events: ['id', 'example_id', 'kind', 'from_partition', 'to_partition', 'reason', 'experiment_id', 'details'],
  runs: ['id', 'stop_reason'],
} as const satisfies { [Table in keyof KloopDatabase]?: ReadonlyArray<keyof KloopDatabase[Table] & string> };

/** The columns each table's rows are ordered by (the key that identifies a row). */
const SNAPSHOT_ORDER: { [Table in keyof typeof SNAPSHOT_COLUMNS]: readonly string[] } = {
  artifact_versions: ['id'],
  experiments: ['id'],
  registry_events: ['id'],
  example_results: ['fingerprint', 'artifact_hash', 'example_id', 'repeat'],
  proposals: ['id'],
  corpus_members: ['example_id'],
  corpus_events: ['id'],
  runs: ['id'],
};

/** A table the snapshot reads. */
export type SnapshotTable = keyof typeof SNAPSHOT_COLUMNS;

/** One row of a snapshot table: the columns of {@link SNAPSHOT_COLUMNS}, as stored. */
export type SnapshotRow<Table extends SnapshotTable> = {
  [Column in (typeof SNAPSHOT_COLUMNS)[Table][number]]: Column extends keyof KloopDatabase[Table]
    ? KloopDatabase[Table][Column] extends { __select__: infer Selected }
      ? Selected
      : KloopDatabase[Table][Column]
    : never;
};

/** The reads of this module, without the database argument. */
export interface SnapshotStore {
  readSnapshotRows<Table extends SnapshotTable>(table: Table): Promise<Array<SnapshotRow<Table>>>;
}

/** Every row of one table, the snapshot's columns only, ordered by its key. */
export async function readSnapshotRows<Table extends SnapshotTable>(
  db: StudyDatabase,
  table: Table,
): Promise<Array<SnapshotRow<Table>>> {
  let query = db.selectFrom(table as never).select([...SNAPSHOT_COLUMNS[table]] as never);
  for (const column of SNAPSHOT_ORDER[table]) query = query.orderBy(column as never);
  return (await query.execute()) as Array<SnapshotRow<Table>>;
}
