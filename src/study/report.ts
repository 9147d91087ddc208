/**
 * The study report: baseline and best composites per partition, proposals by
 * decision and reason, the stop reason and where things are.
 */
import { sync as writeFileAtomicSync } from 'write-file-atomic';
import path from 'node:path';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { ComponentScores, MetricScores } from '../evaluator/partition-score.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { studyDatabasePath } from '../storage/database.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import type { LoadedStudy, StudyHeadline } from './loaded-study.ts';
import { headlineValue } from './loaded-study.ts';
import { scoreNamesOf } from '../evaluator/evaluator.ts';
import { evaluatePartition } from './run-study.ts';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { corpusPolicyOf } from './corpus-lifecycle.ts';
import type { StuckAdvice } from './stuck-advice.ts';
import { stuckAdvice } from './stuck-advice.ts';
import { countEvaluated } from '../loop/notebook.ts';

/** Scores of one artifact on one partition, as reported. */
export interface PartitionSummary {
  composite: number | null;
  components: ComponentScores;
  metrics: MetricScores;
  invalid: number;
  examples: number;
}

/** The study's task as reports name it: its id, component and metric names in report order, and the headline figure. */
export interface ReportedTask {
  /** The task's id (name and scorer version), e.g. `intent-scorer@1`. */
  id: string;
  /** Component names, in the task's report order. */
  components: string[];
  /** Diagnostic metric names, in the task's report order. */
  metrics: string[];
}

