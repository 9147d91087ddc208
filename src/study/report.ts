/**
 * The study report: baseline and best composites per partition, proposals by
 * decision and reason, the stop reason and where things are.
 */
import { sync as writeFileAtomicSync } from 'write-file-atomic';
import path from 'node:path';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { ComponentScores, DiagnosticMetrics } from '../evaluator/partition-score.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { studyDatabasePath } from '../storage/database.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { evaluatePartition } from './run-study.ts';

/** Scores of one artifact on one partition, as reported. */
export interface PartitionSummary {
  composite: number | null;
  components: ComponentScores;
  metrics: DiagnosticMetrics;
  invalid: number;
  examples: number;
}

export interface StudyReport {
  study: string;
  fingerprint: string;
  /** Composite per partition of the seed artifact. */
  baseline: Record<PartitionName, number | null>;
  /** Composite per partition of the best (active) artifact. */
  best: Record<PartitionName, number | null>;
  details: { baseline: Record<PartitionName, PartitionSummary>; best: Record<PartitionName, PartitionSummary> };
  /** Experiments evaluated (accepted + refused), whole study. */
  experiments: number;
  accepted: number;
  /** Refusal reason → count, whole study (duplicates skipped before evaluation included). */
  refused: Record<string, number>;
  /** Experiments decided in this run. */
  thisRun: { experiments: number; accepted: number; refused: number };
  stopReason: string;
  stopDetail: string;
  bestVersion: number;
  baselineVersion: number;
  bestArtifact: string;
  database: string;
  wallTimeMs: number;
}

/** Writes a file through a temporary name and a rename (write-file-atomic): a kill leaves the old or the new file. */
export function writeFileAtomic(file: string, content: string): void {
  writeFileAtomicSync(file, content, { encoding: 'utf8', fsync: true });
}

async function summarise(evaluator: Evaluator, study: LoadedStudy, text: string): Promise<Record<PartitionName, PartitionSummary>> {
  const result = {} as Record<PartitionName, PartitionSummary>;
  for (const partition of PARTITIONS) {
    const score = await evaluatePartition(evaluator, study, text, partition);
    result[partition] = {
      composite: score.composite,
      components: score.components,
      metrics: score.metrics,
      invalid: score.invalid,
      examples: study.partitions[partition].length,
    };
  }
  return result;
}

/** Builds the report of a study after a run, and writes the best artifact file. */
export async function buildStudyReport(
  db: StudyDatabase,
  study: LoadedStudy,
  evaluator: Evaluator,
  outcome: { runId: number; stopReason: string; stopDetail: string; wallTimeMs: number },
): Promise<StudyReport> {
  const seed = (await getRegistryVersion(db, 'seed'))!;
  const best = (await getRegistryVersion(db, 'active'))!;
  const baselineDetails = await summarise(evaluator, study, seed.text);
  const bestDetails = await summarise(evaluator, study, best.text);
  const rows = await db.selectFrom('experiments').select(['decision', 'reason', 'run_id']).execute();
  const refused: Record<string, number> = {};
  let accepted = 0;
  for (const row of rows) {
    if (row.decision === 'accepted') accepted += 1;
    else refused[row.reason] = (refused[row.reason] ?? 0) + 1;
  }
  const thisRun = rows.filter((row) => row.run_id === outcome.runId && row.decision !== 'skipped');
  const bestArtifact = path.join(study.dir, '.kloop', `best-${path.basename(study.artifactPath)}`);
  writeFileAtomic(bestArtifact, best.text);
  const report: StudyReport = {
    study: study.dir,
    fingerprint: evaluator.fingerprint,
    baseline: Object.fromEntries(PARTITIONS.map((name) => [name, baselineDetails[name].composite])) as Record<PartitionName, number | null>,
    best: Object.fromEntries(PARTITIONS.map((name) => [name, bestDetails[name].composite])) as Record<PartitionName, number | null>,
    details: { baseline: baselineDetails, best: bestDetails },
    experiments: rows.filter((row) => row.decision !== 'skipped').length,
    accepted,
    refused,
    thisRun: {
      experiments: thisRun.length,
      accepted: thisRun.filter((row) => row.decision === 'accepted').length,
      refused: thisRun.filter((row) => row.decision === 'refused').length,
    },
    stopReason: outcome.stopReason,
    stopDetail: outcome.stopDetail,
    bestVersion: best.id,
    baselineVersion: seed.id,
    bestArtifact,
    database: studyDatabasePath(study.dir),
    wallTimeMs: outcome.wallTimeMs,
  };
  await db.updateTable('runs').set({ report: JSON.stringify(report) }).where('id', '=', outcome.runId).execute();
  return report;
}
