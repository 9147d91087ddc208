/**
 * One evaluation of an artifact on examples, for repeats `first..first+R-1`:
 * the stored results read back, the missing example-repeats executed (here,
 * or on the evaluation workers), scored and stored. The evaluator
 * (src/evaluator/evaluator.ts) aggregates what this returns.
 *
 * @module
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { ExecutionResult } from '../executors/executor.ts';
import { isoNow } from '../storage/study-database.ts';
import { resultKey, type RemoteExecution } from '../storage/remote-execution.ts';
import type { RepeatResult } from './aggregate.ts';
import type { EvaluatedExample, EvaluateRequest, EvaluatorOptions, ResultsStore } from './evaluator.ts';
import { SCORER_ERROR, scoreExecution } from './evaluator.ts';
import { mapWithConcurrency } from './map-with-concurrency.ts';
import type { ExampleScoreRecord } from './partition-score.ts';

/** What one evaluator evaluates with: its options, fingerprint, storage key, weights, concurrency and clock. */
export interface EvaluationContext {
  options: EvaluatorOptions;
  fingerprint: string;
  /** The key results are stored under (the fingerprint, or a scratch key). */
  storedAs: string;
  weights: Readonly<Record<string, number>>;
  concurrency: number;
  now: () => Date;
}

/** An example-repeat with no stored result, at its index in the request. */
interface MissingItem {
  example: EvaluatedExample;
  index: number;
  repeat: number;
}

export async function runEvaluation(
  context: EvaluationContext,
  request: EvaluateRequest,
  repeats: number,
  first: number,
): Promise<{ results: RepeatResult[]; missing: number }> {
  const { options, storedAs } = context;
  const results = options.results;
  const artifactHash = contentHash(request.artifactText);
  const examples = request.examples;
  const stored =
    results !== undefined && request.fresh !== true && examples.length > 0
      ? await loadResults(results, storedAs, artifactHash, first, first + repeats - 1, options.readSince)
      : new Map<string, StoredResult>();
  const perRepeat: Array<{ records: ExampleScoreRecord[]; usage: Usage; latencyMs: number }> = Array.from(
    { length: repeats },
    () => ({
      records: new Array<ExampleScoreRecord>(examples.length),
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      latencyMs: 0,
    }),
  );
  const missing: Array<{ example: EvaluatedExample; index: number; repeat: number }> = [];
  for (let offset = 0; offset < repeats; offset += 1) {
    const repeat = first + offset;
    examples.forEach((example, index) => {
      const hit = stored.get(resultKey(example.id, repeat));
      if (hit === undefined) missing.push({ example, index, repeat });
      else addTo(perRepeat[offset]!, index, hit.record, hit.usage, hit.latencyMs);
    });
  }
  if (request.storedOnly === true) {
    // Nothing is executed: the records without a stored result are left out.
    const present = perRepeat.map((result) => ({
      ...result,
      records: result.records.filter((record) => record !== undefined),
    }));
    return { results: present, missing: missing.length };
  }
  if (options.remote !== undefined && results !== undefined && request.fresh !== true && missing.length > 0)
    return executeRemotely(context, request, {
      results,
      remote: options.remote,
      artifactHash,
      perRepeat,
      missing,
      first,
      repeats,
    });
  return executeLocally(context, request, { artifactHash, perRepeat, missing, first });
}

/** Hands the missing example-repeats to the evaluation workers, then reads back what they stored; what none stored is a transient failure. */
async function executeRemotely(
  context: EvaluationContext,
  request: EvaluateRequest,
  work: {
    results: ResultsStore;
    remote: RemoteExecution;
    artifactHash: string;
    perRepeat: RepeatResult[];
    missing: MissingItem[];
    first: number;
    repeats: number;
  },
): Promise<{ results: RepeatResult[]; missing: number }> {
  const { options, fingerprint, storedAs } = context;
  const { results, artifactHash, perRepeat, missing, first, repeats } = work;
  if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
  const givenUp = await work.remote.execute(
    {
      fingerprint,
      artifactHash,
      artifactText: request.artifactText,
      partition: request.partition,
      items: missing.map(({ example, repeat }) => ({ exampleId: example.id, repeat })),
      ...(options.readSince !== undefined ? { readSince: options.readSince } : {}),
      ...(options.storedAs !== undefined ? { storedAs: options.storedAs } : {}),
    },
    request.signal,
  );
  const executed = await loadResults(results, storedAs, artifactHash, first, first + repeats - 1, options.readSince);
  for (const { example, index, repeat } of missing) {
    const hit = executed.get(resultKey(example.id, repeat));
    if (hit !== undefined) addTo(perRepeat[repeat - first]!, index, hit.record, hit.usage, hit.latencyMs);
    else {
      const message = givenUp.get(resultKey(example.id, repeat)) ?? 'no evaluation worker stored a result';
      const record = {
        valid: false,
        invalidReason: 'error',
        message,
        exampleId: example.id,
        repeat,
        transient: true,
      } as ExampleScoreRecord;
      addTo(perRepeat[repeat - first]!, index, record, { inputTokens: 0, outputTokens: 0, costUsd: 0 }, 0);
    }
  }
  options.onProgress?.(missing.length, missing.length);
  return { results: perRepeat, missing: 0 };
}

