/**
 * The notebook's production signals: the `signals` table (migration
 * `0004_review_and_signals`), one row per runtime call, ingested record or
 * endpoint post. The rows are {@link SignalTable} records (src/storage/schema.ts);
 * turning a validated signal into a row and back is src/signals/signal.ts's
 * `toSignalRow` / `fromSignalRow` (and src/signals/production-signal.ts's for
 * the runtime's record).
 *
 * Writes are idempotent by id: `INSERT ... ON CONFLICT (id) DO NOTHING`, so a
 * signal sent twice is stored once (the first one wins).
 *
 * @example
 * ```ts
 * import { countSignalRows, insertSignalRows } from './signals-store.ts';
 * const stored = await insertSignalRows(db, rows); // rows newly stored
 * await countSignalRows(db); // e.g. 42
 * ```
 */
import type { StudyDatabase } from '../study-database.ts';
import type { SignalTable } from '../schema.ts';

/** Rows inserted per statement by {@link insertSignalRows} (12 columns each, well under SQLite's variable limit). */
export const SIGNAL_INSERT_BATCH_SIZE = 200;

/** A time range `from < time ≤ to` (instants). */
export interface SignalRowRange {
  from: Date;
  to: Date;
}

/** What the signals part of the notebook offers (the functions below without their `db` argument). */
export interface SignalsStore {
  insertSignalRow(row: SignalTable): Promise<boolean>;
  insertSignalRows(rows: readonly SignalTable[]): Promise<number>;
  listSignalRows(options?: { since?: string; limit?: number }): Promise<SignalTable[]>;
  forEachSignalRowInRange(range: SignalRowRange, onRow: (row: SignalTable) => void, pageSize?: number): Promise<number>;
  countSignalRows(): Promise<number>;
}

/**
 * Stores one row, outside any transaction of its own (the runtime's record of
 * one call). Returns true when the row was written, false when its id was
 * already stored (the stored row is left as it is).
 */
export async function insertSignalRow(db: StudyDatabase, row: SignalTable): Promise<boolean> {
  const result = await db
    .insertInto('signals')
    .values(row)
    .onConflict((conflict) => conflict.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * Stores rows in one transaction, {@link SIGNAL_INSERT_BATCH_SIZE} per
 * statement. Returns the number of rows newly stored (rows whose id was
 * already stored, or repeated in `rows`, are not counted). No rows: no
 * transaction, 0.
 *
 * @param db the study database (not a transaction: this one opens its own)
 */
export async function insertSignalRows(db: StudyDatabase, rows: readonly SignalTable[]): Promise<number> {
  if (rows.length === 0) return 0;
  let stored = 0;
  await db.transaction().execute(async (transaction) => {
    for (let start = 0; start < rows.length; start += SIGNAL_INSERT_BATCH_SIZE) {
      const result = await transaction
        .insertInto('signals')
        .values(rows.slice(start, start + SIGNAL_INSERT_BATCH_SIZE))
        .onConflict((conflict) => conflict.column('id').doNothing())
        .executeTakeFirst();
      stored += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
  });
  return stored;
}

/** Stored rows ordered by `time` then `id` (as stored text), optionally from `since` (ISO 8601, inclusive) and at most `limit`. */
export async function listSignalRows(
  db: StudyDatabase,
  options: { since?: string; limit?: number } = {},
): Promise<SignalTable[]> {
  let query = db.selectFrom('signals').selectAll().orderBy('time').orderBy('id');
  if (options.since !== undefined) query = query.where('time', '>=', options.since);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return await query.execute();
}

/**
 * Calls `onRow` with every row whose `time` lies in `from < time ≤ to`,
 * oldest first, page by page (memory stays bounded by `pageSize`, default
 * 2,000; each row is seen once). Returns the number of rows passed on.
 *
 * Times are compared as instants: rows are pre-selected on the stored text
 * with a one-day margin (a producer may have stored an offset time) and then
 * filtered exactly; a row whose time does not parse is skipped.
 */
export async function forEachSignalRowInRange(
  db: StudyDatabase,
  range: SignalRowRange,
  onRow: (row: SignalTable) => void,
  pageSize = 2_000,
): Promise<number> {
  const margin = 24 * 60 * 60 * 1000;
  const lower = new Date(range.from.getTime() - margin).toISOString();
  const upper = new Date(range.to.getTime() + margin).toISOString();
  const fromMs = range.from.getTime();
  const toMs = range.to.getTime();
  let count = 0;
  let after: { time: string; id: string } | undefined;
  for (;;) {
    let query = db.selectFrom('signals').selectAll().where('time', '>', lower).where('time', '<=', upper);
    if (after !== undefined) {
      const cursor = after;
      query = query.where((expression) =>
        expression.or([
          expression('time', '>', cursor.time),
          expression.and([expression('time', '=', cursor.time), expression('id', '>', cursor.id)]),
        ]),
      );
    }
    const rows = await query.orderBy('time').orderBy('id').limit(pageSize).execute();
    for (const row of rows) {
      const instant = Date.parse(row.time);
      if (Number.isNaN(instant) || instant <= fromMs || instant > toMs) continue;
      onRow(row);
      count += 1;
    }
    const last = rows[rows.length - 1];
    if (rows.length < pageSize || last === undefined) break;
    after = { time: last.time, id: last.id };
  }
  return count;
}

/** Number of stored signals. */
export async function countSignalRows(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('signals')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
