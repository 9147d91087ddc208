/**
 * Writes the committed fixture databases of the older schema versions:
 * `src/storage/fixtures/schema-000N.sqlite`, one SQLite notebook per shipped
 * migration before the latest, migrated exactly to `000N` and holding a small
 * study in the shapes of that version (a seed and an accepted version, a
 * run, two experiments, their evaluations or per-example results, a
 * calibration, a lease, corpus members and events, review items …).
 *
 * src/storage/schema-fixtures.test.ts opens each one with today's code,
 * which migrates it to the latest version, and checks that every row is
 * still read the same (and that 0006 copied the per-partition results into
 * `example_results`).
 *
 * Run once when a migration is added (`npx tsx scripts/make-schema-fixtures.ts`),
 * and commit the new file: a shipped fixture is never rewritten.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely';
import { MIGRATIONS } from '../src/storage/migrations.ts';

const FOLDER = path.resolve(import.meta.dirname, '../src/storage/fixtures');
const T = '2025-03-01T10:00:00.000Z';

/** The rows of a study in the shapes of schema version `version` (1-based count of migrations applied). */
async function fill(db: Kysely<any>, version: number): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run(
    `insert into artifact_versions (hash, text, parent_id, source, experiment_id, created_at) values ('h-seed', 'seed: text', null, 'seed', null, '${T}'), ('h-two', 'seed: text\nmore: 1', 1, 'accepted', 1, '${T}')`,
  );
  await run(`insert into registry (name, version_id, updated_at) values ('active', 2, '${T}'), ('seed', 1, '${T}')`);
  await run(
    `insert into registry_events (name, version_id, reason, created_at) values ('seed', 1, 'seed', '${T}'), ('active', 1, 'seed', '${T}'), ('active', 2, 'experiment 1 accepted', '${T}')`,
  );
  await run(
    `insert into runs (started_at, ended_at, stop_reason, report) values ('${T}', '${T}', 'max_experiments', '{"experiments":2}')`,
  );
  await run(`insert into experiments (run_id, round, proposer, base_version_id, candidate_hash, delta, rationale, decision, reason, evidence, accepted_version_id, fingerprint, seed, created_at)
    values (1, 1, 'error-driven@1', 1, 'h-two', 'more = 1', 'fixes 3', 'accepted', 'accepted', '{"optimization":{"delta":0.125}}', 2, 'fp', 7, '${T}'),
           (1, 1, 'error-driven@1', 2, 'h-three', 'less = 1', 'fixes 1', 'refused', 'not_significant', '{"optimization":{"delta":0.03125,"p":0.4}}', null, 'fp', 7, '${T}')`);
  await run(`insert into evaluations (fingerprint, artifact_hash, partition, partition_hash, repeat, composite, components, metrics, invalid, total, usage, latency_ms, created_at)
    values ('fp', 'h-seed', 'optimization', 'ph', 0, 0.5, '{"appType":0.5}', '{}', 0, 2, '{"inputTokens":10,"outputTokens":5,"costUsd":0.001}', 12.5, '${T}')`);
  await run(`insert into evaluation_examples (evaluation_id, example_id, valid, composite, score) values
    (1, 'ex-a', 1, 0.75, '{"exampleId":"ex-a","repeat":0,"valid":true,"composite":0.75,"components":{"appType":1}}'),
    (1, 'ex-b', 1, 0.25, '{"exampleId":"ex-b","repeat":0,"valid":true,"composite":0.25,"components":{"appType":0}}')`);
  await run(`insert into calibrations (fingerprint, model, artifact_hash, noise_repeats, signal_repeats, noise_sd, example_sds, partition_sds, cohens_d, threshold, valid, message, created_at)
    values ('fp', 'offline', 'h-seed', 5, 5, 0.0125, '{"ex-a":0.01}', '{"optimization":0.0125}', 1.5, 0.0125, 1, 'ok', '${T}')`);
  await run(`insert into study_state (key, value) values ('served:2', '1')`);
  await run(
    `insert into response_cache (key, model, response, created_at) values ('k1', 'openai:gpt', '{"text":"hi"}', '${T}')`,
  );
  if (version >= 2)
    await run(
      `insert into leases (study_key, owner_id, hostname, pid, acquired_at, heartbeat_at) values ('/old/study', 'old-host:4242:ab', 'old-host', 4242, '${T}', '${T}')`,
    );
  if (version >= 3) {
    await run(`insert into corpus_members (example_id, origin, source, example, partition, shadow_exposures, shadow_since, admitted_at, updated_at)
      values ('ex-a', 'file', 'corpus/a.yaml', null, 'optimization', 0, null, '${T}', '${T}'), ('ex-s', 'admitted', 'new.jsonl', '{"id":"ex-s","goal":"a booking app","expected":{"appType":"booking"},"partition":"shadow"}', 'shadow', 2, '${T}', '${T}', '${T}')`);
    await run(`insert into corpus_events (example_id, kind, from_partition, to_partition, reason, experiment_id, details, created_at)
      values ('ex-a', 'initial', null, 'optimization', 'corpus file', null, '{}', '${T}'), ('ex-s', 'admitted', null, 'shadow', 'kloop corpus add', 1, '{"line":3}', '${T}')`);
  }
  if (version >= 4) {
    await run(`insert into review_items (kind, source, title, payload, evidence, content_hash, status, run_id, created_at, decided_at, decided_by, note, outcome)
      values ('loop_a_candidate', 'loop-a', 'a change', '{}', '{}', 'ch1', 'pending', null, '${T}', null, null, null, null)`);
    await run(`insert into signals (id, time, assembly_method, confidence, app_class, has_commitments, entity_count, artifact_version, goal, detail, source, received_at)
      values ('s1', '${T}', 'pattern', 0.875, 'booking', 1, 3, 'v2', 'a goal', '{}', 'runtime', '${T}')`);
    await run(
      `insert into loop_a_runs (started_at, ended_at, incumbent_version_id, status, report) values ('${T}', '${T}', 2, 'done', '{}')`,
    );
    await run(`insert into loop_a_decisions (run_id, kind, candidate_hash, delta, rationale, decision, reason, evidence, review_item_id, created_at)
      values (1, 'playbook', 'ch1', 'd', 'r', 'queued', 'queued', '{}', 1, '${T}')`);
  }
  if (version >= 5)
    await run(
      `insert into schedule_runs (loop, scheduled_at, started_at, ended_at, outcome, detail) values ('B', '${T}', '${T}', '${T}', 'ok', '{}')`,
    );
  if (version >= 6) {
    await run(`update experiments set change = '+ more: 1' where id = 1`);
    await run(`insert into example_results (fingerprint, artifact_hash, example_id, repeat, valid, composite, score, usage, latency_ms, created_at)
      values ('fp', 'h-two', 'ex-a', 0, 1, 1, '{"exampleId":"ex-a","repeat":0,"valid":true,"composite":1}', '{"inputTokens":3,"outputTokens":2,"costUsd":0}', 4, '${T}')`);
    await run(`insert into proposals (run_id, round, attempt, proposer, outcome, candidates, failures, input_tokens, output_tokens, cost_usd, created_at)
      values (1, 1, 0, 'error-driven@1', 'candidates', 2, '[]', 0, 0, 0, '${T}')`);
  }
}

class UpTo implements MigrationProvider {
  constructor(private readonly names: string[]) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(this.names.map((name) => [name, MIGRATIONS[name]!]));
  }
}

const names = Object.keys(MIGRATIONS);
mkdirSync(FOLDER, { recursive: true });
for (let version = 1; version < names.length; version += 1) {
  const file = path.join(FOLDER, `schema-${names[version - 1]!.slice(0, 4)}.sqlite`);
  if (existsSync(file)) {
    process.stdout.write(`kept ${path.relative(process.cwd(), file)} (a shipped fixture is never rewritten)\n`);
    continue;
  }
  const sqlite = new Database(file);
  sqlite.pragma('page_size = 1024'); // small files: the fixtures are committed
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
  const migrated = await new Migrator({ db, provider: new UpTo(names.slice(0, version)) }).migrateToLatest();
  if (migrated.error !== undefined) {
    rmSync(file, { force: true });
    throw migrated.error;
  }
  await fill(db, version);
  await sql`vacuum`.execute(db);
  await db.destroy();
  process.stdout.write(`wrote ${path.relative(process.cwd(), file)} (schema ${names[version - 1]})\n`);
}
