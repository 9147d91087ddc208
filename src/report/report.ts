/**
 * The study report: baseline and best composites per partition, proposals by
 * decision and reason, the stop reason and where things are.
 */
import { sync as writeFileAtomicSync } from 'write-file-atomic';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import { UNSCORED_REASON } from '../evaluator/partition-score.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { describeLocation, studyDatabaseLocation } from '../storage/database.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import type { DecisionRow } from '../storage/notebook/report-queries.ts';
import { readDecisions, writeRunReport } from '../storage/notebook/report-queries.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { headlineValue } from '../loop/loaded-study.ts';
import { scoreNamesOf } from '../evaluator/evaluator.ts';
import { FLAKY_RANGE, findFlakyExamples } from '../evaluator/flaky-examples.ts';
import type { CorpusMark, PartitionSummary, StudyReport } from './report-types.ts';
import { STORED_ONLY_STOPS } from './report-types.ts';
import { corpusMovesSince, partitionSizes, partitionsBelowBaseline } from './report-corpus.ts';
import type { ReportEvaluation } from './report-evaluation.ts';
import { WHY_STORED_ONLY, summarise } from './report-evaluation.ts';
import { proposalFailureCounts, racingSummary, stuckAdviceOf } from './report-decisions.ts';

export type {
  BelowBaseline,
  CorpusMark,
  CorpusMoveSummary,
  NotEvaluatedPartition,
  NotEvaluatedReason,
  PartitionSizes,
  PartitionSummary,
  ReportedTask,
  StudyReport,
} from './report-types.ts';
export { STORED_ONLY_STOPS } from './report-types.ts';
export { corpusMovesSince, markCorpus, partitionSizes, partitionsBelowBaseline } from './report-corpus.ts';
export { proposalFailureCounts } from './report-decisions.ts';

/** Options of {@link buildStudyReport}. */
export interface ReportOptions {
  /** Aborts the report's evaluations (Ctrl-C while it evaluates): what is left is listed as not evaluated, `interrupted`. */
  signal?: AbortSignal;
}

/** The report's {@link StudyReport.unscored}: the ids of the records left out, once each; nothing when there is none. */
function unscoredOf(
  baseline: readonly ExampleScoreRecord[],
  best: readonly ExampleScoreRecord[],
): Pick<StudyReport, 'unscored'> {
  const ids = (records: readonly ExampleScoreRecord[]): string[] => [
    ...new Set(
      records.flatMap((record) =>
        !record.valid && record.invalidReason === UNSCORED_REASON ? [record.exampleId] : [],
      ),
    ),
  ];
  const unscored = { baseline: ids(baseline), best: ids(best) };
  return unscored.baseline.length + unscored.best.length > 0 ? { unscored } : {};
}

/** One value per partition, in report order. */
function perPartition(value: (name: PartitionName) => number | null): Record<PartitionName, number | null> {
  return Object.fromEntries(PARTITIONS.map((name) => [name, value(name)])) as Record<PartitionName, number | null>;
}

/** The decisions' counts of the whole study and of run `runId`, with the failed proposer answers and the racing summary. */
async function decisionCounts(
  db: StudyDatabase,
  rows: readonly DecisionRow[],
  runId: number,
): Promise<
  Pick<
    StudyReport,
    'experiments' | 'accepted' | 'refused' | 'skipped' | 'rebased' | 'proposalFailures' | 'racing' | 'thisRun'
  >
> {
  const refused: Record<string, number> = {};
  let accepted = 0;
  for (const row of rows) {
    if (row.decision === 'accepted') accepted += 1;
    else if (row.decision === 'refused') refused[row.reason] = (refused[row.reason] ?? 0) + 1;
  }
  const isRebased = (row: { evidence: string }): boolean =>
    (JSON.parse(row.evidence) as { rebased?: unknown }).rebased !== undefined;
  const failures = await proposalFailureCounts(db);
  const thisRunFailures = await proposalFailureCounts(db, runId);
  const thisRunRows = rows.filter((row) => row.runId === runId);
  const thisRun = thisRunRows.filter((row) => row.decision !== 'skipped');
  return {
    experiments: rows.filter((row) => row.decision !== 'skipped').length,
    accepted,
    refused,
    skipped: rows.filter((row) => row.decision === 'skipped').length,
    rebased: rows.filter((row) => row.decision !== 'skipped' && isRebased(row)).length,
    proposalFailures: failures,
    ...racingSummary(rows),
    thisRun: {
      experiments: thisRun.length,
      accepted: thisRun.filter((row) => row.decision === 'accepted').length,
      refused: thisRun.filter((row) => row.decision === 'refused').length,
      skipped: thisRunRows.filter((row) => row.decision === 'skipped').length,
      rebased: thisRun.filter(isRebased).length,
      proposalFailures: thisRunFailures,
    },
  };
}

