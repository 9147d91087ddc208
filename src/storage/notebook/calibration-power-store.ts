/**
 * What the power check (src/calibration/power-check.ts) reads of the
 * notebook: the stored evidence of earlier Loop B decisions (`experiments`),
 * as the JSON text it was written as. The check parses it and reads only the
 * figures it needs.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/** One refused experiment as the power check reads it. */
export interface RefusalEvidenceRow {
  id: number;
  /** The refusal reason code (`not_significant`). */
  reason: string;
  /** The decision's evidence, as stored (JSON text). */
  evidence: string;
}

/** The evidence (JSON text, as stored) of every decided experiment (skipped ones left out), oldest first. */
export async function listDecidedExperimentEvidence(db: StudyDatabase): Promise<string[]> {
  const rows = await db
    .selectFrom('experiments')
    .select(['evidence'])
    .where('decision', '!=', 'skipped')
    .orderBy('id')
    .execute();
  return rows.map((row) => row.evidence);
}

/** Every experiment refused as `not_significant`, oldest first. */
export async function listNotSignificantRefusals(db: StudyDatabase): Promise<RefusalEvidenceRow[]> {
  return db
    .selectFrom('experiments')
    .select(['id', 'reason', 'evidence'])
    .where('decision', '=', 'refused')
    .where('reason', '=', 'not_significant')
    .orderBy('id')
    .execute();
}

/** The power check's store functions, the database bound (the lead aggregates these into the notebook interface). */
export interface CalibrationPowerStore {
  listDecidedExperimentEvidence(): Promise<string[]>;
  listNotSignificantRefusals(): Promise<RefusalEvidenceRow[]>;
}
