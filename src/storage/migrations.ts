/**
 * Schema migrations of the study database, applied in order by Kysely's
 * Migrator. Never edit a shipped migration: add a new one.
 */
import type { Migration } from 'kysely';
import { sql } from 'kysely';
import { columnTypes, type AnyDatabase } from './column-types.ts';
import { initial } from './migration-initial.ts';
import { onlineLooks, onlineStudies } from './migration-online.ts';

/**
 * 0004: the review queue (Loop A candidates, Loop C/D findings awaiting a
 * human decision), production signals (one row per runtime call or
 * ingested record), and Loop A's runs and decisions.
 */
const reviewAndSignals: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('review_items')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('kind', t.text, (column) => column.notNull())
      .addColumn('source', t.text, (column) => column.notNull())
      .addColumn('title', t.text, (column) => column.notNull())
      .addColumn('payload', t.text, (column) => column.notNull())
      .addColumn('evidence', t.text, (column) => column.notNull())
      .addColumn('content_hash', t.text, (column) => column.notNull())
      .addColumn('status', t.text, (column) => column.notNull())
      .addColumn('run_id', 'integer')
      .addColumn('created_at', t.text, (column) => column.notNull())
      .addColumn('decided_at', t.text)
      .addColumn('decided_by', t.text)
      .addColumn('note', t.text)
      .addColumn('outcome', t.text)
      .execute();
    await db.schema.createIndex('review_items_status').on('review_items').column('status').execute();
    await db.schema.createIndex('review_items_content_hash').on('review_items').column('content_hash').execute();
    await db.schema
      .createTable('signals')
      .addColumn('id', t.text, (column) => column.primaryKey())
      .addColumn('time', t.text, (column) => column.notNull())
      .addColumn('assembly_method', t.text, (column) => column.notNull())
      .addColumn('confidence', t.real, (column) => column.notNull())
      .addColumn('app_class', t.text, (column) => column.notNull())
      .addColumn('has_commitments', 'integer', (column) => column.notNull())
      .addColumn('entity_count', 'integer', (column) => column.notNull())
      .addColumn('artifact_version', t.text, (column) => column.notNull())
      .addColumn('goal', t.text)
      .addColumn('detail', t.text, (column) => column.notNull())
      .addColumn('source', t.text, (column) => column.notNull())
      .addColumn('received_at', t.text, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('signals_time').on('signals').column('time').execute();
    // Loop A's notebook: its runs and every candidate it decided (queued for review, refused, skipped).
    await db.schema
      .createTable('loop_a_runs')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('started_at', t.text, (column) => column.notNull())
      .addColumn('ended_at', t.text)
      .addColumn('incumbent_version_id', 'integer', (column) => column.notNull())
      .addColumn('status', t.text, (column) => column.notNull())
      .addColumn('report', t.text)
      .execute();
    await db.schema
      .createTable('loop_a_decisions')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('run_id', 'integer', (column) => column.notNull().references('loop_a_runs.id'))
      .addColumn('kind', t.text, (column) => column.notNull())
      .addColumn('candidate_hash', t.text, (column) => column.notNull())
      .addColumn('delta', t.text, (column) => column.notNull())
      .addColumn('rationale', t.text, (column) => column.notNull())
      .addColumn('decision', t.text, (column) => column.notNull())
      .addColumn('reason', t.text, (column) => column.notNull())
      .addColumn('evidence', t.text, (column) => column.notNull())
      .addColumn('review_item_id', 'integer')
      .addColumn('created_at', t.text, (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex('loop_a_decisions_candidate_hash')
      .on('loop_a_decisions')
      .column('candidate_hash')
      .execute();
  },
};

/**
 * 0002: the run lease. One row per study key while a `kloop run` writes it:
 * who holds it (host, pid, random owner id), since when, and its last
 * heartbeat. See src/storage/lease.ts.
 */
const leases: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('leases')
      .addColumn('study_key', t.text, (column) => column.primaryKey())
      .addColumn('owner_id', t.text, (column) => column.notNull())
      .addColumn('hostname', t.text, (column) => column.notNull())
      .addColumn('pid', 'integer', (column) => column.notNull())
      .addColumn('acquired_at', t.text, (column) => column.notNull())
      .addColumn('heartbeat_at', t.text, (column) => column.notNull())
      .execute();
  },
};

/**
 * 0003: the corpus lifecycle (DESIGN §4). `corpus_members` holds each
 * example's current partition and shadow exposures (and, for examples
 * admitted with `kloop corpus add`, the example itself); `corpus_events` is
 * the append-only history of every move, with the experiment at which it
 * happened.
 */
const corpusLifecycle: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('corpus_members')
      .addColumn('example_id', t.text, (column) => column.primaryKey())
      .addColumn('origin', t.text, (column) => column.notNull())
      .addColumn('source', t.text, (column) => column.notNull())
      .addColumn('example', t.text)
      .addColumn('partition', t.text, (column) => column.notNull())
      .addColumn('shadow_exposures', 'integer', (column) => column.notNull().defaultTo(0))
      .addColumn('shadow_since', t.text)
      .addColumn('admitted_at', t.text, (column) => column.notNull())
      .addColumn('updated_at', t.text, (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('corpus_events')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('example_id', t.text)
      .addColumn('kind', t.text, (column) => column.notNull())
      .addColumn('from_partition', t.text)
      .addColumn('to_partition', t.text)
      .addColumn('reason', t.text, (column) => column.notNull())
      .addColumn('experiment_id', 'integer')
      .addColumn('details', t.text, (column) => column.notNull())
      .addColumn('created_at', t.text, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('corpus_events_example').on('corpus_events').column('example_id').execute();
  },
};

/**
 * 0005: the two-speed schedule's run log (`kloop schedule`): one row per
 * scheduled run of a loop (A, B, C, D) with its outcome. See src/schedule/schedule.ts.
 */
const schedule: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('schedule_runs')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('loop', t.text, (column) => column.notNull())
      .addColumn('scheduled_at', t.text, (column) => column.notNull())
      .addColumn('started_at', t.text, (column) => column.notNull())
      .addColumn('ended_at', t.text)
      .addColumn('outcome', t.text, (column) => column.notNull())
      .addColumn('detail', t.text, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('schedule_runs_loop').on('schedule_runs').columns(['loop', 'id']).execute();
  },
};

