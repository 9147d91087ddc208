/**
 * What a study's notebook says, without what differs between two honest runs
 * of the same study (row creation times, run ids' timing, latencies), for
 * tests that compare two backends or a worker run with a single-process run:
 * the artifact versions, every experiment's decision and evidence, the
 * registry's moves, the per-example results (composites and scores), the
 * proposer calls and the corpus lifecycle.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readSnapshotRows } from '../storage/notebook/snapshot-queries.ts';

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
  const experiments = await readSnapshotRows(db, 'experiments');
  const results = await readSnapshotRows(db, 'example_results');
  const events = await readSnapshotRows(db, 'corpus_events');
  return withoutTimings({
    versions: await readSnapshotRows(db, 'artifact_versions'),
    experiments: experiments.map((row) => ({ ...row, evidence: JSON.parse(row.evidence) as unknown })),
    registry: await readSnapshotRows(db, 'registry_events'),
    results: results.map((row) => ({
      ...row,
      score: JSON.parse(row.score) as unknown,
      usage: JSON.parse(row.usage) as unknown,
    })),
    proposals: await readSnapshotRows(db, 'proposals'),
    members: await readSnapshotRows(db, 'corpus_members'),
    events: events.map((row) => ({ ...row, details: JSON.parse(row.details) as unknown })),
    runs: await readSnapshotRows(db, 'runs'),
  }) as Record<string, unknown>;
}
