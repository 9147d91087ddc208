/**
 * The stored side of calibration (src/calibration/calibration.ts): the settings'
 * defaults, the shape of a `calibrations` row as a read-only record, and the
 * reads the gate and the commands make of it ({@link latestCalibration},
 * {@link listCalibrations}). Apart from calibrating, so a command that only
 * shows calibrations (`kloop status`) loads neither the evaluation loop nor
 * the statistics.
 *
 * @module
 */
import type { Selectable } from 'kysely';
import type { GateCalibration } from '../gate/gate.ts';
import type { StudyDatabase } from '../storage/database.ts';
import type { CalibrationTable } from '../storage/schema.ts';

/** Repeat counts and threshold rules of a calibration (the `gate.*` keys of `kloop.yaml`). */
export interface CalibrationSettings {
  /** Evaluations of the incumbent for the noise SD; integer ≥ 2. Config default 8. */
  noiseRepeats: number;
  /** Evaluations of incumbent and contrast for Cohen's d; integer ≥ 1. Config default 3. */
  signalRepeats: number;
  /** k in τ = k × rolling max noise SD; ≥ 0. Config default 2. */
  thresholdK: number;
  /** W: valid calibrations of this fingerprint the rolling max looks over, this one included; integer ≥ 1. Config default 5. */
  calibrationWindow: number;
  /** Smallest |Cohen's d| between incumbent and contrast; ≥ 0. Config default 0.5 (Cohen's "medium"). */
  minCohensD: number;
}

/** The defaults of `src/config/config.ts`. */
export const DEFAULT_CALIBRATION_SETTINGS: Readonly<CalibrationSettings> = Object.freeze({
  noiseRepeats: 8,
  signalRepeats: 3,
  thresholdK: 1,
  calibrationWindow: 5,
  minCohensD: 0.5,
});

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

/** The record of one `calibrations` row. */
export function calibrationRecordOf(row: Selectable<CalibrationTable>): CalibrationRecord {
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
 * The newest valid calibration of a fingerprint, as the gate reads it, with
 * its record; undefined when there is none (the gate then uses
 * `NO_CALIBRATION`, and `requireCalibration` refuses to run).
 *
 * The gate's noise SD is the rolling **maximum** of the noise SD over the
 * newest `window` valid calibrations of the fingerprint (this one included),
 * so τ = `gate.thresholdK` × it is computed at decision time with the current
 * k (the τ stored in a row is only what it was at calibration time).
 *
 * @param model when given, only calibrations stored for this model
 * @param window calibrations the rolling maximum looks over (`gate.calibrationWindow`). Default 5.
 */
export async function latestCalibration(
  db: StudyDatabase,
  fingerprint: string,
  model?: string,
  window = DEFAULT_CALIBRATION_SETTINGS.calibrationWindow,
): Promise<{ calibration: GateCalibration; record: CalibrationRecord } | undefined> {
  let query = db.selectFrom('calibrations').selectAll().where('fingerprint', '=', fingerprint).where('valid', '=', 1);
  if (model !== undefined) query = query.where('model', '=', model);
  const rows = await query.orderBy('id', 'desc').limit(Math.max(1, window)).execute();
  if (rows.length === 0) return undefined;
  const record = calibrationRecordOf(rows[0]!);
  const noiseSd = Math.max(...rows.map((row) => row.noise_sd));
  return { calibration: Object.freeze({ noiseSd, exampleSds: record.exampleSds }), record };
}

/** Every stored calibration (valid or not), newest first; only `fingerprint`'s when given. */
export async function listCalibrations(db: StudyDatabase, fingerprint?: string): Promise<CalibrationRecord[]> {
  let query = db.selectFrom('calibrations').selectAll();
  if (fingerprint !== undefined) query = query.where('fingerprint', '=', fingerprint);
  const rows = await query.orderBy('id', 'desc').execute();
  return rows.map(calibrationRecordOf);
}
