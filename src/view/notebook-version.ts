/**
 * The viewer's change fingerprint: one cheap query per table the pages show,
 * so `GET /api/events` can tell the pages to redraw whenever the notebook
 * changed.
 */
import { sql } from 'kysely';
import type { StudyDatabase } from '../storage/database.ts';
import { backendOf, listTables } from '../storage/database.ts';

/**
 * What the change fingerprint reads, one cheap query each: the newest row
 * (or a count) of every table whose rows the pages show. `example_results`
 * has no id column: in SQLite its rowid grows with every stored result (the
 * incumbent's top-ups, a candidate's screening), so the budget redraws while
 * a round runs; PostgreSQL has no rowid, so there its rows are counted. A
 * table the notebook does not have (one written before it, opened read-only)
 * is left out.
 */
const CHANGE_PROBES: ReadonlyArray<{ key: string; table: string; probe: string; postgres?: string }> = [
  { key: 'e', table: 'experiments', probe: 'select max(id) from experiments' },
  { key: 'r', table: 'registry_events', probe: 'select max(id) from registry_events' },
  {
    key: 'x',
    table: 'example_results',
    probe: 'select max(rowid) from example_results',
    postgres: 'select count(*) from example_results',
  },
  { key: 'v', table: 'evaluations', probe: 'select max(id) from evaluations' },
  { key: 'p', table: 'proposals', probe: 'select max(id) from proposals' },
  { key: 'u', table: 'runs', probe: 'select max(id) from runs' },
  { key: 'f', table: 'runs', probe: 'select count(*) from runs where ended_at is not null' },
  { key: 'c', table: 'corpus_events', probe: 'select max(id) from corpus_events' },
  { key: 'd', table: 'review_items', probe: "select count(*) from review_items where status <> 'pending'" },
  { key: 'q', table: 'review_items', probe: 'select max(id) from review_items' },
  { key: 'k', table: 'calibrations', probe: 'select max(id) from calibrations' },
  { key: 'l', table: 'leases', probe: 'select count(*) from leases' },
  // Online studies: a new experiment, a decision, a look (exposures and outcomes arrive too often to redraw on each).
  { key: 'o', table: 'online_looks', probe: 'select max(id) from online_looks' },
  { key: 'n', table: 'online_experiments', probe: 'select max(id) from online_experiments' },
];

/** A cheap fingerprint of everything the pages show: it changes whenever the notebook does (the `change` events of `GET /api/events`). */
export async function notebookVersion(db: StudyDatabase): Promise<string> {
  const tables = await listTables(db);
  const probes = CHANGE_PROBES.filter((probe) => tables.has(probe.table));
  if (probes.length === 0) return '{}';
  const postgres = backendOf(db) === 'postgres';
  const result = await sql<
    Record<string, number | string | null>
  >`select ${sql.raw(probes.map((probe) => `(${postgres ? (probe.postgres ?? probe.probe) : probe.probe}) as ${probe.key}`).join(', '))}`.execute(
    db,
  );
  return JSON.stringify(result.rows[0] ?? {});
}
