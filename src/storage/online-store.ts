/**
 * The notebook of online studies: experiments, exposures and outcomes
 * (migration 0008), on SQLite and PostgreSQL through one small interface.
 *
 * - An exposure is the first assignment of a unit in an experiment: inserted
 *   with `on conflict do nothing` on (experiment, unit) and read back, so two
 *   processes assigning the same unit at once store one row and both serve
 *   its arm (sticky).
 * - An outcome is one row per (unit, metric, time): a re-sent outcome is a
 *   duplicate, counted as such, never a second row.
 * - Times are ISO strings from `Date.toISOString()` (UTC, milliseconds), so
 *   text comparison is time order on both backends.
 *
 * Only the online study handle (src/online/study/) writes through this.
 */
import type { Selectable } from 'kysely';
import type { StudyDatabase } from './study-database.ts';
import type { OnlineExperimentTable } from './online-schema.ts';

export type { ArmStatisticsQuery } from './online-arm-statistics.ts';
export { armStatistics, assignmentPeriods, exposureCounts } from './online-arm-statistics.ts';
export type { OnlineLookRecord } from './online-looks.ts';
export { listOnlineLooks, recordOnlineLook } from './online-looks.ts';

/** An arm of an online experiment. */
export type OnlineArm = 'incumbent' | 'candidate';
/** The window a unit belongs to: the decision window (the proposer may learn from it) or the confirmation window (it never sees it). */
export type ExposureWindow = 'decision' | 'confirmation';
/** Where an online experiment stands. */
export type OnlineExperimentStatus = 'decision' | 'confirmation' | 'accepted' | 'refused' | 'invalid' | 'calibrated';

/** An online experiment (read-only record). */
export interface OnlineExperimentRecord {
  readonly id: number;
  /** `aa` (the A/A calibration) or `ab`. */
  readonly kind: 'aa' | 'ab';
  readonly incumbentVersionId: number;
  readonly candidateVersionId: number;
  readonly status: OnlineExperimentStatus;
  readonly rampStep: number;
  readonly rampChangedAt: string;
  readonly rationale: string;
  readonly proposer: string;
  readonly startedAt: string;
  readonly confirmationStartedAt: string | null;
  readonly decidedAt: string | null;
  readonly reason: string | null;
  /** The parsed evidence JSON (checks, looks, frozen decision statistics), or null. */
  readonly evidence: Record<string, unknown> | null;
}

/** An exposure (read-only record). */
export interface ExposureRecord {
  readonly experimentId: number;
  readonly unit: string;
  readonly arm: OnlineArm;
  readonly versionId: number;
  readonly window: ExposureWindow;
  readonly share: number;
  readonly exposedAt: string;
}

/** An outcome as it is recorded. */
export interface OutcomeInput {
  readonly unit: string;
  readonly metric: string;
  readonly value: number;
  /** ISO time (normalized by the caller with `toISOString()`). */
  readonly at: string;
}

/** A row of `online_experiments` as read (its schema: src/storage/online-schema.ts). */
type ExperimentRow = Selectable<OnlineExperimentTable>;

function experimentOf(row: ExperimentRow): OnlineExperimentRecord {
  return {
    id: row.id,
    kind: row.kind as 'aa' | 'ab',
    incumbentVersionId: row.incumbent_version_id,
    candidateVersionId: row.candidate_version_id,
    status: row.status as OnlineExperimentStatus,
    rampStep: row.ramp_step,
    rampChangedAt: row.ramp_changed_at,
    rationale: row.rationale,
    proposer: row.proposer,
    startedAt: row.started_at,
    confirmationStartedAt: row.confirmation_started_at,
    decidedAt: row.decided_at,
    reason: row.reason,
    evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as Record<string, unknown>),
  };
}

/** Every online experiment, oldest first. */
export async function listOnlineExperiments(db: StudyDatabase): Promise<OnlineExperimentRecord[]> {
  return (await db.selectFrom('online_experiments').selectAll().orderBy('id').execute()).map(experimentOf);
}

/** The experiment taking traffic (status `decision` or `confirmation`), or undefined. */
export async function runningOnlineExperiment(db: StudyDatabase): Promise<OnlineExperimentRecord | undefined> {
  const row = await db
    .selectFrom('online_experiments')
    .selectAll()
    .where('status', 'in', ['decision', 'confirmation'])
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row === undefined ? undefined : experimentOf(row);
}