/**
 * 0006: results per example and repeat, proposer calls, and the lines a
 * candidate changes.
 *
 * - `example_results`: one row per (evaluator fingerprint, artifact hash,
 *   example id, repeat) — the fingerprint covers every example's text and
 *   gold, so an id names one content. A partition's evaluation is read from
 *   these rows, so partial evaluations are kept and a partition move
 *   (graduation, rotation) reuses what was computed. Transient failures
 *   (timeouts, network and server errors) are never stored. The rows of the
 *   earlier per-partition store (`evaluations`, `evaluation_examples`) are
 *   copied in, with zero usage (their tokens were counted per partition).
 * - `proposals`: one row per proposer call: its round and attempt (the
 *   attempt is part of the proposer's nonce, so a failed answer is never
 *   replayed), its outcome, its failures with their reasons and capped raw
 *   answers, and its tokens.
 * - `experiments.change`: the lines the candidate adds and removes against
 *   its base, which the near-duplicate check compares.
 */
const resultsAndProposals: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema
      .createTable('example_results')
      .addColumn('fingerprint', t.text, (column) => column.notNull())
      .addColumn('artifact_hash', t.text, (column) => column.notNull())
      .addColumn('example_id', t.text, (column) => column.notNull())
      .addColumn('repeat', 'integer', (column) => column.notNull())
      .addColumn('valid', 'integer', (column) => column.notNull())
      .addColumn('composite', t.real)
      .addColumn('score', t.text, (column) => column.notNull())
      .addColumn('usage', t.text, (column) => column.notNull())
      .addColumn('latency_ms', t.real, (column) => column.notNull())
      .addColumn('created_at', t.text, (column) => column.notNull())
      .addPrimaryKeyConstraint('example_results_pk', ['fingerprint', 'artifact_hash', 'example_id', 'repeat'])
      .execute();
    // `where true` lets SQLite parse the upsert clause after a select.
    await sql`insert into example_results (fingerprint, artifact_hash, example_id, repeat, valid, composite, score, usage, latency_ms, created_at)
      select e.fingerprint, e.artifact_hash, x.example_id, e.repeat, x.valid, x.composite, x.score, '{"inputTokens":0,"outputTokens":0,"costUsd":0}', 0, e.created_at
      from evaluation_examples x join evaluations e on e.id = x.evaluation_id where true
      on conflict do nothing`.execute(db);
    await db.schema
      .createTable('proposals')
      .addColumn('id', t.id, (column) => t.primaryId(column))
      .addColumn('run_id', 'integer', (column) => column.notNull())
      .addColumn('round', 'integer', (column) => column.notNull())
      .addColumn('attempt', 'integer', (column) => column.notNull())
      .addColumn('proposer', t.text, (column) => column.notNull())
      .addColumn('outcome', t.text, (column) => column.notNull())
      .addColumn('candidates', 'integer', (column) => column.notNull())
      .addColumn('failures', t.text, (column) => column.notNull())
      .addColumn('input_tokens', 'integer', (column) => column.notNull())
      .addColumn('output_tokens', 'integer', (column) => column.notNull())
      .addColumn('cost_usd', t.real, (column) => column.notNull())
      .addColumn('created_at', t.text, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('proposals_round').on('proposals').columns(['round', 'attempt']).execute();
    await db.schema.alterTable('experiments').addColumn('change', t.text).execute();
  },
};

/**
 * 0007: who moved the registry. `registry_events.actor` names the person who
 * activated a version by hand (`kloop activate --by NAME`, the viewer's
 * rollback); null for the loop's own moves (seed, accepted experiments).
 */
const registryActor: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema.alterTable('registry_events').addColumn('actor', t.text).execute();
  },
};

/**
 * 0009: identities for resume and fencing. `experiments.candidate_id` is the
 * identity of the proposed candidate an experiment decided (round, position
 * in the proposer's answer, content hash; null in older rows), so a resumed
 * round finds what it decided by identity, not by delta text;
 * `proposals.candidate_ids` (JSON array) lists the identities of a call's
 * fresh candidates, written when the round's candidates are known, so
 * `kloop doctor` can name one that was never decided; `leases.generation` is
 * the fencing token, incremented at each take-over.
 */
const candidateIdsAndLeaseGeneration: Migration = {
  async up(db: AnyDatabase) {
    const t = columnTypes(db);
    await db.schema.alterTable('experiments').addColumn('candidate_id', t.text).execute();
    await db.schema.alterTable('proposals').addColumn('candidate_ids', t.text).execute();
    await db.schema
      .alterTable('leases')
      .addColumn('generation', 'integer', (column) => column.notNull().defaultTo(1))
      .execute();
  },
};

/** All migrations by name; names sort in application order. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_leases': leases,
  '0003_corpus_lifecycle': corpusLifecycle,
  '0004_review_and_signals': reviewAndSignals,
  '0005_schedule': schedule,
  '0006_results_and_proposals': resultsAndProposals,
  '0007_registry_actor': registryActor,
  '0008_online_studies': onlineStudies,
  '0009_candidate_ids_and_lease_generation': candidateIdsAndLeaseGeneration,
  '0010_online_looks': onlineLooks,
};
