/**
 * Schema migrations of the study database, applied in order by Kysely's
 * Migrator. Never edit a shipped migration: add a new one.
 */
import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

// Migrations operate on an unknown schema by design (Kysely's guidance).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDatabase = Kysely<any>;

const initial: Migration = {
  async up(db: AnyDatabase) {
    await db.schema
      .createTable('artifact_versions')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('hash', 'text', (column) => column.notNull().unique())
      .addColumn('text', 'text', (column) => column.notNull())
      .addColumn('parent_id', 'integer', (column) => column.references('artifact_versions.id'))
      .addColumn('source', 'text', (column) => column.notNull())
      .addColumn('experiment_id', 'integer')
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('registry')
      .addColumn('name', 'text', (column) => column.primaryKey())
      .addColumn('version_id', 'integer', (column) => column.notNull().references('artifact_versions.id'))
      .addColumn('updated_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('registry_events')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('version_id', 'integer', (column) => column.notNull())
      .addColumn('reason', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('runs')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('started_at', 'text', (column) => column.notNull())
      .addColumn('ended_at', 'text')
      .addColumn('stop_reason', 'text')
      .addColumn('report', 'text')
      .execute();
    await db.schema
      .createTable('experiments')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'integer', (column) => column.notNull())
      .addColumn('round', 'integer', (column) => column.notNull())
      .addColumn('proposer', 'text', (column) => column.notNull())
      .addColumn('base_version_id', 'integer', (column) => column.notNull())
      .addColumn('candidate_hash', 'text', (column) => column.notNull())
      .addColumn('delta', 'text', (column) => column.notNull())
      .addColumn('rationale', 'text', (column) => column.notNull())
      .addColumn('decision', 'text', (column) => column.notNull())
      .addColumn('reason', 'text', (column) => column.notNull())
      .addColumn('evidence', 'text', (column) => column.notNull())
      .addColumn('accepted_version_id', 'integer')
      .addColumn('fingerprint', 'text', (column) => column.notNull())
      .addColumn('seed', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('experiments_candidate_hash').on('experiments').column('candidate_hash').execute();
    await db.schema
      .createTable('evaluations')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('fingerprint', 'text', (column) => column.notNull())
      .addColumn('artifact_hash', 'text', (column) => column.notNull())
      .addColumn('partition', 'text', (column) => column.notNull())
      .addColumn('partition_hash', 'text', (column) => column.notNull())
      .addColumn('repeat', 'integer', (column) => column.notNull())
      .addColumn('composite', 'real')
      .addColumn('components', 'text', (column) => column.notNull())
      .addColumn('metrics', 'text', (column) => column.notNull())
      .addColumn('invalid', 'integer', (column) => column.notNull())
      .addColumn('total', 'integer', (column) => column.notNull())
      .addColumn('usage', 'text', (column) => column.notNull())
      .addColumn('latency_ms', 'real', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addUniqueConstraint('evaluations_identity', ['fingerprint', 'artifact_hash', 'partition_hash', 'repeat'])
      .execute();
    await db.schema
      .createTable('evaluation_examples')
      .addColumn('evaluation_id', 'integer', (column) => column.notNull().references('evaluations.id'))
      .addColumn('example_id', 'text', (column) => column.notNull())
      .addColumn('valid', 'integer', (column) => column.notNull())
      .addColumn('composite', 'real')
      .addColumn('score', 'text', (column) => column.notNull())
      .addPrimaryKeyConstraint('evaluation_examples_pk', ['evaluation_id', 'example_id'])
      .execute();
    await db.schema
      .createTable('calibrations')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('fingerprint', 'text', (column) => column.notNull())
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('artifact_hash', 'text', (column) => column.notNull())
      .addColumn('noise_repeats', 'integer', (column) => column.notNull())
      .addColumn('signal_repeats', 'integer', (column) => column.notNull())
      .addColumn('noise_sd', 'real', (column) => column.notNull())
      .addColumn('example_sds', 'text', (column) => column.notNull())
      .addColumn('partition_sds', 'text', (column) => column.notNull())
      .addColumn('cohens_d', 'real')
      .addColumn('threshold', 'real', (column) => column.notNull())
      .addColumn('valid', 'integer', (column) => column.notNull())
      .addColumn('message', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('study_state')
      .addColumn('key', 'text', (column) => column.primaryKey())
      .addColumn('value', 'text', (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('response_cache')
      .addColumn('key', 'text', (column) => column.primaryKey())
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('response', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await sql`select 1`.execute(db);
  },
};

/** All migrations by name; names sort in application order. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
};