/** Starts an experiment in its decision window at ramp step 0. */
export async function startOnlineExperiment(
  db: StudyDatabase,
  start: {
    kind: 'aa' | 'ab';
    incumbentVersionId: number;
    candidateVersionId: number;
    rationale: string;
    proposer: string;
    at: string;
  },
): Promise<OnlineExperimentRecord> {
  const row = await db
    .insertInto('online_experiments')
    .values({
      kind: start.kind,
      incumbent_version_id: start.incumbentVersionId,
      candidate_version_id: start.candidateVersionId,
      status: 'decision',
      ramp_step: 0,
      ramp_changed_at: start.at,
      rationale: start.rationale,
      proposer: start.proposer,
      started_at: start.at,
      confirmation_started_at: null,
      decided_at: null,
      reason: null,
      evidence: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return experimentOf(row);
}

/** A change of an experiment's state (only the given fields change). */
export interface OnlineExperimentUpdate {
  status?: OnlineExperimentStatus;
  rampStep?: number;
  rampChangedAt?: string;
  confirmationStartedAt?: string;
  decidedAt?: string;
  reason?: string;
  evidence?: Record<string, unknown>;
}

/** Records a change of an experiment's state, in one statement. */
export async function updateOnlineExperiment(
  db: StudyDatabase,
  id: number,
  update: OnlineExperimentUpdate,
): Promise<void> {
  const set: Partial<ExperimentRow> = {};
  if (update.status !== undefined) set.status = update.status;
  if (update.rampStep !== undefined) set.ramp_step = update.rampStep;
  if (update.rampChangedAt !== undefined) set.ramp_changed_at = update.rampChangedAt;
  if (update.confirmationStartedAt !== undefined) set.confirmation_started_at = update.confirmationStartedAt;
  if (update.decidedAt !== undefined) set.decided_at = update.decidedAt;
  if (update.reason !== undefined) set.reason = update.reason;
  if (update.evidence !== undefined) set.evidence = JSON.stringify(update.evidence);
  if (Object.keys(set).length > 0) await db.updateTable('online_experiments').set(set).where('id', '=', id).execute();
}

/** An exposure to record, with the end of its attribution window. */
export type ExposureToRecord = ExposureRecord & { attributionEndsAt: string };

function exposureOf(row: {
  experiment_id: number;
  unit: string;
  arm: string;
  version_id: number;
  window: string;
  share: number;
  exposed_at: string;
}): ExposureRecord {
  return {
    experimentId: row.experiment_id,
    unit: row.unit,
    arm: row.arm as OnlineArm,
    versionId: row.version_id,
    window: row.window as ExposureWindow,
    share: row.share,
    exposedAt: row.exposed_at,
  };
}

/**
 * Records the first exposure of each unit in an experiment, or keeps the one
 * stored (sticky: another process may have stored it first); returns the
 * stored exposures, in the order given. All in the experiment of the first.
 */
export async function recordExposures(
  db: StudyDatabase,
  exposures: readonly ExposureToRecord[],
): Promise<ExposureRecord[]> {
  const stored = new Map<string, ExposureRecord>();
  for (let start = 0; start < exposures.length; start += 200) {
    const slice = exposures.slice(start, start + 200);
    const inserted = await db
      .insertInto('exposures')
      .values(
        slice.map((exposure) => ({
          experiment_id: exposure.experimentId,
          unit: exposure.unit,
          arm: exposure.arm,
          version_id: exposure.versionId,
          window: exposure.window,
          share: exposure.share,
          exposed_at: exposure.exposedAt,
          attribution_ends_at: exposure.attributionEndsAt,
        })),
      )
      .onConflict((conflict) => conflict.columns(['experiment_id', 'unit']).doNothing())
      .returningAll()
      .execute();
    for (const row of inserted) stored.set(row.unit, exposureOf(row));
    const missing = slice.filter((exposure) => !stored.has(exposure.unit)).map((exposure) => exposure.unit);
    if (missing.length === 0) continue;
    const earlier = await db
      .selectFrom('exposures')
      .selectAll()
      .where('experiment_id', '=', slice[0]!.experimentId)
      .where('unit', 'in', missing)
      .execute();
    for (const row of earlier) stored.set(row.unit, exposureOf(row));
  }
  return exposures.map((exposure) => stored.get(exposure.unit)!);
}

/** The earliest exposure time of each of `units` that has one (units never exposed are absent). */
export async function firstExposures(db: StudyDatabase, units: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let start = 0; start < units.length; start += 500) {
    const slice = units.slice(start, start + 500);
    const rows = await db
      .selectFrom('exposures')
      .select(['unit', (eb) => eb.fn.min('exposed_at').as('first')])
      .where('unit', 'in', slice)
      .groupBy('unit')
      .execute();
    for (const row of rows) found.set(row.unit, String(row.first));
  }
  return found;
}

/**
 * Stores outcomes, each once: one already stored for the same unit, metric
 * and time is a duplicate (re-sent), not a second row. All in one transaction.
 *
 * @returns how many were stored and how many were duplicates
 */
export async function recordOutcomes(
  db: StudyDatabase,
  outcomes: readonly OutcomeInput[],
  source: string,
  receivedAt: string,
): Promise<{ stored: number; duplicates: number }> {
  if (outcomes.length === 0) return { stored: 0, duplicates: 0 };
  return db.transaction().execute(async (transaction) => {
    let stored = 0;
    for (let start = 0; start < outcomes.length; start += 200) {
      const rows = outcomes.slice(start, start + 200).map((outcome) => ({
        unit: outcome.unit,
        metric: outcome.metric,
        value: outcome.value,
        at: outcome.at,
        source,
        received_at: receivedAt,
      }));
      const inserted = await transaction
        .insertInto('outcomes')
        .values(rows)
        .onConflict((conflict) => conflict.columns(['unit', 'metric', 'at']).doNothing())
        .returning('id')
        .execute();
      stored += inserted.length;
    }
    return { stored, duplicates: outcomes.length - stored };
  });
}

/** Records refused outcome lines (line number, reason, the line capped at 300 characters). */
export async function recordOutcomeRefusals(
  db: StudyDatabase,
  refusals: readonly { line: number; reason: string; text: string }[],
  source: string,
  receivedAt: string,
): Promise<void> {
  if (refusals.length === 0) return;
  await db
    .insertInto('outcome_refusals')
    .values(
      refusals.slice(0, 1000).map((refusal) => ({
        source,
        line: refusal.line,
        reason: refusal.reason,
        text: refusal.text.slice(0, 300),
        received_at: receivedAt,
      })),
    )
    .execute();
}

/** Reads a value of the study's key–value state (`study_state`). */
export async function readOnlineState(db: StudyDatabase, key: string): Promise<string | undefined> {
  return (await db.selectFrom('study_state').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/** Writes a value of the study's key–value state (`study_state`). */
export async function writeOnlineState(db: StudyDatabase, key: string, value: string): Promise<void> {
  await db
    .insertInto('study_state')
    .values({ key, value })
    .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
    .execute();
}
