/**
 * The frozen evaluator: runs an artifact over one named partition, `repeats`
 * times, and returns per-example, per-repeat, per-component scores plus
 * invalid counts, usage and latency.
 *
 * Results are stored per example and repeat, keyed by (fingerprint, artifact
 * hash, example id, repeat) — the fingerprint covers every example's text and
 * gold — and written as each execution finishes, so a resumed study never
 * pays for the same evaluation twice and a partial evaluation is kept.
 * Transient failures (timeouts, network and server errors after the
 * executor's retries) are never stored: the next read executes them again.
 * Terminal invalid outputs (unparsable, off-schema, refused) are stored: they
 * are the artifact's outcome.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { ExecutionResult, Executor } from '../tasks/executor.ts';
import type { ComponentWeights } from '../tasks/intent/scorer.ts';
import type { ExpectedIntent } from '../tasks/intent/intent.ts';
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
    .map((example) => `${example.id}\u0000${contentHash(JSON.stringify([example.input, example.expected]))}`)
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
  weights?: Readonly<Record<string, number>>;
  /** Study database for stored results; without it nothing is stored. */
  db?: StudyDatabase;
  /**
   * Read only results stored at or after this ISO 8601 time (`--no-cache`:
   * results of earlier runs are ignored, results of this run reused).
   * Default: every stored result.
   */
  readSince?: string;
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
  /** Bypass stored results (new results are still written). Default false. */
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
  const weights = (options.weights ?? DEFAULT_WEIGHTS) as Readonly<ComponentWeights>;
  const fingerprint = computeFingerprint({
    corpusVersion: corpusVersion(options.corpus),
    scorerVersion: SCORER_VERSION,
    weights,
    executorId: options.executor.id,
  });
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const now = options.now ?? (() => new Date());

  async function run(request: EvaluateRequest, repeats: number, first: number): Promise<RepeatResult[]> {
    const db = options.db;
    const artifactHash = contentHash(request.artifactText);
    const examples = request.examples;
    const stored =
      db !== undefined && request.fresh !== true && examples.length > 0
        ? await loadResults(db, fingerprint, artifactHash, first, first + repeats - 1, options.readSince)
        : new Map<string, StoredResult>();
    const perRepeat: Array<{ records: ExampleScoreRecord[]; usage: Usage; latencyMs: number }> = Array.from({ length: repeats }, () => ({
      records: new Array<ExampleScoreRecord>(examples.length),
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      latencyMs: 0,
    }));
    const missing: Array<{ example: Example; index: number; repeat: number }> = [];
    for (let offset = 0; offset < repeats; offset += 1) {
      const repeat = first + offset;
      examples.forEach((example, index) => {
        const hit = stored.get(resultKey(example.id, repeat));
        if (hit === undefined) missing.push({ example, index, repeat });
        else addTo(perRepeat[offset]!, index, hit.record, hit.usage, hit.latencyMs);
      });
    }
    let done = 0;
    await mapWithConcurrency(missing, concurrency, async ({ example, index, repeat }) => {
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      const result: ExecutionResult = await options.executor.execute({
        goal: example.text,
        artifact: request.artifactText,
        repeat,
        exampleId: example.id,
        ...(request.signal !== undefined ? { signal: request.signal } : {}),
      });
      const usage = result.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 };
      const score: ExampleScore = scoreExample(example.expected as ExpectedIntent, result, weights as ComponentWeights);
      const transient = !result.ok && result.transient === true;
      const record: ExampleScoreRecord = { ...score, exampleId: example.id, repeat, ...(transient ? { transient: true } : {}) } as ExampleScoreRecord;
      addTo(perRepeat[repeat - first]!, index, record, usage, result.latencyMs ?? 0);
      if (db !== undefined && !transient) await storeResult(db, fingerprint, artifactHash, record, usage, result.latencyMs ?? 0, now);
      done += 1;
      options.onProgress?.(done, missing.length);
    });
    return perRepeat;
  }

  return {
    fingerprint,
    executor: options.executor,
    weights,
    async evaluate(request: EvaluateRequest): Promise<PartitionScore> {
      const repeats = request.repeats ?? 1;
      if (!Number.isInteger(repeats) || repeats < 1) throw new RangeError(`repeats must be an integer ≥ 1, got ${repeats}`);
      const first = request.firstRepeat ?? 0;
      const results = await run(request, repeats, first);
      return aggregate(request.partition, contentHash(request.artifactText), fingerprint, results);
    },
  };
}

type Usage = { inputTokens: number; outputTokens: number; costUsd: number };

function addTo(target: { records: ExampleScoreRecord[]; usage: Usage; latencyMs: number }, index: number, record: ExampleScoreRecord, usage: Usage, latencyMs: number): void {
  target.records[index] = record;
  target.usage.inputTokens += usage.inputTokens;
  target.usage.outputTokens += usage.outputTokens;
  target.usage.costUsd += usage.costUsd;
  target.latencyMs += latencyMs;
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
    transient: examples.filter((record) => !record.valid && record.transient === true).length,
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

interface StoredResult {
  record: ExampleScoreRecord;
  usage: Usage;
  latencyMs: number;
}

function resultKey(exampleId: string, repeat: number): string {
  return `${repeat}\u0000${exampleId}`;
}

/** Stored results of one artifact for repeats `firstRepeat..lastRepeat`, keyed by {@link resultKey}. */
async function loadResults(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  firstRepeat: number,
  lastRepeat: number,
  since: string | undefined,
): Promise<Map<string, StoredResult>> {
  let query = db
    .selectFrom('example_results')
    .select(['example_id', 'repeat', 'score', 'usage', 'latency_ms'])
    .where('fingerprint', '=', fingerprint)
    .where('artifact_hash', '=', artifactHash)
    .where('repeat', '>=', firstRepeat)
    .where('repeat', '<=', lastRepeat);
  if (since !== undefined) query = query.where('created_at', '>=', since);
  const rows = await query.execute();
  return new Map(
    rows.map((row) => [
      resultKey(row.example_id, row.repeat),
      { record: JSON.parse(row.score) as ExampleScoreRecord, usage: JSON.parse(row.usage) as Usage, latencyMs: row.latency_ms },
    ]),
  );
}

async function storeResult(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  record: ExampleScoreRecord,
  usage: Usage,
  latencyMs: number,
  now: () => Date,
): Promise<void> {
  await db
    .insertInto('example_results')
    .values({
      fingerprint,
      artifact_hash: artifactHash,
      example_id: record.exampleId,
      repeat: record.repeat,
      valid: record.valid ? 1 : 0,
      composite: record.valid ? record.composite : null,
      score: JSON.stringify(record),
      usage: JSON.stringify(usage),
      latency_ms: latencyMs,
      created_at: isoNow(now),
    })
    .onConflict((conflict) => conflict.doNothing()) // another writer stored the same result first
    .execute();
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
