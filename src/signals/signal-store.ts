/**
 * Persisting and reading signals (the `signals` table). Writes are
 * idempotent by signal id: `INSERT ... ON CONFLICT (id) DO NOTHING`, so a
 * signal sent twice — in one batch, in two files, or by two producers — is
 * stored once and counted as a duplicate (the first one wins).
 */
import type { StudyDatabase } from '../storage/database.ts';
import type { Signal, SignalSource, StoredSignal } from './signal.ts';
import { fromSignalRow, toSignalRow } from './signal.ts';

/** Rows inserted per statement (12 columns each, well under SQLite's variable limit). */
const BATCH_SIZE = 200;

/** Options of {@link storeSignals}. */
export interface StoreSignalsOptions {
  source: SignalSource;
  /** Store goal texts. Default true (`signals.storeGoals`). */
  storeGoals?: boolean;
  now?: () => Date;
}

/** What {@link storeSignals} did. */
export interface StoreSignalsResult {
  /** Signals newly stored. */
  stored: number;
  /** Signals whose id was already stored (or repeated in the input): not stored again. */
  duplicates: number;
}

/**
 * Stores validated signals in one transaction. Idempotent by id.
 *
 * @param db the study database (or a transaction)
 */
export async function storeSignals(
  db: StudyDatabase,
  signals: readonly Signal[],
  options: StoreSignalsOptions,
): Promise<StoreSignalsResult> {
  if (signals.length === 0) return { stored: 0, duplicates: 0 };
  const receivedAt = (options.now ?? (() => new Date()))().toISOString();
  const rows = signals.map((signal) =>
    toSignalRow(signal, {
      source: options.source,
      receivedAt,
      ...(options.storeGoals !== undefined ? { storeGoals: options.storeGoals } : {}),
    }),
  );
  let stored = 0;
  await db.transaction().execute(async (transaction) => {
    for (let start = 0; start < rows.length; start += BATCH_SIZE) {
      const result = await transaction
        .insertInto('signals')
        .values(rows.slice(start, start + BATCH_SIZE))
        .onConflict((conflict) => conflict.column('id').doNothing())
        .executeTakeFirst();
      stored += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
  });
  return { stored, duplicates: signals.length - stored };
}

/** A time range `from < time ≤ to` (ISO 8601 instants). */
export interface SignalTimeRange {
  from: Date;
  to: Date;
}

/**
 * Reads the signals whose `time` lies in `from < time ≤ to`, oldest first,
 * page by page (memory stays bounded by the page size, `onSignal` sees each
 * signal once).
 *
 * Times are compared as instants: rows are pre-selected on the stored text
 * with a one-day margin (a producer may have stored an offset time) and then
 * filtered exactly.
 */
export async function forEachSignalInRange(
  db: StudyDatabase,
  range: SignalTimeRange,
  onSignal: (signal: StoredSignal) => void,
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
      onSignal(fromSignalRow(row));
      count += 1;
    }
    const last = rows[rows.length - 1];
    if (rows.length < pageSize || last === undefined) break;
    after = { time: last.time, id: last.id };
  }
  return count;
}

/** Every signal in the range, oldest first (convenience over {@link forEachSignalInRange}). */
export async function readSignalsInRange(db: StudyDatabase, range: SignalTimeRange): Promise<StoredSignal[]> {
  const signals: StoredSignal[] = [];
  await forEachSignalInRange(db, range, (signal) => signals.push(signal));
  return signals;
}

/** Number of stored signals. */
export async function countSignals(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('signals')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
