/**
 * What the study report says of the decisions (src/report/report.ts): the
 * failed proposer answers, the racing summary, and the stuck-study advice of
 * a run that accepted nothing.
 */
import path from 'node:path';
import type { StudyDatabase } from '../storage/study-database.ts';
import { readFailedProposalFailures } from '../storage/notebook/report-queries.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { corpusPolicyOf } from '../loop/corpus-lifecycle.ts';
import type { RefusedExperiment, StuckAdvice } from './stuck-advice.ts';
import { stuckAdvice } from './stuck-advice.ts';
import { refusedOutcomes } from './stuck-outcomes.ts';
import { countEvaluated } from '../loop/notebook.ts';
import type { StudyReport } from './report-types.ts';
import { openNotebook } from '../storage/notebook/index.ts';

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
export async function stuckAdviceOf(
  db: StudyDatabase,
  study: LoadedStudy,
  rows: ReadonlyArray<{ id: number; decision: string; reason: string; evidence: string }>,
  stopReason: string,
): Promise<StuckAdvice | null> {
  if (stopReason === 'interrupted' || rows.some((row) => row.decision === 'accepted')) return null;
  if (rows.length === 0 && stopReason === 'max_experiments') {
    const evaluated = await countEvaluated(openNotebook(db));
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
  const members = await readCorpusMembers(openNotebook(db));
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
    budget: { maxExperiments: study.stopping.maxExperiments, evaluated: await countEvaluated(openNotebook(db)) },
    ...(study.proposer.budget !== undefined ? { proposerBudget: study.proposer.budget } : {}),
    shadowAlpha: study.gate.shadowAlpha,
  });
}

/** The racing summary of the decisions (see {@link StudyReport.racing}); `{}` when none was raced. */
export function racingSummary(rows: ReadonlyArray<{ decision: string; reason: string; evidence: string }>): {
  racing?: NonNullable<StudyReport['racing']>;
} {
  let decisions = 0;
  let stoppedEarly = 0;
  let acceptedEarly = 0;
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
    if (evidence.racing.stop === 'early') acceptedEarly += 1;
  }
  if (decisions === 0) return {};
  return { racing: { decisions, stoppedEarly, ...(acceptedEarly > 0 ? { acceptedEarly } : {}), evaluated, planned } };
}
