/**
 * What `kloop status` reads of a study's notebook beside the registry, the
 * calibrations and the loop state (read by their own modules): the decision
 * and reason of every experiment, and the last run.
 */
import type { StudyDatabase } from '../study-database.ts';

/** An experiment's decision and its reason code (`accepted`, or the refusal or skip reason). */
export interface ExperimentDecision {
  /** `accepted`, `refused` or `skipped`. */
  decision: string;
  /** `accepted`, or the refusal or skip reason code. */
  reason: string;
}

/** A run's start and stop (times ISO 8601 UTC; `endedAt` and `stopReason` null while it is open, or after a crash). */
export interface RunSummary {
  id: number;
  startedAt: string;
  endedAt: string | null;
  stopReason: string | null;
}

/** The functions of this module, without their database argument (for the notebook interface). */
export interface StatusQueriesStore {
  listExperimentDecisions(): Promise<ExperimentDecision[]>;
  readLastRun(): Promise<RunSummary | undefined>;
}

/** The decision and reason of every experiment, in the order the database returns them. */
export async function listExperimentDecisions(db: StudyDatabase): Promise<ExperimentDecision[]> {
  return db.selectFrom('experiments').select(['decision', 'reason']).execute();
}

/** The run of the highest id, or undefined when no run was ever started. */
export async function readLastRun(db: StudyDatabase): Promise<RunSummary | undefined> {
  const row = await db.selectFrom('runs').selectAll().orderBy('id', 'desc').executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, startedAt: row.started_at, endedAt: row.ended_at, stopReason: row.stop_reason };
}
