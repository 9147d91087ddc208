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
import type {
  ComponentScores,
  ExampleScoreRecord,
  MetricScores,
  PartitionScore,
} from '../evaluator/partition-score.ts';
import { UNSCORED_REASON } from '../evaluator/partition-score.ts';
import { InfrastructureError, isKloopError } from '../errors.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { describeLocation, studyDatabaseLocation } from '../storage/database.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import {
  readCorpusMovesSince,
  readDecisions,
  readFailedProposalFailures,
  readLastCorpusEventId,
  writeRunReport,
} from '../storage/notebook/report-queries.ts';
import type { LoadedStudy, StudyHeadline } from '../loop/loaded-study.ts';
import { headlineValue } from '../loop/loaded-study.ts';
import { scoreNamesOf } from '../evaluator/evaluator.ts';
import { evaluatePartition } from '../loop/evaluate-partition.ts';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { corpusPolicyOf } from '../loop/corpus-lifecycle.ts';
import type { RefusedExperiment, StuckAdvice } from './stuck-advice.ts';
import { stuckAdvice } from './stuck-advice.ts';
import { refusedOutcomes } from './stuck-outcomes.ts';
import { countEvaluated } from '../loop/notebook.ts';
import type { FlakyExamples } from '../evaluator/flaky-examples.ts';
import { FLAKY_RANGE, findFlakyExamples } from '../evaluator/flaky-examples.ts';

/** Scores of one artifact on one partition, as reported. */
export interface PartitionSummary {
  composite: number | null;
  components: ComponentScores;
  metrics: MetricScores;
  invalid: number;
  examples: number;
  /**
   * False when the report could not evaluate this partition (composite null,
   * no components): {@link StudyReport.notEvaluated} says why. Absent in
   * reports stored before it existed (= true).
   */
  evaluated?: boolean;
}

/**
 * Why the report left a partition unevaluated: the run was interrupted (no
 * model call after an interrupt), the budget is spent (no call beyond it), or
 * the infrastructure failed (the run's stop, or failures while reporting).
 */
export type NotEvaluatedReason = 'interrupted' | 'budget' | 'infrastructure_failure';

/** A partition of the seed or of the best artifact the report could not evaluate. */
export interface NotEvaluatedPartition {
  artifact: 'baseline' | 'best';
  version: number;
  partition: PartitionName;
  reason: NotEvaluatedReason;
  /** What stopped it, with the numbers (example-repeats without a stored result, the error). */
  detail: string;
}

/**
 * The stops after which the report evaluates nothing new, reading only the
 * results the run stored: after an interrupt, a spent budget or an
 * infrastructure failure, another model call is what the user did not want
 * (or cannot succeed).
 */
export const STORED_ONLY_STOPS: Readonly<Record<string, NotEvaluatedReason>> = Object.freeze({
  interrupted: 'interrupted',
  budget: 'budget',
  infrastructure_failure: 'infrastructure_failure',
});
/** Examples per partition. */
export type PartitionSizes = Record<PartitionName, number>;

/** A graduation or a rotation recorded during a run: examples moved from shadow into optimization between rounds. */
export interface CorpusMoveSummary {
  /** `graduated`: served their time in shadow; `rotated_out`: the shadow was spent (maxShadowExposures). */
  kind: 'graduated' | 'rotated_out';
  from: 'shadow';
  to: 'optimization';
  exampleIds: string[];
  /** The last experiment decided before the move (null: none yet). */
  afterExperiment: number | null;
  /** When it was recorded (ISO 8601). */
  at: string;
}

/** A partition on which the best artifact scores below the seed. */
export interface BelowBaseline {
  partition: PartitionName;
  /** Composites in [0, 1] (higher is better), on the partition as it is now. */
  baseline: number;
  best: number;
  /** best − baseline, below 0. */
  delta: number;
}

