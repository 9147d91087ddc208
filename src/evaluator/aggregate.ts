/**
 * The aggregation of an evaluation: per-repeat records of one artifact on
 * one partition into its {@link PartitionScore} (composites, components and
 * metrics as means over valid example-repeats, usage summed).
 *
 * @module
 */
import type { ComponentScores, ExampleScoreRecord, MetricScores, PartitionScore } from './partition-score.ts';
import { UNSCORED_REASON } from './partition-score.ts';

/** The names a partition score reports, in order: the task's components and metrics. */
export interface ScoreNames {
  components: readonly string[];
  metrics: readonly string[];
}

export interface RepeatResult {
  records: ExampleScoreRecord[];
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  latencyMs: number;
}

/** Mean of defined numbers, or null. */
function meanOrNull(values: Array<number | null | undefined>): number | null {
  const defined = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
  return defined.length === 0 ? null : defined.reduce((sum, value) => sum + value, 0) / defined.length;
}

/** Names in order: `declared` first, then any other key the records hold, in the order first seen. */
function orderedNames(declared: readonly string[], records: ReadonlyArray<Record<string, unknown>>): string[] {
  const names = [...declared];
  const seen = new Set(names);
  for (const record of records) {
    for (const name of Object.keys(record)) {
      if (!seen.has(name)) {
        seen.add(name);
        names.push(name);
      }
    }
  }
  return names;
}

/**
 * Folds repeat results into a {@link PartitionScore}.
 *
 * @param names the task's component and metric names, in report order
 *   ({@link scoreNamesOf}); a component or metric the records hold that is
 *   not declared follows, in the order first seen. Default none declared.
 *   Components are reported when scored at least once; declared metrics
 *   always (null when never defined).
 */
export function aggregate(
  partition: string,
  artifactHash: string,
  fingerprint: string,
  results: readonly RepeatResult[],
  names: ScoreNames = { components: [], metrics: [] },
): PartitionScore {
  const examples = results.flatMap((result) => result.records);
  const valid = examples.filter((record): record is ExampleScoreRecord & { valid: true } => record.valid);
  const unscored = examples.filter((record) => !record.valid && record.invalidReason === UNSCORED_REASON);
  const components: ComponentScores = {};
  for (const name of orderedNames(
    names.components,
    valid.map((record) => record.components),
  )) {
    const value = meanOrNull(valid.map((record) => record.components[name]));
    if (value !== null) components[name] = value;
  }
  const metrics: MetricScores = {};
  for (const name of orderedNames(
    names.metrics,
    valid.map((record) => record.metrics),
  )) {
    metrics[name] = meanOrNull(valid.map((record) => record.metrics[name]));
  }
  return {
    partition,
    artifactHash,
    fingerprint,
    repeats: results.length,
    composite: meanOrNull(valid.map((record) => record.composite)),
    components,
    metrics,
    invalid: examples.length - valid.length - unscored.length,
    transient: examples.filter((record) => !record.valid && record.transient === true).length,
    ...(unscored.length > 0 ? { unscored: [...new Set(unscored.map((record) => record.exampleId))] } : {}),
    total: examples.length,
    runComposites: results.map((result) =>
      meanOrNull(result.records.map((record) => (record.valid ? record.composite : null))),
    ),
    examples,
    usage: results.reduce(
      (sum, result) => ({
        inputTokens: sum.inputTokens + result.usage.inputTokens,
        outputTokens: sum.outputTokens + result.usage.outputTokens,
        costUsd: sum.costUsd + result.usage.costUsd,
      }),
      { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    ),
    latencyMs: results.reduce((sum, result) => sum + result.latencyMs, 0),
  };
}
