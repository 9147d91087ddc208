/**
 * The notebook's corpus lifecycle: the `corpus_members` and `corpus_events`
 * tables (migration `0003_corpus_lifecycle`). Rows are storage-level shapes
 * (the tables' columns; JSON columns as text): src/corpus/lifecycle-store.ts
 * turns them into members and events.
 *
 * The one synchronous reader, `readCorpusMemberRowsFile`, opens the SQLite
 * file itself and is in corpus-members-file.ts: this module loads no driver.
 *
 * @module
 */
import { sql } from 'kysely';
import type { StudyDatabase } from '../study-database.ts';
import type { CorpusMemberTable } from '../schema.ts';

/** A `corpus_members` row. */
export type CorpusMemberRow = CorpusMemberTable;

/** A `corpus_events` row (`details` is JSON text). */
export interface CorpusEventRow {
  id: number;
  example_id: string | null;
  kind: string;
  from_partition: string | null;
  to_partition: string | null;
  reason: string;
  experiment_id: number | null;
  details: string;
  created_at: string;
}

/** A `corpus_events` row to append (the database assigns the id). */
export type NewCorpusEventRow = Omit<CorpusEventRow, 'id'>;

/** What the history says of the members, as rows: src/corpus/lifecycle-store.ts annotates the members with it. */
export interface CorpusHistoryRows {
  /** The latest move into a partition of each member (`details` JSON text). */
  lastMoves: Array<{ example_id: string; kind: string; details: string }>;
  /** The latest admission of each admitted member (`details` JSON text: its line). */
  admissions: Array<{ example_id: string; details: string }>;
  /** The round in which each member last entered shadow (0: before any experiment). */
  shadowEntries: Array<{ example_id: string; round: number }>;
  /** The last round of the notebook (0 before any experiment). */
  lastRound: number;
  /** The last reset, newest first (at most one): its id and `details` JSON text. */
  resets: Array<{ id: number; details: string }>;
  /** The id of the event by which each member last entered shadow. */
  shadowEntryEvents: Array<{ example_id: string; id: number }>;
}

/** The members' rows, and — when there is at least one member — what the history says of them. */
export interface CorpusMemberRows {
  members: CorpusMemberRow[];
  history: CorpusHistoryRows | null;
}

/** The corpus store: what it exports, without the `db` argument (the notebook interface aggregates it). */
export interface CorpusStore {
  readCorpusMemberRows(): Promise<CorpusMemberRows>;
  readCorpusEventRows(kind?: string): Promise<CorpusEventRow[]>;
  writeCorpusMemberRows(rows: readonly CorpusMemberRow[]): Promise<void>;
  appendCorpusEventRows(rows: readonly NewCorpusEventRow[]): Promise<void>;
  incrementShadowExposures(shadowIds: readonly string[], now: () => Date): Promise<void>;
}

const LAST_MOVES_SQL = `select e.example_id as example_id, e.kind as kind, e.to_partition as to_partition, e.details as details
  from corpus_events e
  where e.id in (select max(id) from corpus_events where example_id is not null and to_partition is not null group by example_id)`;
const ADMISSIONS_SQL = `select example_id, details from corpus_events
  where id in (select max(id) from corpus_events where kind = 'admitted' and example_id is not null group by example_id)`;
const SHADOW_ENTRY_SQL = `select e.example_id as example_id, coalesce(x.round, 0) as round
  from corpus_events e left join experiments x on x.id = e.experiment_id
  where e.id in (select max(id) from corpus_events where to_partition = 'shadow' and example_id is not null group by example_id)`;
const LAST_ROUND_SQL = 'select coalesce(max(round), 0) as round from experiments';
const LAST_RESET_SQL = "select id, details from corpus_events where kind = 'reset' order by id desc limit 1";
const SHADOW_ENTRY_EVENT_SQL = `select example_id, max(id) as id from corpus_events where to_partition = 'shadow' and example_id is not null group by example_id`;

/** The history rows, read with `all` (one statement's rows, through Kysely). */
async function readHistory(all: <Row>(text: string) => Promise<Row[]>): Promise<CorpusHistoryRows> {
  return {
    lastMoves: await all(LAST_MOVES_SQL),
    admissions: await all(ADMISSIONS_SQL),
    shadowEntries: await all(SHADOW_ENTRY_SQL),
    lastRound: Number((await all<{ round: number }>(LAST_ROUND_SQL))[0]?.round ?? 0),
    resets: await all(LAST_RESET_SQL),
    shadowEntryEvents: await all(SHADOW_ENTRY_EVENT_SQL),
  };
}

/** The history rows, synchronously (better-sqlite3: corpus-members-file.ts). */
export function readHistorySync(all: <Row>(text: string) => Row[]): CorpusHistoryRows {
  return {
    lastMoves: all(LAST_MOVES_SQL),
    admissions: all(ADMISSIONS_SQL),
    shadowEntries: all(SHADOW_ENTRY_SQL),
    lastRound: Number(all<{ round: number }>(LAST_ROUND_SQL)[0]?.round ?? 0),
    resets: all(LAST_RESET_SQL),
    shadowEntryEvents: all(SHADOW_ENTRY_EVENT_SQL),
  };
}

/** Every member's row, by example id, and what the history says of them (null when there is no member). */
export async function readCorpusMemberRows(db: StudyDatabase): Promise<CorpusMemberRows> {
  const members = await db.selectFrom('corpus_members').selectAll().orderBy('example_id').execute();
  if (members.length === 0) return { members, history: null };
  const run = async <Row>(text: string): Promise<Row[]> => (await sql<Row>`${sql.raw(text)}`.execute(db)).rows;
  return { members, history: await readHistory(run) };
}

/** Every event, oldest first; only those of `kind` when given. */
export async function readCorpusEventRows(db: StudyDatabase, kind?: string): Promise<CorpusEventRow[]> {
  let query = db.selectFrom('corpus_events').selectAll();
  if (kind !== undefined) query = query.where('kind', '=', kind);
  return query.orderBy('id').execute();
}

/** Writes member rows (insert or replace, by example id). */
export async function writeCorpusMemberRows(db: StudyDatabase, rows: readonly CorpusMemberRow[]): Promise<void> {
  for (const row of rows) {
    await db
      .insertInto('corpus_members')
      .values(row)
      .onConflict((conflict) => conflict.column('example_id').doUpdateSet({ ...row }))
      .execute();
  }
}

/** Appends events to the history, in order. */
export async function appendCorpusEventRows(db: StudyDatabase, rows: readonly NewCorpusEventRow[]): Promise<void> {
  for (const row of rows) await db.insertInto('corpus_events').values(row).execute();
}

/**
 * +1 shadow exposure, stamped `now`, for each of `shadowIds` still in
 * shadow (the shadow examples a gate decision evaluated); in batches of 500
 * ids. Call it in the transaction that records the decision.
 */
export async function incrementShadowExposures(
  db: StudyDatabase,
  shadowIds: readonly string[],
  now: () => Date,
): Promise<void> {
  if (shadowIds.length === 0) return;
  const at = now().toISOString();
  for (let start = 0; start < shadowIds.length; start += 500) {
    await db
      .updateTable('corpus_members')
      .set((eb) => ({ shadow_exposures: eb('shadow_exposures', '+', 1), updated_at: at }))
      .where('example_id', 'in', shadowIds.slice(start, start + 500))
      .where('partition', '=', 'shadow')
      .execute();
  }
}
