/**
 * Moving a study's notebook from SQLite to PostgreSQL (`kloop
 * migrate-storage <study> --to postgres://…`): every row of every table,
 * ids kept, copied in one transaction into an empty PostgreSQL schema
 * (migrated to the latest version first, as the SQLite file is), then each
 * id sequence set past the largest id copied, so the next row continues the
 * numbering. Leases are not copied (they name processes and folders of the
 * SQLite study). The SQLite file is left as it was: pointing the study at the
 * new database (`storage:` in kloop.yaml, or `--db`) is the user's step.
 */
import { sql } from 'kysely';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from './study-database.ts';
import { backendOf, listTables } from './study-database.ts';

/** Tables copied first, in this order (the ones others point at); every other table follows, by name. */
const FIRST = [
  'artifact_versions',
  'registry',
  'evaluations',
  'evaluation_examples',
  'loop_a_runs',
  'loop_a_decisions',
];
/** Not copied: the migrator's bookkeeping (the target has its own) and the leases (processes of the source). */
const SKIPPED = new Set(['kysely_migration', 'kysely_migration_lock', 'leases']);
/** Tables whose `id` is generated (a sequence on PostgreSQL). */
const GENERATED_IDS = new Set([
  'artifact_versions',
  'registry_events',
  'runs',
  'experiments',
  'evaluations',
  'calibrations',
  'review_items',
  'loop_a_runs',
  'loop_a_decisions',
  'corpus_events',
  'schedule_runs',
  'proposals',
]);
/** Most bound parameters in one insert (PostgreSQL allows 65 535). */
const MAX_PARAMETERS = 30_000;

/** What was copied. */
export interface StorageMigration {
  /** Rows copied, by table. */
  tables: Record<string, number>;
  rows: number;
}

/**
 * Copies a SQLite notebook into an empty PostgreSQL one.
 *
 * @param source the SQLite study database (migrated to the latest version)
 * @param target the PostgreSQL study database (migrated, empty)
 * @throws InputError when the source is not SQLite, the target not PostgreSQL, or the target already holds a notebook's rows
 */
export async function copyNotebook(source: StudyDatabase, target: StudyDatabase): Promise<StorageMigration> {
  if (backendOf(source) !== 'sqlite')
    throw new InputError('the study already keeps its notebook in PostgreSQL', { field: 'storage' });
  if (backendOf(target) !== 'postgres')
    throw new InputError('--to must be a PostgreSQL URL (postgres://…)', { field: '--to' });
  const sourceTables = await listTables(source);
  const targetTables = await listTables(target);
  const tables = [
    ...FIRST.filter((name) => sourceTables.has(name)),
    ...[...sourceTables].filter((name) => !FIRST.includes(name)).sort(),
  ].filter((name) => !SKIPPED.has(name));
  for (const name of tables) {
    if (!targetTables.has(name))
      throw new InputError(
        `the PostgreSQL notebook has no table ${name}: is it a kloop notebook of an older version?`,
        { field: '--to' },
      );
  }
  return target.transaction().execute(async (transaction) => {
    for (const name of tables) {
      const found = await sql<{ n: number }>`select count(*) as n from ${sql.id(name)}`.execute(transaction);
      if (Number(found.rows[0]?.n ?? 0) > 0) {
        throw new InputError(
          `the PostgreSQL schema already holds a notebook (table ${name} has rows): migrate into an empty schema (?schema=NAME picks one)`,
          { field: '--to', code: 'input.storage' },
        );
      }
    }
    const copied: Record<string, number> = {};
    let total = 0;
    for (const name of tables) {
      const order = GENERATED_IDS.has(name) ? sql`order by id` : sql``;
      const rows = (await sql<Record<string, unknown>>`select * from ${sql.id(name)} ${order}`.execute(source)).rows;
      copied[name] = rows.length;
      total += rows.length;
      if (rows.length === 0) continue;
      const columns = Object.keys(rows[0]!);
      const chunk = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
      for (let start = 0; start < rows.length; start += chunk) {
        const values = rows
          .slice(start, start + chunk)
          .map((row) => sql`(${sql.join(columns.map((column) => row[column] as unknown))})`);
        await sql`insert into ${sql.id(name)} (${sql.join(columns.map((column) => sql.id(column)))}) values ${sql.join(values)}`.execute(
          transaction,
        );
      }
      if (GENERATED_IDS.has(name)) {
        await sql`select setval(pg_get_serial_sequence(${name}, 'id'), (select max(id) from ${sql.id(name)}))`.execute(
          transaction,
        );
      }
    }
    return { tables: copied, rows: total };
  });
}