/** Where a run's corpus stood when it started (after the corpus files' changes were picked up): see {@link markCorpus}. */
export interface CorpusMark {
  sizes: PartitionSizes;
  /** The last corpus event recorded then (0: none); later events are this run's. */
  lastEventId: number;
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
  headline: StudyHeadline & {
    baseline: Record<PartitionName, number | null>;
    best: Record<PartitionName, number | null>;
  };
  /** Composite per partition of the seed artifact. */
  baseline: Record<PartitionName, number | null>;
  /** Composite per partition of the best (active) artifact. */
  best: Record<PartitionName, number | null>;
  details: { baseline: Record<PartitionName, PartitionSummary>; best: Record<PartitionName, PartitionSummary> };
  /**
   * The partitions of the seed and the best artifact the report could not
   * evaluate, and why (their composites above are null); empty when every one
   * was evaluated. Absent in reports stored before it existed.
   */
  notEvaluated?: NotEvaluatedPartition[];
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
  thisRun: {
    experiments: number;
    accepted: number;
    refused: number;
    skipped: number;
    rebased: number;
    proposalFailures: Record<string, number>;
  };
  stopReason: string;
  stopDetail: string;
  bestVersion: number;
  baselineVersion: number;
  bestArtifact: string;
  database: string;
  wallTimeMs: number;
  /**
   * After a run that decided candidates and accepted none: the dominant
   * refusal reason and the way out (src/report/stuck-advice.ts); null otherwise.
   */
  stuck: StuckAdvice | null;
  /**
   * What the comparison of seed and best stands on: both are evaluated on
   * the partitions as they are at the end of the run (`on: 'current'`),
   * `sizes` now and `sizesAtStart` when this run began (equal when nothing
   * moved: `changed` false).
   */
  comparison: { on: 'current'; sizes: PartitionSizes; sizesAtStart: PartitionSizes; changed: boolean };
  /** Graduations and rotations recorded during this run, in order (also printed as they happen). */
  corpusMoves: CorpusMoveSummary[];
  /** Partitions on which the best artifact's composite is below the seed's (none when the best is the seed). */
  belowBaseline: BelowBaseline[];
  /**
   * With repeats: the examples whose outcome varies across the repeats of the
   * report's evaluations, of the seed and of the best artifact, every
   * partition (src/evaluator/flaky-examples.ts; `level` {@link FLAKY_RANGE}).
   */
  flaky: { level: number; repeats: number; baseline: FlakyExamples; best: FlakyExamples };
  /**
   * Examples left out of the composites because no component of weight > 0
   * was scored (a missing score, not 0: src/evaluator/partition-score.ts
   * `UNSCORED_REASON`), of the seed and of the best artifact, every
   * partition. Absent when there is none.
   */
  unscored?: { baseline: string[]; best: string[] };
}

/** Examples per partition of the study as it stands. */
export function partitionSizes(study: LoadedStudy): PartitionSizes {
  return Object.fromEntries(PARTITIONS.map((name) => [name, study.partitions[name].length])) as PartitionSizes;
}

/**
 * Marks where the study's corpus stands at the start of a run (after
 * `startCorpusLifecycle`): the report lists the graduations and rotations
 * recorded after it, and the partition sizes then.
 */
export async function markCorpus(db: StudyDatabase, study: LoadedStudy): Promise<CorpusMark> {
  return { sizes: partitionSizes(study), lastEventId: await readLastCorpusEventId(db) };
}

/** The graduations and rotations recorded after event `afterEventId`, one entry per round boundary. */
export async function corpusMovesSince(db: StudyDatabase, afterEventId: number): Promise<CorpusMoveSummary[]> {
  const rows = await readCorpusMovesSince(db, afterEventId, ['graduated', 'rotated_out']);
  const moves: CorpusMoveSummary[] = [];
  for (const row of rows) {
    const last = moves.at(-1);
    const kind = row.kind as CorpusMoveSummary['kind'];
    if (
      last !== undefined &&
      last.kind === kind &&
      last.afterExperiment === row.experimentId &&
      last.at === row.createdAt
    ) {
      if (row.exampleId !== null) last.exampleIds.push(row.exampleId);
      continue;
    }
    moves.push({
      kind,
      from: 'shadow',
      to: 'optimization',
      exampleIds: row.exampleId === null ? [] : [row.exampleId],
      afterExperiment: row.experimentId,
      at: row.createdAt,
    });
  }
  return moves;
}

/** The partitions on which `best` scores below `baseline` (both composites known). */
export function partitionsBelowBaseline(
  baseline: Record<PartitionName, number | null>,
  best: Record<PartitionName, number | null>,
): BelowBaseline[] {
  const below: BelowBaseline[] = [];
  for (const partition of PARTITIONS) {
    const seed = baseline[partition];
    const found = best[partition];
    // Composites of the same evaluations are equal to the last bit: only a real difference counts.
    if (seed === null || found === null || !(found < seed - 1e-12)) continue;
    below.push({ partition, baseline: seed, best: found, delta: found - seed });
  }
  return below;
}

/** How the report evaluates: what it may spend, and why it stopped spending (once it has). */
interface ReportEvaluation {
  evaluator: Evaluator;
  study: LoadedStudy;
  signal?: AbortSignal;
  /** Set once nothing more may be executed: stored results only from then on. */
  storedOnly?: { reason: NotEvaluatedReason; why: string };
  notEvaluated: NotEvaluatedPartition[];
}