/** Executes the missing example-repeats here, `concurrency` at a time, scores them and stores each result (not a transient failure, nor a scorer's). */
async function executeLocally(
  context: EvaluationContext,
  request: EvaluateRequest,
  work: { artifactHash: string; perRepeat: RepeatResult[]; missing: MissingItem[]; first: number },
): Promise<{ results: RepeatResult[]; missing: number }> {
  const { options, storedAs, weights, concurrency, now } = context;
  const { artifactHash, perRepeat, missing, first } = work;
  const results = options.results;
  const task = options.task;
  // A re-measurement (`fresh`, or `readSince`: --no-cache) replaces the results stored before it, so that later reads see it.
  const replaceBefore = request.fresh === true ? isoNow(now) : options.readSince;
  let done = 0;
  await mapWithConcurrency(missing, concurrency, async ({ example, index, repeat }) => {
    if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
    const result: ExecutionResult = await options.executor.execute({
      input: example.input,
      text: example.text,
      artifact: request.artifactText,
      repeat,
      exampleId: example.id,
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
    });
    const usage = result.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    const score = scoreExecution(task, example, result, weights);
    const transient = !result.ok && result.transient === true;
    const record: ExampleScoreRecord = {
      ...score,
      exampleId: example.id,
      repeat,
      ...(transient ? { transient: true } : {}),
    } as ExampleScoreRecord;
    addTo(perRepeat[repeat - first]!, index, record, usage, result.latencyMs ?? 0);
    const scorerFailed = !score.valid && score.invalidReason === SCORER_ERROR;
    if (results !== undefined && !transient && !scorerFailed)
      await storeResult(results, storedAs, artifactHash, record, usage, result.latencyMs ?? 0, now, replaceBefore);
    done += 1;
    options.onProgress?.(done, missing.length);
  });
  return { results: perRepeat, missing: 0 };
}

type Usage = { inputTokens: number; outputTokens: number; costUsd: number };

function addTo(
  target: { records: ExampleScoreRecord[]; usage: Usage; latencyMs: number },
  index: number,
  record: ExampleScoreRecord,
  usage: Usage,
  latencyMs: number,
): void {
  target.records[index] = record;
  target.usage.inputTokens += usage.inputTokens;
  target.usage.outputTokens += usage.outputTokens;
  target.usage.costUsd += usage.costUsd;
  target.latencyMs += latencyMs;
}

interface StoredResult {
  record: ExampleScoreRecord;
  usage: Usage;
  latencyMs: number;
}

/** Stored results of one artifact for repeats `firstRepeat..lastRepeat`, keyed by {@link resultKey}. */
async function loadResults(
  results: ResultsStore,
  fingerprint: string,
  artifactHash: string,
  firstRepeat: number,
  lastRepeat: number,
  since: string | undefined,
): Promise<Map<string, StoredResult>> {
  const rows = await results.readExampleResults({
    fingerprint,
    artifactHash,
    firstRepeat,
    lastRepeat,
    ...(since !== undefined ? { since } : {}),
  });
  return new Map(
    rows.map((row) => [
      resultKey(row.exampleId, row.repeat),
      {
        record: JSON.parse(row.score) as ExampleScoreRecord,
        usage: JSON.parse(row.usage) as Usage,
        latencyMs: row.latencyMs,
      },
    ]),
  );
}

async function storeResult(
  results: ResultsStore,
  fingerprint: string,
  artifactHash: string,
  record: ExampleScoreRecord,
  usage: Usage,
  latencyMs: number,
  now: () => Date,
  replaceBefore: string | undefined,
): Promise<void> {
  await results.writeExampleResult(
    {
      fingerprint,
      artifactHash,
      exampleId: record.exampleId,
      repeat: record.repeat,
      valid: record.valid,
      composite: record.valid ? record.composite : null,
      score: JSON.stringify(record),
      usage: JSON.stringify(usage),
      latencyMs,
      createdAt: isoNow(now),
    },
    replaceBefore,
  );
}