/** Writes the best artifact to `<study>/.kloop/best-<artifact file name>` and returns that path. */
function writeBestArtifact(study: LoadedStudy, text: string): string {
  const bestArtifact = path.join(study.dir, '.kloop', `best-${path.basename(study.artifactPath)}`);
  mkdirSync(path.dirname(bestArtifact), { recursive: true }); // a study whose notebook is in PostgreSQL has no .kloop/ yet
  writeFileAtomicSync(bestArtifact, text); // a temporary name, fsync and a rename: a kill leaves the old or the new file
  return bestArtifact;
}

/**
 * Builds the report of a study after a run, and writes the best artifact file.
 *
 * The seed and the best artifact are scored on every partition from the
 * stored results, executing what is missing, except after the stops of
 * {@link STORED_ONLY_STOPS} (interrupted, budget, infrastructure failure),
 * which read stored results only. An abort of `signal`, the budget or an
 * infrastructure failure met while evaluating stops the spending for the
 * rest of the report. Every partition left unevaluated has a null composite
 * and an entry in `notEvaluated` saying why; the report is built in every case.
 *
 * @throws what is neither an abort, a budget error nor an infrastructure failure (a bug, a storage failure)
 */
export async function buildStudyReport(
  db: StudyDatabase,
  study: LoadedStudy,
  evaluator: Evaluator,
  outcome: { runId: number; stopReason: string; stopDetail: string; wallTimeMs: number; corpusAtStart?: CorpusMark },
  options: ReportOptions = {},
): Promise<StudyReport> {
  const seed = (await getRegistryVersion(db, 'seed'))!;
  const best = (await getRegistryVersion(db, 'active'))!;
  const storedOnly = STORED_ONLY_STOPS[outcome.stopReason];
  const evaluation: ReportEvaluation = {
    evaluator,
    study,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(storedOnly !== undefined ? { storedOnly: { reason: storedOnly, why: WHY_STORED_ONLY[storedOnly] } } : {}),
    notEvaluated: [],
  };
  const baselineRecords: ExampleScoreRecord[] = [];
  const bestRecords: ExampleScoreRecord[] = [];
  const baselineDetails = await summarise(evaluation, 'baseline', seed, baselineRecords);
  const bestDetails = await summarise(evaluation, 'best', best, bestRecords);
  const sizes = partitionSizes(study);
  const sizesAtStart = outcome.corpusAtStart?.sizes ?? sizes;
  const flakyBaseline = findFlakyExamples(baselineRecords);
  const flakyBest = findFlakyExamples(bestRecords);
  const corpusMoves =
    outcome.corpusAtStart === undefined ? [] : await corpusMovesSince(db, outcome.corpusAtStart.lastEventId);
  const rows = await readDecisions(db);
  const decisions = await decisionCounts(db, rows, outcome.runId);
  const bestArtifact = writeBestArtifact(study, best.text);
  const names = scoreNamesOf(study.task);
  const headline = study.headline ?? { name: 'composite', complement: false };
  const figures = (details: Record<PartitionName, PartitionSummary>) =>
    perPartition((name) => headlineValue(headline, details[name].composite));
  const report: StudyReport = {
    study: study.dir,
    fingerprint: evaluator.fingerprint,
    task: { id: study.task.id, components: [...names.components], metrics: [...names.metrics] },
    headline: { ...headline, baseline: figures(baselineDetails), best: figures(bestDetails) },
    baseline: perPartition((name) => baselineDetails[name].composite),
    best: perPartition((name) => bestDetails[name].composite),
    details: { baseline: baselineDetails, best: bestDetails },
    notEvaluated: evaluation.notEvaluated,
    ...decisions,
    stopReason: outcome.stopReason,
    stopDetail: outcome.stopDetail,
    bestVersion: best.id,
    baselineVersion: seed.id,
    bestArtifact,
    database: describeLocation(studyDatabaseLocation(study.dir)),
    wallTimeMs: outcome.wallTimeMs,
    stuck: await stuckAdviceOf(
      db,
      study,
      rows.filter((row) => row.runId === outcome.runId),
      outcome.stopReason,
    ),
    comparison: {
      on: 'current',
      sizes,
      sizesAtStart,
      changed: corpusMoves.length > 0 || PARTITIONS.some((name) => sizes[name] !== sizesAtStart[name]),
    },
    corpusMoves,
    belowBaseline: [],
    flaky: {
      level: FLAKY_RANGE,
      repeats: Math.max(flakyBaseline.repeats, flakyBest.repeats),
      baseline: flakyBaseline,
      best: flakyBest,
    },
    ...unscoredOf(baselineRecords, bestRecords),
  };
  if (best.id !== seed.id) report.belowBaseline = partitionsBelowBaseline(report.baseline, report.best);
  await writeRunReport(db, outcome.runId, JSON.stringify(report));
  return report;
}