const WHY_STORED_ONLY: Readonly<Record<NotEvaluatedReason, string>> = {
  interrupted: 'the run was interrupted, and the report makes no model call after an interrupt',
  budget: 'the budget is spent, and the report makes no call beyond it',
  infrastructure_failure: 'the infrastructure failed, and the report does not call it again',
};

function summaryOf(score: PartitionScore, examples: number): PartitionSummary {
  return {
    composite: score.composite,
    components: score.components,
    metrics: score.metrics,
    invalid: score.invalid,
    examples,
    evaluated: true,
  };
}

function notEvaluatedSummary(examples: number): PartitionSummary {
  return { composite: null, components: {}, metrics: {}, invalid: 0, examples, evaluated: false };
}

/** Why an error thrown while reporting ends the report's spending; undefined for an error that is a bug. */
function stopOf(error: unknown, signal: AbortSignal | undefined): NotEvaluatedReason | undefined {
  if (signal?.aborted === true) return 'interrupted';
  if (isKloopError(error) && error.code === 'budget') return 'budget';
  if (InfrastructureError.isInstance(error)) return 'infrastructure_failure';
  return undefined;
}

/**
 * One artifact on every partition. Executes what is missing unless spending
 * has stopped (`storedOnly`); an interrupt, the budget or an infrastructure
 * failure met on the way stops it for every later partition too, and each
 * partition it could not evaluate in full is listed in `notEvaluated`.
 */
async function summarise(
  context: ReportEvaluation,
  artifact: 'baseline' | 'best',
  version: ArtifactVersion,
  records?: ExampleScoreRecord[],
): Promise<Record<PartitionName, PartitionSummary>> {
  const { evaluator, study } = context;
  const result = {} as Record<PartitionName, PartitionSummary>;
  for (const partition of PARTITIONS) {
    const examples = study.partitions[partition].length;
    const skip = (reason: NotEvaluatedReason, detail: string): void => {
      result[partition] = notEvaluatedSummary(examples);
      context.notEvaluated.push({ artifact, version: version.id, partition, reason, detail });
    };
    if (context.storedOnly !== undefined) {
      const stored = await evaluatePartition(evaluator, study, version.text, partition, undefined, study.gate.repeats, {
        storedOnly: true,
      });
      const missing = stored.missing ?? 0;
      records?.push(...stored.examples);
      if (missing === 0) result[partition] = summaryOf(stored, examples);
      else
        skip(
          context.storedOnly.reason,
          `${context.storedOnly.why}: ${missing} of ${missing + stored.total} example-repeats have no stored result`,
        );
      continue;
    }
    let score: PartitionScore;
    try {
      score = await evaluatePartition(evaluator, study, version.text, partition, context.signal);
    } catch (error) {
      const reason = stopOf(error, context.signal);
      if (reason === undefined) throw error;
      const message = reason === 'interrupted' ? 'interrupted while the report evaluated it' : (error as Error).message;
      context.storedOnly = {
        reason,
        why: reason === 'interrupted' ? WHY_STORED_ONLY.interrupted : `${WHY_STORED_ONLY[reason]} (${message})`,
      };
      skip(reason, `${message}; nothing more is evaluated for this report`);
      continue;
    }
    if (score.transient > 0) {
      const failure = score.examples.find((record) => !record.valid && record.transient === true);
      skip(
        'infrastructure_failure',
        `${score.transient} of ${score.total} example-repeats failed in the infrastructure after the retries${failure !== undefined && !failure.valid ? ` (${failure.message})` : ''}`,
      );
      continue;
    }
    records?.push(...score.examples);
    result[partition] = summaryOf(score, examples);
  }
  return result;
}

