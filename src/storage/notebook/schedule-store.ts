/**
 * The record of a study's schedule (src/schedule/schedule.ts): one row of
 * `schedule_runs` per scheduled run of a loop, with its outcome and a JSON
 * detail.
 */
import type { StudyDatabase } from '../study-database.ts';

/** Any scheduled loop: the four of an offline study (A–D), or an online study's two (`fast`, `slow`). */
export type ScheduledLoopName = 'A' | 'B' | 'C' | 'D' | 'fast' | 'slow';

/**
 * Outcome of one scheduled run. `overlap`: refused because the same loop was
 * still running; `interrupted`: the schedule stopped while it ran.
 */
export type ScheduleRunOutcome = 'running' | 'ok' | 'failed' | 'skipped' | 'interrupted' | 'overlap';

/** One row of `schedule_runs` (read-only record; times ISO 8601). */
export interface ScheduleRunRecord {
  readonly id: number;
  readonly loop: ScheduledLoopName;
  readonly scheduledAt: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly outcome: ScheduleRunOutcome;
  /** The stored JSON detail, parsed (the raw text when it is not JSON). */
  readonly detail: unknown;
}

/** A run that starts (or, with `endedAt`, a run recorded already over, as an overlap is). */
export interface NewScheduleRun {
  loop: ScheduledLoopName;
  /** When the cadence fired (or the manual trigger), ISO 8601. */
  scheduledAt: string;
  startedAt: string;
  endedAt: string | null;
  outcome: ScheduleRunOutcome;
  /** Serialized as JSON. */
  detail: Readonly<Record<string, unknown>>;
}

/** The end of a run. */
export interface ScheduleRunEnd {
  endedAt: string;
  outcome: ScheduleRunOutcome;
  /** Serialized as JSON. */
  detail: Readonly<Record<string, unknown>>;
}

/** The functions of this module, without their `db` argument. */
export interface ScheduleStore {
  listScheduleRuns(options?: { loop?: ScheduledLoopName; limit?: number }): Promise<ScheduleRunRecord[]>;
  insertScheduleRun(run: NewScheduleRun): Promise<ScheduleRunRecord>;
  endScheduleRun(id: number, end: ScheduleRunEnd): Promise<ScheduleRunRecord>;
  countDecidedExperiments(): Promise<number>;
}

function toRecord(row: {
  id: number;
  loop: string;
  scheduled_at: string;
  started_at: string;
  ended_at: string | null;
  outcome: string;
  detail: string;
}): ScheduleRunRecord {
  let detail: unknown;
  try {
    detail = JSON.parse(row.detail) as unknown;
  } catch {
    detail = row.detail;
  }
  return Object.freeze({
    id: row.id,
    loop: row.loop as ScheduledLoopName,
    scheduledAt: row.scheduled_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    outcome: row.outcome as ScheduleRunOutcome,
    detail,
  });
}

/** Scheduled runs, oldest first (optionally of one loop, the last `limit`). */
export async function listScheduleRuns(
  db: StudyDatabase,
  options: { loop?: ScheduledLoopName; limit?: number } = {},
): Promise<ScheduleRunRecord[]> {
  let query = db.selectFrom('schedule_runs').selectAll().orderBy('id', 'desc');
  if (options.loop !== undefined) query = query.where('loop', '=', options.loop);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return (await query.execute()).reverse().map(toRecord);
}

/** Records a run (a new row) and returns it with its id. */
export async function insertScheduleRun(db: StudyDatabase, run: NewScheduleRun): Promise<ScheduleRunRecord> {
  const row = await db
    .insertInto('schedule_runs')
    .values({
      loop: run.loop,
      scheduled_at: run.scheduledAt,
      started_at: run.startedAt,
      ended_at: run.endedAt,
      outcome: run.outcome,
      detail: JSON.stringify(run.detail),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

/**
 * Records the end of run `id` and returns the run as it now stands.
 *
 * @throws when no run has that id
 */
export async function endScheduleRun(db: StudyDatabase, id: number, end: ScheduleRunEnd): Promise<ScheduleRunRecord> {
  const row = await db
    .updateTable('schedule_runs')
    .set({ ended_at: end.endedAt, outcome: end.outcome, detail: JSON.stringify(end.detail) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

/** Experiments decided so far (every experiment but the skipped ones: what `stopping.maxExperiments` counts). */
export async function countDecidedExperiments(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .where('decision', '!=', 'skipped')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
