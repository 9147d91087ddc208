/**
 * What `kloop run` reads and writes of a study's runs beside the loop's own
 * records (src/loop/notebook.ts): whether any calibration is stored, the
 * interrupted mark of a run ended by the grace timer, the count of a run's
 * experiments for the lease-lost report, and the run's final report.
 */
import type { StudyDatabase } from '../study-database.ts';

/** The functions of this module, without their database argument (for the notebook interface). */
export interface RunQueriesStore {
  hasCalibration(): Promise<boolean>;
  markRunInterrupted(runId: number, endedAt?: Date): Promise<void>;
  countRunExperiments(runId: number): Promise<number>;
  storeRunReport(runId: number, report: unknown): Promise<void>;
}

/** True when the notebook holds at least one calibration (of any evaluator). */
export async function hasCalibration(db: StudyDatabase): Promise<boolean> {
  return (await db.selectFrom('calibrations').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Records run `runId` as ended with the stop reason `interrupted` at
 * `endedAt` (default now), unless it has ended already (a run that ended on
 * its own keeps its stop).
 */
export async function markRunInterrupted(db: StudyDatabase, runId: number, endedAt = new Date()): Promise<void> {
  await db
    .updateTable('runs')
    .set({ ended_at: endedAt.toISOString(), stop_reason: 'interrupted' })
    .where('id', '=', runId)
    .where('ended_at', 'is', null)
    .execute();
}

/** The number of experiments (any decision) recorded by run `runId`; 0 for an unknown run. */
export async function countRunExperiments(db: StudyDatabase, runId: number): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Replaces the stored report of run `runId` with `report` (stored as JSON). */
export async function storeRunReport(db: StudyDatabase, runId: number, report: unknown): Promise<void> {
  await db
    .updateTable('runs')
    .set({ report: JSON.stringify(report) })
    .where('id', '=', runId)
    .execute();
}
