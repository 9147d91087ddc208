/**
 * Persisting and reading signals (the `signals` table). Writes are
 * idempotent by signal id: `INSERT ... ON CONFLICT (id) DO NOTHING`, so a
 * signal sent twice — in one batch, in two files, or by two producers — is
 * stored once and counted as a duplicate (the first one wins).
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { countSignalRows, forEachSignalRowInRange, insertSignalRows } from '../storage/notebook/signals-store.ts';
import type { Signal, SignalSource, StoredSignal } from './signal.ts';
import { fromSignalRow, toSignalRow } from './signal.ts';

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
 * @param db the study database (not a transaction: one is opened here)
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
  const stored = await insertSignalRows(db, rows);
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
  return await forEachSignalRowInRange(db, range, (row) => onSignal(fromSignalRow(row)), pageSize);
}

/** Every signal in the range, oldest first (convenience over {@link forEachSignalInRange}). */
export async function readSignalsInRange(db: StudyDatabase, range: SignalTimeRange): Promise<StoredSignal[]> {
  const signals: StoredSignal[] = [];
  await forEachSignalInRange(db, range, (signal) => signals.push(signal));
  return signals;
}

/** Number of stored signals. */
export async function countSignals(db: StudyDatabase): Promise<number> {
  return await countSignalRows(db);
}