export interface StudyReport {
  study: string;
  fingerprint: string;
  /** The task: id, component and metric names (the report's columns). */
  task: ReportedTask;
  /**
   * The headline figure per partition, of the seed and of the best artifact:
   * the composite, or the task's own figure (`misroute rate` = 1 − accuracy).
   */
  headline: StudyHeadline & { baseline: Record<PartitionName, number | null>; best: Record<PartitionName, number | null> };
  /** Composite per partition of the seed artifact. */
  baseline: Record<PartitionName, number | null>;
  /** Composite per partition of the best (active) artifact. */
  best: Record<PartitionName, number | null>;
  details: { baseline: Record<PartitionName, PartitionSummary>; best: Record<PartitionName, PartitionSummary> };
  /** Experiments evaluated (accepted + refused), whole study. */
  experiments: number;
  accepted: number;
  /** Refusal reason → count of evaluated candidates the gate refused, whole study. */
  refused: Record<string, number>;
  /** Candidates skipped before evaluation (near-duplicates, changes the incumbent already holds), whole study. */
  skipped: number;
  /** Decisions on candidates rebased onto an incumbent that moved during their round, and judged again, whole study. */
  rebased: number;
  /** Failed proposer answers by reason code (`broken_json`, `truncated`, `call_failed`, ...), whole study. */
  proposalFailures: Record<string, number>;
  /**
   * Raced decisions (`gate.racing`), whole study: how many were raced, how
   * many stopped early for futility (on optimization or on the shadow), and
   * the optimization example-repeats they evaluated of those a full
   * evaluation plans. Absent when no decision was raced.
   */
  racing?: { decisions: number; stoppedEarly: number; evaluated: number; planned: number };
  /** This run: experiments evaluated, accepted, refused, skipped, rebased and failed proposer answers. */
  thisRun: { experiments: number; accepted: number; refused: number; skipped: number; rebased: number; proposalFailures: Record<string, number> };
  stopReason: string;
  stopDetail: string;
  bestVersion: number;
  baselineVersion: number;
  bestArtifact: string;
  database: string;
  wallTimeMs: number;
  /**
   * After a run that decided candidates and accepted none: the dominant
   * refusal reason and the way out (src/study/stuck-advice.ts); null otherwise.
   */
  stuck: StuckAdvice | null;
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

/** Failed proposer answers by reason code, of the whole study or of one run. */
export async function proposalFailureCounts(db: StudyDatabase, runId?: number): Promise<Record<string, number>> {
  let query = db.selectFrom('proposals').select('failures').where('outcome', '=', 'failed');
  if (runId !== undefined) query = query.where('run_id', '=', runId);
  const counts: Record<string, number> = {};
  for (const row of await query.execute()) {
    const code = (JSON.parse(row.failures) as Array<{ code?: string }>)[0]?.code ?? 'unusable';
    counts[code] = (counts[code] ?? 0) + 1;
  }
  return counts;
}

/** A folder as a user would type it: relative to the working directory when inside it, else absolute. */
function displayPath(dir: string): string {
  const relative = path.relative(process.cwd(), dir);
  return relative === '' ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? dir : relative;
}

/** The stuck-study advice of a run that decided candidates and accepted none (not after an interrupt). */
async function stuckAdviceOf(
  db: StudyDatabase,
  study: LoadedStudy,
  rows: ReadonlyArray<{ id: number; decision: string; reason: string; evidence: string }>,
  stopReason: string,
): Promise<StuckAdvice | null> {
  if (stopReason === 'interrupted' || rows.some((row) => row.decision === 'accepted')) return null;
  if (rows.length === 0 && stopReason === 'max_experiments') {
    const evaluated = await countEvaluated(db);
    return {
      dominantReason: 'max_experiments',
      refusals: {},
      message: `the experiment budget was spent before this run could evaluate anything: ${evaluated} experiments are evaluated and stopping.maxExperiments is ${study.stopping.maxExperiments} (counted over every run of the study), so no round ran and no shadow example graduated`,
      steps: [`raise stopping.maxExperiments in kloop.yaml, or pass --max-experiments N (N above ${evaluated}) to this run`],
    };
  }
  const experiments = rows.map((row) => {
    let evidence: unknown = null;
    try {
      evidence = JSON.parse(row.evidence);
    } catch {
      evidence = null;
    }
    return { id: row.id, reason: row.reason, evidence };
  });
  const members = await readCorpusMembers(db);
  const shadow = new Set(study.partitions.shadow.map((example) => example.id));
  return stuckAdvice(experiments, {
    studyDir: displayPath(study.dir),
    alpha: study.gate.alpha,
    policy: corpusPolicyOf(study),
    sizes: { optimization: study.partitions.optimization.length, anchor: study.partitions.anchor.length, shadow: study.partitions.shadow.length },
    shadowExposures: members.filter((member) => shadow.has(member.exampleId)).map((member) => member.shadowExposures),
    budget: { maxExperiments: study.stopping.maxExperiments, evaluated: await countEvaluated(db) },
  });
}

/** The racing summary of the decisions (see {@link StudyReport.racing}); `{}` when none was raced. */
function racingSummary(rows: ReadonlyArray<{ decision: string; reason: string; evidence: string }>): { racing?: NonNullable<StudyReport['racing']> } {
  let decisions = 0;
  let stoppedEarly = 0;
  let evaluated = 0;
  let planned = 0;
  for (const row of rows) {
    if (row.decision === 'skipped') continue;
    const evidence = JSON.parse(row.evidence) as { racing?: { stop?: string; evaluated?: number; planned?: number }; checks?: Array<{ name: string; data?: { racing?: { stop?: string } } }> };
    if (evidence.racing === undefined) continue;
    decisions += 1;
    evaluated += evidence.racing.evaluated ?? 0;
    planned += evidence.racing.planned ?? 0;
    const shadowStopped = evidence.checks?.some((check) => check.name === 'shadow' && check.data?.racing?.stop === 'futility') === true;
    if (evidence.racing.stop === 'futility' || shadowStopped) stoppedEarly += 1;
  }
  return decisions === 0 ? {} : { racing: { decisions, stoppedEarly, evaluated, planned } };
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
  const rows = await db.selectFrom('experiments').select(['id', 'decision', 'reason', 'run_id', 'evidence']).execute();
  const refused: Record<string, number> = {};
  let accepted = 0;
  for (const row of rows) {
    if (row.decision === 'accepted') accepted += 1;
    else if (row.decision === 'refused') refused[row.reason] = (refused[row.reason] ?? 0) + 1;
  }
  const isRebased = (row: { evidence: string }): boolean => (JSON.parse(row.evidence) as { rebased?: unknown }).rebased !== undefined;
  const failures = await proposalFailureCounts(db);
  const thisRunFailures = await proposalFailureCounts(db, outcome.runId);
  const thisRunRows = rows.filter((row) => row.run_id === outcome.runId);
  const thisRun = thisRunRows.filter((row) => row.decision !== 'skipped');
  const bestArtifact = path.join(study.dir, '.kloop', `best-${path.basename(study.artifactPath)}`);
  writeFileAtomic(bestArtifact, best.text);
  const names = scoreNamesOf(study.task);
  const headline = study.headline ?? { name: 'composite', complement: false };
  const figures = (details: Record<PartitionName, PartitionSummary>) =>
    Object.fromEntries(PARTITIONS.map((name) => [name, headlineValue(headline, details[name].composite)])) as Record<PartitionName, number | null>;
  const report: StudyReport = {
    study: study.dir,
    fingerprint: evaluator.fingerprint,
    task: { id: study.task.id, components: [...names.components], metrics: [...names.metrics] },
    headline: { ...headline, baseline: figures(baselineDetails), best: figures(bestDetails) },
    baseline: Object.fromEntries(PARTITIONS.map((name) => [name, baselineDetails[name].composite])) as Record<PartitionName, number | null>,
    best: Object.fromEntries(PARTITIONS.map((name) => [name, bestDetails[name].composite])) as Record<PartitionName, number | null>,
    details: { baseline: baselineDetails, best: bestDetails },
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
    stopReason: outcome.stopReason,
    stopDetail: outcome.stopDetail,
    bestVersion: best.id,
    baselineVersion: seed.id,
    bestArtifact,
    database: studyDatabasePath(study.dir),
    wallTimeMs: outcome.wallTimeMs,
    stuck: await stuckAdviceOf(db, study, rows.filter((row) => row.run_id === outcome.runId), outcome.stopReason),
  };
  await db.updateTable('runs').set({ report: JSON.stringify(report) }).where('id', '=', outcome.runId).execute();
  return report;
}
