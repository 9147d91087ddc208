/**
 * The notebook's calibrations: the `calibrations` table
 * (src/storage/schema.ts), one row per calibration, failed ones included
 * (`valid` false). Calibration itself (src/calibration/) and the commands
 * that show it call these and never issue SQL.
 *
 * @module
 */
import type { Selectable } from 'kysely';
import type { StudyDatabase } from '../study-database.ts';
import type { CalibrationTable } from '../schema.ts';

/** A stored calibration (read-only record of one `calibrations` row). */
export interface CalibrationRecord {
  readonly id: number;
  readonly fingerprint: string;
  readonly model: string;
  /** Content hash of the incumbent that was calibrated. */
  readonly artifactHash: string;
  readonly noiseRepeats: number;
  readonly signalRepeats: number;
  /** Run-to-run SD of the optimization partition's run-level composite (composite units, [0, 1] scale). */
  readonly noiseSd: number;
  /** Example id → SD of its composite across noise repeats (absent: fewer than 2 valid repeats). */
  readonly exampleSds: Readonly<Record<string, number>>;
  /** Partition → run-to-run SD of its run-level composite. */
  readonly partitionSds: Readonly<Record<string, number>>;
  /** Cohen's d, incumbent minus contrast, on per-example mean composites; null when undefined (NaN). */
  readonly cohensD: number | null;
  /** τ = k × rolling max noise SD. */
  readonly threshold: number;
  readonly valid: boolean;
  readonly message: string;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
}

/** A calibration to store: a {@link CalibrationRecord} without its id. */
export type NewCalibration = Omit<CalibrationRecord, 'id'>;

/** The record of one `calibrations` row (its JSON columns parsed, the result frozen). */
function calibrationRecordOf(row: Selectable<CalibrationTable>): CalibrationRecord {
  return Object.freeze({
    id: row.id,
    fingerprint: row.fingerprint,
    model: row.model,
    artifactHash: row.artifact_hash,
    noiseRepeats: row.noise_repeats,
    signalRepeats: row.signal_repeats,
    noiseSd: row.noise_sd,
    exampleSds: Object.freeze(JSON.parse(row.example_sds) as Record<string, number>),
    partitionSds: Object.freeze(JSON.parse(row.partition_sds) as Record<string, number>),
    cohensD: row.cohens_d,
    threshold: row.threshold,
    valid: row.valid === 1,
    message: row.message,
    createdAt: row.created_at,
  });
}

/**
 * Stores one calibration.
 *
 * @returns its record as stored (the SD maps as read back from their JSON)
 */
export async function insertCalibration(db: StudyDatabase, calibration: NewCalibration): Promise<CalibrationRecord> {
  const values: Omit<Selectable<CalibrationTable>, 'id'> = {
    fingerprint: calibration.fingerprint,
    model: calibration.model,
    artifact_hash: calibration.artifactHash,
    noise_repeats: calibration.noiseRepeats,
    signal_repeats: calibration.signalRepeats,
    noise_sd: calibration.noiseSd,
    example_sds: JSON.stringify(calibration.exampleSds),
    partition_sds: JSON.stringify(calibration.partitionSds),
    cohens_d: calibration.cohensD,
    threshold: calibration.threshold,
    valid: calibration.valid ? 1 : 0,
    message: calibration.message,
    created_at: calibration.createdAt,
  };
  const inserted = await db.insertInto('calibrations').values(values).returning('id').executeTakeFirstOrThrow();
  return calibrationRecordOf({ id: inserted.id, ...values });
}

/**
 * The newest valid calibrations of a fingerprint, newest first.
 *
 * @param options.model when given, only calibrations stored for this model
 * @param options.limit most records returned (0 returns none)
 */
export async function listValidCalibrations(
  db: StudyDatabase,
  fingerprint: string,
  options: { model?: string; limit: number },
): Promise<CalibrationRecord[]> {
  let query = db.selectFrom('calibrations').selectAll().where('fingerprint', '=', fingerprint).where('valid', '=', 1);
  if (options.model !== undefined) query = query.where('model', '=', options.model);
  const rows = await query.orderBy('id', 'desc').limit(options.limit).execute();
  return rows.map(calibrationRecordOf);
}

/**
 * The noise SDs of the newest valid calibrations of a fingerprint (any
 * model), newest first: the rolling window a new calibration's threshold
 * looks over.
 *
 * @param limit most SDs returned (0 returns none)
 */
export async function recentNoiseSds(db: StudyDatabase, fingerprint: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('calibrations')
    .select('noise_sd')
    .where('fingerprint', '=', fingerprint)
    .where('valid', '=', 1)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.noise_sd);
}

/** Every stored calibration (valid or not), newest first; only `fingerprint`'s when given. */
export async function listCalibrations(db: StudyDatabase, fingerprint?: string): Promise<CalibrationRecord[]> {
  let query = db.selectFrom('calibrations').selectAll();
  if (fingerprint !== undefined) query = query.where('fingerprint', '=', fingerprint);
  const rows = await query.orderBy('id', 'desc').execute();
  return rows.map(calibrationRecordOf);
}

/** The calibrations store's functions, the database bound (the lead aggregates these into the notebook interface). */
export interface CalibrationsStore {
  insertCalibration(calibration: NewCalibration): Promise<CalibrationRecord>;
  listValidCalibrations(fingerprint: string, options: { model?: string; limit: number }): Promise<CalibrationRecord[]>;
  recentNoiseSds(fingerprint: string, limit: number): Promise<number[]>;
  listCalibrations(fingerprint?: string): Promise<CalibrationRecord[]>;
}