/** Failed proposer answers by reason code, of the whole study or of one run. */
export async function proposalFailureCounts(db: StudyDatabase, runId?: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const failures of await readFailedProposalFailures(db, runId)) {
    const code = (JSON.parse(failures) as Array<{ code?: string }>)[0]?.code ?? 'unusable';
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
      steps: [
        `raise stopping.maxExperiments in kloop.yaml, or pass --max-experiments N (N above ${evaluated}) to this run`,
      ],
    };
  }
  const experiments: RefusedExperiment[] = rows.map((row) => {
    let evidence: unknown = null;
    try {
      evidence = JSON.parse(row.evidence);
    } catch {
      evidence = null;
    }
    return { id: row.id, reason: row.reason, evidence };
  });
  // Right/wrong tasks: what each not-significant edit fixed and broke, so the advice can weigh them together.
  if (study.task.outcome === 'binary') {
    const outcomes = await refusedOutcomes(
      db,
      rows.filter((row) => row.reason === 'not_significant').map((row) => row.id),
      study.partitions.optimization.map((example) => example.id),
    );
    for (const experiment of experiments) {
      const found = outcomes.get(experiment.id);
      if (found !== undefined) experiment.outcomes = found;
    }
  }
  const members = await readCorpusMembers(db);
  const shadow = new Set(study.partitions.shadow.map((example) => example.id));
  return stuckAdvice(experiments, {
    studyDir: displayPath(study.dir),
    alpha: study.gate.alpha,
    policy: corpusPolicyOf(study),
    sizes: {
      optimization: study.partitions.optimization.length,
      anchor: study.partitions.anchor.length,
      shadow: study.partitions.shadow.length,
    },
    shadowExposures: members.filter((member) => shadow.has(member.exampleId)).map((member) => member.shadowExposures),
    budget: { maxExperiments: study.stopping.maxExperiments, evaluated: await countEvaluated(db) },
    ...(study.proposer.budget !== undefined ? { proposerBudget: study.proposer.budget } : {}),
    shadowAlpha: study.gate.shadowAlpha,
  });
}

/** The racing summary of the decisions (see {@link StudyReport.racing}); `{}` when none was raced. */
function racingSummary(rows: ReadonlyArray<{ decision: string; reason: string; evidence: string }>): {
  racing?: NonNullable<StudyReport['racing']>;
} {
  let decisions = 0;
  let stoppedEarly = 0;
  let evaluated = 0;
  let planned = 0;
  for (const row of rows) {
    if (row.decision === 'skipped') continue;
    const evidence = JSON.parse(row.evidence) as {
      racing?: { stop?: string; evaluated?: number; planned?: number };
      checks?: Array<{ name: string; data?: { racing?: { stop?: string } } }>;
    };
    if (evidence.racing === undefined) continue;
    decisions += 1;
    evaluated += evidence.racing.evaluated ?? 0;
    planned += evidence.racing.planned ?? 0;
    const shadowStopped =
      evidence.checks?.some((check) => check.name === 'shadow' && check.data?.racing?.stop === 'futility') === true;
    if (evidence.racing.stop === 'futility' || shadowStopped) stoppedEarly += 1;
  }
  return decisions === 0 ? {} : { racing: { decisions, stoppedEarly, evaluated, planned } };
}

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
  const refused: Record<string, number> = {};
  let accepted = 0;
  for (const row of rows) {
    if (row.decision === 'accepted') accepted += 1;
    else if (row.decision === 'refused') refused[row.reason] = (refused[row.reason] ?? 0) + 1;
  }
  const isRebased = (row: { evidence: string }): boolean =>
    (JSON.parse(row.evidence) as { rebased?: unknown }).rebased !== undefined;
  const failures = await proposalFailureCounts(db);
  const thisRunFailures = await proposalFailureCounts(db, outcome.runId);
  const thisRunRows = rows.filter((row) => row.runId === outcome.runId);
  const thisRun = thisRunRows.filter((row) => row.decision !== 'skipped');
  const bestArtifact = path.join(study.dir, '.kloop', `best-${path.basename(study.artifactPath)}`);
  mkdirSync(path.dirname(bestArtifact), { recursive: true }); // a study whose notebook is in PostgreSQL has no .kloop/ yet
  writeFileAtomicSync(bestArtifact, best.text); // a temporary name, fsync and a rename: a kill leaves the old or the new file
  const names = scoreNamesOf(study.task);
  const headline = study.headline ?? { name: 'composite', complement: false };
  const figures = (details: Record<PartitionName, PartitionSummary>) =>
    Object.fromEntries(PARTITIONS.map((name) => [name, headlineValue(headline, details[name].composite)])) as Record<
      PartitionName,
      number | null
    >;
  const report: StudyReport = {
    study: study.dir,
    fingerprint: evaluator.fingerprint,
    task: { id: study.task.id, components: [...names.components], metrics: [...names.metrics] },
    headline: { ...headline, baseline: figures(baselineDetails), best: figures(bestDetails) },
    baseline: Object.fromEntries(PARTITIONS.map((name) => [name, baselineDetails[name].composite])) as Record<
      PartitionName,
      number | null
    >,
    best: Object.fromEntries(PARTITIONS.map((name) => [name, bestDetails[name].composite])) as Record<
      PartitionName,
      number | null
    >,
    details: { baseline: baselineDetails, best: bestDetails },
    notEvaluated: evaluation.notEvaluated,
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
