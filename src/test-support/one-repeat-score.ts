/**
 * A partition score from one repeat's records, for tests whose evaluator is
 * a few lines of their own (the keyword-rules proposer's tests).
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';

/** One record as such a test builds it: valid with a composite, or invalid. */
type OneRepeatRecord = { valid: true; composite: number } | { valid: false };

/**
 * The optimization partition's score of `text` from its records (one repeat):
 * the composite is the mean over valid records (null when none), invalid
 * records are counted, components empty, the intent metrics null.
 */
export function oneRepeatScore(text: string, fingerprint: string, records: readonly OneRepeatRecord[]): PartitionScore {
  const valid = records.filter((record): record is { valid: true; composite: number } => record.valid);
  const composite = valid.length === 0 ? null : valid.reduce((sum, record) => sum + record.composite, 0) / valid.length;
  return {
    partition: 'optimization',
    artifactHash: contentHash(text),
    fingerprint,
    repeats: 1,
    composite,
    components: {},
    metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
    invalid: records.length - valid.length,
    transient: 0,
    total: records.length,
    runComposites: [composite],
    examples: records as unknown as PartitionScore['examples'],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    latencyMs: 0,
  };
}
