/** The looks of online experiments (src/storage/online-store.ts): each sequential test's reading, stored. */
import type { StudyDatabase } from './study-database.ts';
import type { ExposureWindow } from './online-store.ts';

/** One stored look of the online gate (migration 0010): the primary metric on the decision window at that time. */
export interface OnlineLookRecord {
  readonly experimentId: number;
  /** 1-based. */
  readonly look: number;
  /** ISO time of the look. */
  readonly at: string;
  readonly window: ExposureWindow;
  /** Closed units per arm of the primary metric's decision window at the look. */
  readonly units: { readonly incumbent: number; readonly candidate: number };
  readonly incumbentMean: number;
  readonly candidateMean: number;
  /** Δ, oriented so positive is better for the candidate. */
  readonly delta: number;
  /** The primary check's anytime-valid interval for Δ (ends null when unbounded), null when the check did not run. */
  readonly interval: { readonly lower: number | null; readonly upper: number | null; readonly level: number } | null;
  /** The primary check's always-valid p-value, null when it did not run. */
  readonly pValue: number | null;
  /** `continue`, `accept` or `refuse`. */
  readonly outcome: string;
  /** The refusal reason, or the check the experiment waits for. */
  readonly reason: string | null;
  /** Every check run at the look, in the gate's order. */
  readonly checks: readonly { readonly name: string; readonly verdict: string }[];
}

const finiteOrNull = (value: number | null | undefined): number | null =>
  value === null || value === undefined || !Number.isFinite(value) ? null : value;

/** Records one look (unique per experiment and look number). */
export async function recordOnlineLook(db: StudyDatabase, look: OnlineLookRecord): Promise<void> {
  await db
    .insertInto('online_looks')
    .values({
      experiment_id: look.experimentId,
      look: look.look,
      at: look.at,
      window: look.window,
      incumbent_units: look.units.incumbent,
      candidate_units: look.units.candidate,
      incumbent_mean: look.incumbentMean,
      candidate_mean: look.candidateMean,
      delta: look.delta,
      lower: finiteOrNull(look.interval?.lower),
      upper: finiteOrNull(look.interval?.upper),
      level: look.interval?.level ?? null,
      p_value: finiteOrNull(look.pValue),
      outcome: look.outcome,
      reason: look.reason,
      checks: JSON.stringify(look.checks),
    })
    .execute();
}

/** The stored looks of every online experiment (or of one), by experiment then look. */
export async function listOnlineLooks(db: StudyDatabase, experimentId?: number): Promise<OnlineLookRecord[]> {
  let query = db.selectFrom('online_looks').selectAll().orderBy('experiment_id').orderBy('look');
  if (experimentId !== undefined) query = query.where('experiment_id', '=', experimentId);
  return (await query.execute()).map((row) => ({
    experimentId: row.experiment_id,
    look: row.look,
    at: row.at,
    window: row.window as ExposureWindow,
    units: { incumbent: row.incumbent_units, candidate: row.candidate_units },
    incumbentMean: row.incumbent_mean,
    candidateMean: row.candidate_mean,
    delta: row.delta,
    interval: row.level === null ? null : { lower: row.lower, upper: row.upper, level: row.level },
    pValue: row.p_value,
    outcome: row.outcome,
    reason: row.reason,
    checks: JSON.parse(row.checks) as OnlineLookRecord['checks'],
  }));
}
