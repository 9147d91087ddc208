import type { Migration } from 'kysely';
import { columnTypes, type AnyDatabase } from './column-types.ts';

/**
 * 0008: online studies (src/online/, docs/online.md).
 *
 * - `online_experiments`: one row per online experiment (the A/A calibration
 *   and each A/B): its arms' versions, status (`decision`, `confirmation`,
 *   `accepted`, `refused`, `invalid`), ramp step, decision and evidence.
 * - `exposures`: one row per (experiment, unit), the first assignment of the
 *   unit (sticky): its arm, the version it was served, the window
 *   (`decision` or `confirmation`), the candidate's share at that moment (for
 *   the sample-ratio check), the time and the end of its attribution window
 *   (ISO times, compared as text).
 * - `outcomes`: one row per (unit, metric, time): a re-sent outcome is the
 *   same row, never counted twice.
 * - `outcome_refusals`: outcome lines refused (malformed, unknown unit or
 *   metric), with their line number and source, counted and shown.
 */
export const onlineStudies: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('online_experiments')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('kind', t.text, (column) => column.notNull())
      .addColumn('incumbent_version_id', 'integer', (column) => column.notNull())
      .addColumn('candidate_version_id', 'integer', (column) => column.notNull())
      .addColumn('status', t.text, (column) => column.notNull())
      .addColumn('ramp_step', 'integer', (column) => column.notNull())
      .addColumn('ramp_changed_at', t.text, (column) => column.notNull())
      .addColumn('rationale', t.text, (column) => column.notNull())
      .addColumn('proposer', t.text, (column) => column.notNull())
      .addColumn('started_at', t.text, (column) => column.notNull())
      .addColumn('confirmation_started_at', t.text)
      .addColumn('decided_at', t.text)
      .addColumn('reason', t.text)
      .addColumn('evidence', t.text)
      .execute();
    await db.schema
      .createTable('exposures')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('experiment_id', 'integer', (column) => column.notNull())
      .addColumn('unit', t.text, (column) => column.notNull())
      .addColumn('arm', t.text, (column) => column.notNull())
      .addColumn('version_id', 'integer', (column) => column.notNull())
      .addColumn('window', t.text, (column) => column.notNull())
      .addColumn('share', t.real, (column) => column.notNull())
      .addColumn('exposed_at', t.text, (column) => column.notNull())
      .addColumn('attribution_ends_at', t.text, (column) => column.notNull())
      .addUniqueConstraint('exposures_experiment_unit', ['experiment_id', 'unit'])
      .execute();
    await db.schema.createIndex('exposures_unit').on('exposures').columns(['unit', 'exposed_at']).execute();
    await db.schema
      .createTable('outcomes')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('unit', t.text, (column) => column.notNull())
      .addColumn('metric', t.text, (column) => column.notNull())
      .addColumn('value', t.real, (column) => column.notNull())
      .addColumn('at', t.text, (column) => column.notNull())
      .addColumn('source', t.text, (column) => column.notNull())
      .addColumn('received_at', t.text, (column) => column.notNull())
      .addUniqueConstraint('outcomes_unit_metric_at', ['unit', 'metric', 'at'])
      .execute();
    await db.schema
      .createTable('outcome_refusals')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('source', t.text, (column) => column.notNull())
      .addColumn('line', 'integer', (column) => column.notNull())
      .addColumn('reason', t.text, (column) => column.notNull())
      .addColumn('text', t.text, (column) => column.notNull())
      .addColumn('received_at', t.text, (column) => column.notNull())
      .execute();
  },
};

/**
 * 0010: the looks of online experiments. `online_looks` holds one row per
 * look of the online gate at an experiment (`kloop run`, a tick of
 * `kloop schedule`, a day of `--simulate`): when, the window it was in, the
 * primary metric on the decision window's closed units at that time (units
 * and means per arm, Δ oriented so positive is better, the anytime-valid
 * interval and p-value when the primary check ran), the gate's outcome and
 * every check's verdict (JSON `[{ name, verdict }]`). `kloop view` draws the
 * lift and interval over looks from these rows: stored as they were seen,
 * never recomputed. Unique (experiment, look).
 */
export const onlineLooks: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('online_looks')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('experiment_id', 'integer', (column) => column.notNull())
      .addColumn('look', 'integer', (column) => column.notNull())
      .addColumn('at', t.text, (column) => column.notNull())
      .addColumn('window', t.text, (column) => column.notNull())
      .addColumn('incumbent_units', 'integer', (column) => column.notNull())
      .addColumn('candidate_units', 'integer', (column) => column.notNull())
      .addColumn('incumbent_mean', t.real, (column) => column.notNull())
      .addColumn('candidate_mean', t.real, (column) => column.notNull())
      .addColumn('delta', t.real, (column) => column.notNull())
      .addColumn('lower', t.real)
      .addColumn('upper', t.real)
      .addColumn('level', t.real)
      .addColumn('p_value', t.real)
      .addColumn('outcome', t.text, (column) => column.notNull())
      .addColumn('reason', t.text)
      .addColumn('checks', t.text, (column) => column.notNull())
      .addUniqueConstraint('online_looks_experiment_look', ['experiment_id', 'look'])
      .execute();
  },
};
