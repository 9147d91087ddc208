/**
 * The frozen evaluator: runs an artifact over one named partition, `repeats`
 * times, and returns per-example, per-repeat, per-component scores plus
 * invalid counts, usage and latency.
 *
 * Results are keyed by (fingerprint, artifact hash, partition membership hash,
 * repeat) and written to the study database as each repeat finishes, so a
 * resumed study never pays for the same evaluation twice.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { Executor } from '../tasks/executor.ts';
import type { ComponentWeights } from '../tasks/intent/scorer.ts';
import { DEFAULT_WEIGHTS, SCORER_VERSION, scoreExample } from '../tasks/intent/scorer.ts';
import type {
  ComponentName,
  ComponentScores,
  DiagnosticMetrics,
  ExampleScore,
  ExampleScoreRecord,
  PartitionScore,
} from './partition-score.ts';
import { COMPONENTS } from './partition-score.ts';

/** Identity of an evaluator: everything that changes a score. */
export interface FingerprintInput {
  corpusVersion: string;
  scorerVersion: string;
  weights: Readonly<ComponentWeights>;
  executorId: string;
}

/** SHA-256 (hex, first 16 characters) of the evaluator identity. */
export function computeFingerprint(input: FingerprintInput): string {
  return contentHash(
    JSON.stringify([input.corpusVersion, input.scorerVersion, COMPONENTS.map((name) => input.weights[name]), input.executorId]),
  ).slice(0, 16);
}

/** Content hash of examples' text and gold, independent of order and partition. */
export function corpusVersion(examples: readonly Example[]): string {
  const parts = examples
    .map((example) => `${example.id}\u0000${contentHash(JSON.stringify([example.goal, example.expected]))}`)
    .sort();
  return contentHash(parts.join('\n')).slice(0, 16);
}

/** Hash of a partition's membership (ids and contents). */
export function partitionHash(examples: readonly Example[]): string {
  return corpusVersion(examples);
}

export interface EvaluatorOptions {
  executor: Executor;
  /** Every example of the study (used for the corpus version). */
  corpus: readonly Example[];
  weights?: Readonly<ComponentWeights>;
  /** Study database for stored results; without it nothing is cached. */
  db?: StudyDatabase;
  /** Concurrent executor calls. Default 8. */
  concurrency?: number;
  now?: () => Date;
  /** Called after each example-repeat finishes. */
  onProgress?: (done: number, total: number) => void;
}

export interface EvaluateRequest {
  artifactText: string;
  partition: string;
  examples: readonly Example[];
  /** Number of repeats (≥ 1). Default 1. */
  repeats?: number;
  /** First repeat index. Default 0. */
  firstRepeat?: number;
  /** Bypass stored results (they are still written). Default false. */
  fresh?: boolean;
  signal?: AbortSignal;
}

/** A frozen evaluator bound to one executor, corpus and weight set. */
export interface Evaluator {
  readonly fingerprint: string;
  readonly executor: Executor;
  readonly weights: Readonly<ComponentWeights>;
  evaluate(request: EvaluateRequest): Promise<PartitionScore>;
}

/** Creates an evaluator. See {@link Evaluator}. */
export function createEvaluator(options: EvaluatorOptions): Evaluator {
  const weights = options.weights ?? DEFAULT_WEIGHTS;
  const fingerprint = computeFingerprint({
    corpusVersion: corpusVersion(options.corpus),
    scorerVersion: SCORER_VERSION,
    weights,
    executorId: options.executor.id,
  });
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const now = options.now ?? (() => new Date());

  async function evaluateRepeat(
    artifactText: string,
    artifactHash: string,
    partition: string,
    membership: string,
    examples: readonly Example[],
    repeat: number,
    fresh: boolean,
    signal: AbortSignal | undefined,
  ): Promise<RepeatResult> {
    const db = options.db;
    if (db !== undefined && !fresh) {
      const stored = await loadRepeat(db, fingerprint, artifactHash, membership, repeat, examples);
      if (stored !== undefined) return stored;
    }
    const records: ExampleScoreRecord[] = new Array(examples.length);
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    let latencyMs = 0;
    await mapWithConcurrency(examples, concurrency, async (example, index) => {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const result = await options.executor.execute({
        goal: example.goal,
        artifact: artifactText,
        repeat,
        exampleId: example.id,
        ...(signal !== undefined ? { signal } : {}),
      });
      if (result.usage !== undefined) {
        usage.inputTokens += result.usage.inputTokens;
        usage.outputTokens += result.usage.outputTokens;
        usage.costUsd += result.usage.costUsd;
      }
      latencyMs += result.latencyMs ?? 0;
      const score: ExampleScore = scoreExample(example.expected, result, weights);
      records[index] = { ...score, exampleId: example.id, repeat };
      options.onProgress?.(index + 1, examples.length);
    });
    const repeatResult: RepeatResult = { records, usage, latencyMs };
    if (db !== undefined) await storeRepeat(db, fingerprint, artifactHash, partition, membership, repeat, repeatResult, now);
    return repeatResult;
  }

  return {
    fingerprint,
    executor: options.executor,
    weights,
    async evaluate(request: EvaluateRequest): Promise<PartitionScore> {
      const repeats = request.repeats ?? 1;
      if (!Number.isInteger(repeats) || repeats < 1) throw new RangeError(`repeats must be an integer ≥ 1, got ${repeats}`);
      const first = request.firstRepeat ?? 0;
      const artifactHash = contentHash(request.artifactText);
      const membership = partitionHash(request.examples);
      const results: RepeatResult[] = [];
      for (let repeat = first; repeat < first + repeats; repeat += 1) {
        results.push(
          await evaluateRepeat(
            request.artifactText,
            artifactHash,
            request.partition,
            membership,
            request.examples,
            repeat,
            request.fresh === true,
            request.signal,
          ),
        );
      }
      return aggregate(request.partition, artifactHash, fingerprint, results);
    },
  };
}

