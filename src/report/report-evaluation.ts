/**
 * How the study report scores the seed and the best artifact on every
 * partition (src/report/report.ts): from the stored results, executing what
 * is missing unless the run's stop forbids spending, and what it leaves
 * unevaluated, with why.
 */
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import { InfrastructureError, isKloopError } from '../errors.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { evaluatePartition } from '../loop/evaluate-partition.ts';
import type { NotEvaluatedPartition, NotEvaluatedReason, PartitionSummary } from './report-types.ts';

/** How the report evaluates: what it may spend, and why it stopped spending (once it has). */
export interface ReportEvaluation {
  evaluator: Evaluator;
  study: LoadedStudy;
  signal?: AbortSignal;
  /** Set once nothing more may be executed: stored results only from then on. */
  storedOnly?: { reason: NotEvaluatedReason; why: string };
  notEvaluated: NotEvaluatedPartition[];
}

export const WHY_STORED_ONLY: Readonly<Record<NotEvaluatedReason, string>> = {
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
export async function summarise(
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
