import type { Migration } from 'kysely';
import { sql } from 'kysely';
import { columnTypes, type AnyDatabase } from './column-types.ts';

type ColumnTypes = ReturnType<typeof columnTypes>;

/** 0001, artifact versions and the registry of the active ones. */
async function createVersionTables(db: AnyDatabase, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('artifact_versions')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('hash', t.text, (column) => column.notNull().unique())
    .addColumn('text', t.text, (column) => column.notNull())
    .addColumn('parent_id', 'integer', (column) => column.references('artifact_versions.id'))
    .addColumn('source', t.text, (column) => column.notNull())
    .addColumn('experiment_id', 'integer')
    .addColumn('created_at', t.text, (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('registry')
    .addColumn('name', t.text, (column) => column.primaryKey())
    .addColumn('version_id', 'integer', (column) => column.notNull().references('artifact_versions.id'))
    .addColumn('updated_at', t.text, (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('registry_events')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('name', t.text, (column) => column.notNull())
    .addColumn('version_id', 'integer', (column) => column.notNull())
    .addColumn('reason', t.text, (column) => column.notNull())
    .addColumn('created_at', t.text, (column) => column.notNull())
    .execute();
}

/** 0001, runs and their experiments. */
async function createRunTables(db: AnyDatabase, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('runs')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('started_at', t.text, (column) => column.notNull())
    .addColumn('ended_at', t.text)
    .addColumn('stop_reason', t.text)
    .addColumn('report', t.text)
    .execute();
  await db.schema
    .createTable('experiments')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('run_id', 'integer', (column) => column.notNull())
    .addColumn('round', 'integer', (column) => column.notNull())
    .addColumn('proposer', t.text, (column) => column.notNull())
    .addColumn('base_version_id', 'integer', (column) => column.notNull())
    .addColumn('candidate_hash', t.text, (column) => column.notNull())
    .addColumn('delta', t.text, (column) => column.notNull())
    .addColumn('rationale', t.text, (column) => column.notNull())
    .addColumn('decision', t.text, (column) => column.notNull())
    .addColumn('reason', t.text, (column) => column.notNull())
    .addColumn('evidence', t.text, (column) => column.notNull())
    .addColumn('accepted_version_id', 'integer')
    .addColumn('fingerprint', t.text, (column) => column.notNull())
    .addColumn('seed', 'integer', (column) => column.notNull())
    .addColumn('created_at', t.text, (column) => column.notNull())
    .execute();
  await db.schema.createIndex('experiments_candidate_hash').on('experiments').column('candidate_hash').execute();
}

/** 0001, evaluations, their examples, and calibrations. */
async function createEvaluationTables(db: AnyDatabase, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('evaluations')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('fingerprint', t.text, (column) => column.notNull())
    .addColumn('artifact_hash', t.text, (column) => column.notNull())
    .addColumn('partition', t.text, (column) => column.notNull())
    .addColumn('partition_hash', t.text, (column) => column.notNull())
    .addColumn('repeat', 'integer', (column) => column.notNull())
    .addColumn('composite', t.real)
    .addColumn('components', t.text, (column) => column.notNull())
    .addColumn('metrics', t.text, (column) => column.notNull())
    .addColumn('invalid', 'integer', (column) => column.notNull())
    .addColumn('total', 'integer', (column) => column.notNull())
    .addColumn('usage', t.text, (column) => column.notNull())
    .addColumn('latency_ms', t.real, (column) => column.notNull())
    .addColumn('created_at', t.text, (column) => column.notNull())
    .addUniqueConstraint('evaluations_identity', ['fingerprint', 'artifact_hash', 'partition_hash', 'repeat'])
    .execute();
  await db.schema
    .createTable('evaluation_examples')
    .addColumn('evaluation_id', 'integer', (column) => column.notNull().references('evaluations.id'))
    .addColumn('example_id', t.text, (column) => column.notNull())
    .addColumn('valid', 'integer', (column) => column.notNull())
    .addColumn('composite', t.real)
    .addColumn('score', t.text, (column) => column.notNull())
    .addPrimaryKeyConstraint('evaluation_examples_pk', ['evaluation_id', 'example_id'])
    .execute();
  await db.schema
    .createTable('calibrations')
    .addColumn('id', t.id, (column) => t.primaryId(column))
    .addColumn('fingerprint', t.text, (column) => column.notNull())
    .addColumn('model', t.text, (column) => column.notNull())
    .addColumn('artifact_hash', t.text, (column) => column.notNull())
    .addColumn('noise_repeats', 'integer', (column) => column.notNull())
    .addColumn('signal_repeats', 'integer', (column) => column.notNull())
    .addColumn('noise_sd', t.real, (column) => column.notNull())
    .addColumn('example_sds', t.text, (column) => column.notNull())
    .addColumn('partition_sds', t.text, (column) => column.notNull())
    .addColumn('cohens_d', t.real)
    .addColumn('threshold', t.real, (column) => column.notNull())
    .addColumn('valid', 'integer', (column) => column.notNull())
    .addColumn('message', t.text, (column) => column.notNull())
    .addColumn('created_at', t.text, (column) => column.notNull())
    .execute();
}

/** 0001, the study state and the response cache. */
async function createStateTables(db: AnyDatabase, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('study_state')
    .addColumn('key', t.text, (column) => column.primaryKey())
    .addColumn('value', t.text, (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('response_cache')
    .addColumn('key', t.text, (column) => column.primaryKey())
    .addColumn('model', t.text, (column) => column.notNull())
    .addColumn('response', t.text, (column) => column.notNull())
    .addColumn('created_at', t.text, (column) => column.notNull())
    .execute();
}

/** 0001: the first tables of the study database. */
export const initial: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await createVersionTables(db, t);
    await createRunTables(db, t);
    await createEvaluationTables(db, t);
    await createStateTables(db, t);
    await sql`select 1`.execute(db);
  },
};