interface RepeatResult {
  records: ExampleScoreRecord[];
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  latencyMs: number;
}

/** Mean of defined numbers, or null. */
function meanOrNull(values: Array<number | null | undefined>): number | null {
  const defined = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
  return defined.length === 0 ? null : defined.reduce((sum, value) => sum + value, 0) / defined.length;
}

/** Folds repeat results into a {@link PartitionScore}. */
export function aggregate(
  partition: string,
  artifactHash: string,
  fingerprint: string,
  results: readonly RepeatResult[],
): PartitionScore {
  const examples = results.flatMap((result) => result.records);
  const valid = examples.filter((record): record is ExampleScoreRecord & { valid: true } => record.valid);
  const components: ComponentScores = {};
  for (const name of COMPONENTS) {
    const value = meanOrNull(valid.map((record) => record.components[name as ComponentName]));
    if (value !== null) components[name] = value;
  }
  const metrics: DiagnosticMetrics = {
    entityPrecision: meanOrNull(valid.map((record) => record.metrics.entityPrecision)),
    relationRecall: meanOrNull(valid.map((record) => record.metrics.relationRecall)),
    projectionCoverage: meanOrNull(valid.map((record) => record.metrics.projectionCoverage)),
  };
  return {
    partition,
    artifactHash,
    fingerprint,
    repeats: results.length,
    composite: meanOrNull(valid.map((record) => record.composite)),
    components,
    metrics,
    invalid: examples.length - valid.length,
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

/**
 * Per-example mean composite over repeats, keyed by example id; examples with
 * no valid repeat are absent (never scored as 0).
 */
export function perExampleMeans(score: PartitionScore): Map<string, number> {
  const sums = new Map<string, { sum: number; count: number }>();
  for (const record of score.examples) {
    if (!record.valid) continue;
    const entry = sums.get(record.exampleId) ?? { sum: 0, count: 0 };
    entry.sum += record.composite;
    entry.count += 1;
    sums.set(record.exampleId, entry);
  }
  return new Map([...sums].map(([id, { sum, count }]) => [id, sum / count]));
}

async function loadRepeat(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  membership: string,
  repeat: number,
  examples: readonly Example[],
): Promise<RepeatResult | undefined> {
  const row = await db
    .selectFrom('evaluations')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .where('artifact_hash', '=', artifactHash)
    .where('partition_hash', '=', membership)
    .where('repeat', '=', repeat)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const rows = await db.selectFrom('evaluation_examples').selectAll().where('evaluation_id', '=', row.id).execute();
  const byId = new Map(rows.map((example) => [example.example_id, JSON.parse(example.score) as ExampleScoreRecord]));
  // The records in the partition's order, as a fresh evaluation has them: means summed in another
  // order differ in the last bits, and a stored score must equal the fresh one exactly.
  const records = examples.map((example) => byId.get(example.id));
  if (records.some((record) => record === undefined)) return undefined; // incomplete: evaluate again
  return {
    records: records as ExampleScoreRecord[],
    usage: JSON.parse(row.usage) as RepeatResult['usage'],
    latencyMs: row.latency_ms,
  };
}

async function storeRepeat(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  partition: string,
  membership: string,
  repeat: number,
  result: RepeatResult,
  now: () => Date,
): Promise<void> {
  const summary = aggregate(partition, artifactHash, fingerprint, [result]);
  await db.transaction().execute(async (transaction) => {
    const inserted = await transaction
      .insertInto('evaluations')
      .values({
        fingerprint,
        artifact_hash: artifactHash,
        partition,
        partition_hash: membership,
        repeat,
        composite: summary.composite,
        components: JSON.stringify(summary.components),
        metrics: JSON.stringify(summary.metrics),
        invalid: summary.invalid,
        total: summary.total,
        usage: JSON.stringify(result.usage),
        latency_ms: result.latencyMs,
        created_at: isoNow(now),
      })
      .onConflict((conflict) => conflict.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted === undefined) return; // another writer stored the same evaluation first
    for (const record of result.records) {
      await transaction
        .insertInto('evaluation_examples')
        .values({
          evaluation_id: inserted.id,
          example_id: record.exampleId,
          valid: record.valid ? 1 : 0,
          composite: record.valid ? record.composite : null,
          score: JSON.stringify(record),
        })
        .execute();
    }
  });
}

/** Runs `work` over `items` with at most `limit` in flight; rejects on the first failure. */
export async function mapWithConcurrency<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index]!, index);
    }
  });
  await Promise.all(workers);
}
