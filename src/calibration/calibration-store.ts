/**
 * The stored side of calibration (src/calibration/calibration.ts): the settings'
 * defaults, the record of a stored calibration, and the reads the gate and the
 * commands make of it ({@link latestCalibration}, {@link listCalibrations});
 * the queries are in src/storage/notebook/calibrations-store.ts. Apart from
 * calibrating, so a command that only shows calibrations (`kloop status`)
 * loads neither the evaluation loop nor the statistics.
 *
 * @module
 */
import {
  DEFAULT_CALIBRATION_WINDOW,
  DEFAULT_MIN_COHENS_D,
  DEFAULT_NOISE_REPEATS,
  DEFAULT_SIGNAL_REPEATS,
} from '../config/study-defaults.ts';
import type { GateCalibration } from '../gate/gate.ts';
import { DEFAULT_GATE_SETTINGS } from '../gate/gate-defaults.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { CalibrationRecord } from '../storage/notebook/calibrations-store.ts';
import { listValidCalibrations } from '../storage/notebook/calibrations-store.ts';

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
  noiseRepeats: DEFAULT_NOISE_REPEATS,
  signalRepeats: DEFAULT_SIGNAL_REPEATS,
  thresholdK: DEFAULT_GATE_SETTINGS.thresholdK,
  calibrationWindow: DEFAULT_CALIBRATION_WINDOW,
  minCohensD: DEFAULT_MIN_COHENS_D,
});

export type { CalibrationRecord } from '../storage/notebook/calibrations-store.ts';

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
  const records = await listValidCalibrations(db, fingerprint, {
    ...(model !== undefined ? { model } : {}),
    limit: Math.max(1, window),
  });
  if (records.length === 0) return undefined;
  const record = records[0]!;
  const noiseSd = Math.max(...records.map((entry) => entry.noiseSd));
  return {
    calibration: Object.freeze({ noiseSd, exampleSds: record.exampleSds, noiseRepeats: record.noiseRepeats }),
    record,
  };
}

/** Every stored calibration (valid or not), newest first; only `fingerprint`'s when given. */
export { listCalibrations } from '../storage/notebook/calibrations-store.ts';
