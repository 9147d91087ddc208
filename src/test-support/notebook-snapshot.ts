/**
 * What a study's notebook says, without what differs between two honest runs
 * of the same study (row creation times, run ids' timing, latencies), for
 * tests that compare two backends or a worker run with a single-process run:
 * the artifact versions, every experiment's decision and evidence, the
 * registry's moves, the per-example results (composites and scores), the
 * proposer calls and the corpus lifecycle.
 */
import type { StudyDatabase } from '../storage/database.ts';

/** Drops the keys whose values are clock readings or durations, at any depth. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (/(_at|At|latencyMs|latency_ms|wallTimeMs|durationMs|elapsedMs)$/.test(key)) continue;
    kept[key] = withoutTimings(inner);
  }
  return kept;
}

/** The notebook's content, ordered, timings left out. */
export async function notebookSnapshot(db: StudyDatabase): Promise<Record<string, unknown>> {
  const versions = await db
    .selectFrom('artifact_versions')
    .select(['id', 'hash', 'parent_id', 'source', 'experiment_id'])
    .orderBy('id')
    .execute();
  const experiments = await db
    .selectFrom('experiments')
    .select([
      'id',
      'run_id',
      'round',
      'proposer',
      'base_version_id',
      'candidate_hash',
      'delta',
      'rationale',
      'decision',
      'reason',
      'evidence',
      'accepted_version_id',
      'fingerprint',
      'seed',
      'change',
    ])
    .orderBy('id')
    .execute();
  const registry = await db
    .selectFrom('registry_events')
    .select(['id', 'name', 'version_id', 'reason', 'actor'])
    .orderBy('id')
    .execute();
  const results = await db
    .selectFrom('example_results')
    .select(['fingerprint', 'artifact_hash', 'example_id', 'repeat', 'valid', 'composite', 'score', 'usage'])
    .orderBy('fingerprint')
    .orderBy('artifact_hash')
    .orderBy('example_id')
    .orderBy('repeat')
    .execute();
  const proposals = await db
    .selectFrom('proposals')
    .select(['id', 'round', 'attempt', 'proposer', 'outcome', 'candidates', 'failures'])
    .orderBy('id')
    .execute();
  const members = await db
    .selectFrom('corpus_members')
    .select(['example_id', 'origin', 'source', 'partition', 'shadow_exposures'])
    .orderBy('example_id')
    .execute();
  const events = await db
    .selectFrom('corpus_events')
    .select(['id', 'example_id', 'kind', 'from_partition', 'to_partition', 'reason', 'experiment_id', 'details'])
    .orderBy('id')
    .execute();
  const runs = await db.selectFrom('runs').select(['id', 'stop_reason']).orderBy('id').execute();
  return withoutTimings({
    versions,
    experiments: experiments.map((row) => ({ ...row, evidence: JSON.parse(row.evidence) as unknown })),
    registry,
    results: results.map((row) => ({
      ...row,
      score: JSON.parse(row.score) as unknown,
      usage: JSON.parse(row.usage) as unknown,
    })),
    proposals,
    members,
    events: events.map((row) => ({ ...row, details: JSON.parse(row.details) as unknown })),
    runs,
  }) as Record<string, unknown>;
}
