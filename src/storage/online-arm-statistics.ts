/** The aggregates of an online experiment's arms (src/storage/online-store.ts): per-metric statistics, assignment periods, exposure counts. */
import { sql } from 'kysely';
import type { ArmPair, ArmStatistics, AssignmentPeriod } from '../stats/arm-statistics.ts';
import type { StudyDatabase } from './study-database.ts';
import type { ExposureWindow, OnlineArm } from './online-store.ts';

/** Which units' statistics to aggregate. */
export interface ArmStatisticsQuery {
  experimentId: number;
  metric: string;
  kind: 'binary' | 'continuous';
  /** Only units of this window; absent = both. */
  window?: ExposureWindow;
  /** Only units whose attribution window ended at or before this time (ISO). */
  closedBy: string;
}

/**
 * The sufficient statistics of one metric on both arms (src/online/types.ts):
 * per unit, binary = 1 when any outcome with a value above 0 falls within its
 * attribution window, continuous = the sum of those outcomes (0 when none);
 * only units whose window has closed.
 */
export async function armStatistics(db: StudyDatabase, query: ArmStatisticsQuery): Promise<ArmPair> {
  const perUnit = query.kind === 'binary' ? sql`max(case when o.value > 0 then 1.0 else 0.0 end)` : sql`sum(o.value)`;
  const windowFilter = query.window === undefined ? sql`` : sql`and e."window" = ${query.window}`;
  const rows = await sql<{
    arm: string;
    units: number | string;
    total: number | string | null;
    squares: number | string | null;
  }>`
    select u.arm as arm, count(*) as units, sum(u.v) as total, sum(u.v * u.v) as squares from (
      select e.arm as arm, coalesce((select ${perUnit} from outcomes o
        where o.unit = e.unit and o.metric = ${query.metric} and o.at >= e.exposed_at and o.at <= e.attribution_ends_at), 0.0) as v
      from exposures e
      where e.experiment_id = ${query.experimentId} ${windowFilter} and e.attribution_ends_at <= ${query.closedBy}
    ) u group by u.arm`.execute(db);
  const empty: ArmStatistics = { units: 0, sum: 0, sumOfSquares: 0 };
  const arms: Record<OnlineArm, ArmStatistics> = { incumbent: empty, candidate: empty };
  for (const row of rows.rows) {
    arms[row.arm as OnlineArm] = {
      units: Number(row.units),
      sum: Number(row.total ?? 0),
      sumOfSquares: Number(row.squares ?? 0),
    };
  }
  return arms;
}

/** Assignment counts per candidate share (one period per ramp step), every unit of the experiment, in order of share. */
export async function assignmentPeriods(db: StudyDatabase, experimentId: number): Promise<AssignmentPeriod[]> {
  const rows = await db
    .selectFrom('exposures')
    .select(['share', 'arm', (eb) => eb.fn.countAll().as('units')])
    .where('experiment_id', '=', experimentId)
    .groupBy(['share', 'arm'])
    .orderBy('share')
    .execute();
  const periods = new Map<number, { incumbent: number; candidate: number; candidateShare: number }>();
  for (const row of rows) {
    const period = periods.get(row.share) ?? { incumbent: 0, candidate: 0, candidateShare: row.share };
    period[row.arm as OnlineArm] += Number(row.units);
    periods.set(row.share, period);
  }
  return [...periods.values()];
}

/** Units assigned in an experiment, per window and arm, closed or not. */
export async function exposureCounts(
  db: StudyDatabase,
  experimentId: number,
): Promise<Record<ExposureWindow, Record<OnlineArm, number>>> {
  const rows = await db
    .selectFrom('exposures')
    .select(['window', 'arm', (eb) => eb.fn.countAll().as('units')])
    .where('experiment_id', '=', experimentId)
    .groupBy(['window', 'arm'])
    .execute();
  const counts: Record<ExposureWindow, Record<OnlineArm, number>> = {
    decision: { incumbent: 0, candidate: 0 },
    confirmation: { incumbent: 0, candidate: 0 },
  };
  for (const row of rows) counts[row.window as ExposureWindow][row.arm as OnlineArm] = Number(row.units);
  return counts;
}
