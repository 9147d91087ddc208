/**
 * The frozen evaluator: runs an artifact over one named partition, `repeats`
 * times, and returns per-example, per-repeat, per-component scores plus
 * invalid counts, usage and latency. Task-agnostic: the study's task
 * (`src/tasks/task.ts`) says what an output must look like and scores it.
 *
 * Per example and repeat: the executor (`src/executors/executor.ts`) gets
 * `{ input, text, artifact, repeat, exampleId, signal }` and answers
 * `{ ok: true, output }` or why it could not; the output is checked against
 * `task.schemas.output` (an output that does not fit is invalid, reason
 * `schema`, and is never scored); a fitting output is scored by
 * `task.score(output, expected, input, weights)`.
 *
 * Results are stored per example and repeat, keyed by (fingerprint, artifact
 * hash, example id, repeat) — the fingerprint covers every example's input and
 * gold — and written as each execution finishes, so a resumed study never
 * pays for the same evaluation twice and a partial evaluation is kept.
 * Transient failures (timeouts, network and server errors after the
 * executor's retries) are never stored: the next read executes them again.
 * Terminal invalid outputs (unparsable, off-schema, refused) are stored: they
 * are the artifact's outcome. A re-measurement (`fresh`, or `readSince`, as
 * `--no-cache` asks) replaces the result stored before it began, so a later
 * read sees what was measured last.
 */
import type { RemoteExecution } from '../storage/remote-execution.ts';
import { contentHash } from '../artifact/content-hash.ts';
import { isKloopError } from '../errors.ts';
import type { ExecutionResult, Executor } from '../executors/executor.ts';
import type { EvaluationsStore } from '../storage/notebook/evaluations-store.ts';
import type { Task, TaskComponent } from '../tasks/task.ts';
import { defaultWeights, hasWeightedComponent, taskComponents } from '../tasks/task.ts';
import { capWithCount } from '../text/characters.ts';
import type { ScoreNames } from './aggregate.ts';
import { aggregate } from './aggregate.ts';
import type { EvaluationContext } from './evaluation-run.ts';
import { runEvaluation } from './evaluation-run.ts';
import type { ExampleScore, PartitionScore } from './partition-score.ts';
import { UNSCORED_REASON } from './partition-score.ts';

/** Identity of an evaluator: everything that changes a score. */
export interface FingerprintInput {
  corpusVersion: string;
  /** The task's id (name and scorer version), e.g. `intent-scorer@1`. */
  scorerVersion: string;
  /** Weights by component name. */
  weights: Readonly<Record<string, number>>;
  executorId: string;
  /**
   * The task's components, in order (names and default weights). Default: the
   * names of `weights`, in their order, as components of default weight above 0.
   */
  components?: readonly Pick<TaskComponent, 'name' | 'weight'>[];
}

/**
 * The weights of a fingerprint: the weight of every component in the task's
 * order, leaving out the trailing optional components (default weight 0)
 * the study leaves at 0 — so adding an optional component to a task keeps
 * the fingerprints of the studies that do not weigh it. For the intent task
 * with its defaults: `[0.25, 0.35, 0.2, 0.2]`, as before the optional
 * components existed.
 */
export function fingerprintWeights(
  components: readonly Pick<TaskComponent, 'name' | 'weight'>[],
  weights: Readonly<Record<string, number>>,
): number[] {
  const values = components.map((component) => weights[component.name] ?? 0);
  let end = values.length;
  while (end > 0 && components[end - 1]!.weight === 0 && values[end - 1] === 0) end -= 1;
  return values.slice(0, end);
}

/** SHA-256 (hex, first 16 characters) of the evaluator identity: corpus version, scorer id, weights in component order, executor id. */
export function computeFingerprint(input: FingerprintInput): string {
  const components = input.components ?? Object.keys(input.weights).map((name) => ({ name, weight: 1 }));
  return contentHash(
    JSON.stringify([
      input.corpusVersion,
      input.scorerVersion,
      fingerprintWeights(components, input.weights),
      input.executorId,
    ]),
  ).slice(0, 16);
}

/**
 * An example as the evaluator reads it: its id, its input, its gold and the
 * task's text of the input. Structurally a subset of src/corpus/example.ts's
 * `Example`, so the evaluator depends on no corpus format (and, through it, on
 * no concrete task).
 */
export interface EvaluatedExample {
  id: string;
  input: unknown;
  expected: unknown;
  /** The task's text of the input (`inputText(task, input)`). */
  text: string;
}

/** Content hash of examples' input and gold, independent of order and partition. */
export function corpusVersion(examples: readonly EvaluatedExample[]): string {
  const parts = examples
    .map((example) => `${example.id}\u0000${contentHash(JSON.stringify([example.input, example.expected]))}`)
    .sort();
  return contentHash(parts.join('\n')).slice(0, 16);
}

/** Hash of a partition's membership (ids and contents). */
export function partitionHash(examples: readonly EvaluatedExample[]): string {
  return corpusVersion(examples);
}

export type { RemoteExecution, RemoteItem, RemoteRequest } from '../storage/remote-execution.ts';
export type { RepeatResult, ScoreNames } from './aggregate.ts';
export { aggregate } from './aggregate.ts';
export { mapWithConcurrency } from './map-with-concurrency.ts';
export { resultKey } from '../storage/remote-execution.ts';

/** The stored results an evaluator reads and writes: the notebook's (src/storage/notebook/index.ts) satisfies it. */
export type ResultsStore = Pick<EvaluationsStore, 'readExampleResults' | 'writeExampleResult'>;

export interface EvaluatorOptions {
  /** The study's task: output schema, scorer, component and metric names. */
  task: Task;
  executor: Executor;
  /** Every example of the study (used for the corpus version). */
  corpus: readonly EvaluatedExample[];
  /** Weights by component name. Default the task's (`defaultWeights(task)`). */
  weights?: Readonly<Record<string, number>>;
  /** Where results are stored and read (the study's notebook: `openNotebook(db)`); without it nothing is stored. */
  results?: ResultsStore;
  /**
   * Read only results stored at or after this ISO 8601 time (`--no-cache`:
   * results of earlier runs are ignored, results of this run reused); a
   * result executed anew replaces the one stored before this time.
   * Default: every stored result.
   */
  readSince?: string;
  /**
   * The fingerprint results are stored and read under, when not the
   * evaluator's own: a scratch key (`scratch:<fingerprint>`) keeps the
   * proposer's screening, run on evaluation workers, apart from the
   * notebook's results (src/loop/scratch-evaluator.ts). Default the fingerprint.
   */
  storedAs?: string;
  /** Concurrent executor calls. Default 8. */
  concurrency?: number;
  /**
   * Execute what is not stored yet in other processes (needs `results`; a
   * `fresh` request still executes here). Default: in this process.
   */
  remote?: RemoteExecution;
  now?: () => Date;
  /** Called after each example-repeat finishes. */
  onProgress?: (done: number, total: number) => void;
}

export interface EvaluateRequest {
  artifactText: string;
  partition: string;
  examples: readonly EvaluatedExample[];
  /** Number of repeats (≥ 1). Default 1. */
  repeats?: number;
  /** First repeat index. Default 0. */
  firstRepeat?: number;
  /** Bypass stored results; the new results are written and replace the ones stored before this call. Default false. */
  fresh?: boolean;
  /**
   * Read stored results only and execute nothing: the example-repeats with no
   * stored result are left out of the score and counted in
   * {@link PartitionScore.missing} (what a report may do after an interrupt or
   * a spent budget). Default false.
   */
  storedOnly?: boolean;
  signal?: AbortSignal;
}

/** A frozen evaluator bound to one task, executor, corpus and weight set. */
export interface Evaluator {
  readonly fingerprint: string;
  readonly task: Task;
  readonly executor: Executor;
  readonly weights: Readonly<Record<string, number>>;
  evaluate(request: EvaluateRequest): Promise<PartitionScore>;
}

/** Longest raw text kept with an off-schema output, in characters. */
const MAX_RAW_CHARACTERS = 4000;

/** The JSON of an output that does not fit the schema, capped, for the record's `raw`. */
function rawOf(result: ExecutionResult & { ok: true }): string {
  const text = result.raw ?? JSON.stringify(result.output) ?? String(result.output);
  return capWithCount(text, MAX_RAW_CHARACTERS);
}

/** The invalid reason of an output the task's scorer threw on: never stored (see {@link scoreExecution}). */
export const SCORER_ERROR = 'scorer_error';

/** The messages of the example-repeats the scorer failed on ({@link SCORER_ERROR}), in order. */
export function scorerErrors(scores: readonly PartitionScore[]): string[] {
  return scores.flatMap((score) =>
    score.examples.flatMap((record) =>
      !record.valid && record.invalidReason === SCORER_ERROR ? [record.message] : [],
    ),
  );
}

/**
 * Scores one execution of one example (pure): invalid when the executor gave
 * no output or one that does not fit `task.schemas.output`; else the task's
 * score, with every optional part filled in (`skipped` none, `metrics` and
 * `diagnostics` empty).
 *
 * A scorer that throws on the output (a bug of the scorer, met on this
 * output: peer fault 4 of issue #36) gives an invalid score of reason
 * {@link SCORER_ERROR} whose message names the example, the scorer's file
 * and what it threw: the artifact whose output it was is refused for it
 * (src/loop/integrate.ts `scorerFailure`), an incumbent's stops the run
 * (exit 2). It is never stored: a fixed scorer is a new evaluator anyway.
 */
export function scoreExecution(
  task: Task,
  example: Pick<EvaluatedExample, 'id' | 'input' | 'expected'>,
  result: ExecutionResult,
  weights: Readonly<Record<string, number>>,
): ExampleScore {
  if (!result.ok) {
    return {
      valid: false,
      invalidReason: result.reason,
      message: result.message,
      ...(result.raw !== undefined ? { raw: result.raw } : {}),
    };
  }
  const parsed = task.schemas.output.safeParse(result.output);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
    return {
      valid: false,
      invalidReason: 'schema',
      message: `the output does not fit the ${task.id} output schema: ${issues.join('; ')}${more}`,
      raw: rawOf(result),
    };
  }
  let scored: ReturnType<Task['score']>;
  try {
    scored = task.score(parsed.data, example.expected, example.input, weights);
  } catch (error) {
    const where = isKloopError(error) && error.file !== undefined ? `${error.file}: ` : '';
    const what = isKloopError(error)
      ? error.detail
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
    return {
      valid: false,
      invalidReason: SCORER_ERROR,
      message: `the scorer failed on this output of example ${example.id}: ${where}${what}`,
      raw: rawOf(result),
    };
  }
  if (!hasWeightedComponent(scored.components, weights)) {
    // No component of weight > 0 was scored: no score at all (left out of the composite), never a 0 averaged in.
    const scoredNames = Object.keys(scored.components);
    return {
      valid: false,
      invalidReason: UNSCORED_REASON,
      message: `no component of weight > 0 was scored (${scoredNames.length === 0 ? 'none scored' : `scored: ${scoredNames.map((name) => `${name} (weight ${weights[name] ?? 0})`).join(', ')}`}): left out of the composite`,
    };
  }
  return {
    valid: true,
    composite: scored.composite,
    components: scored.components,
    skipped: scored.skipped ?? [],
    metrics: scored.metrics ?? {},
    diagnostics: scored.diagnostics ?? {},
    feedback: scored.feedback,
  };
}

/** The component and metric names of a task, in report order. */
export function scoreNamesOf(task: Pick<Task, 'components' | 'metrics'>): ScoreNames {
  return { components: taskComponents(task).map((component) => component.name), metrics: task.metrics ?? [] };
}

/** Creates an evaluator. See {@link Evaluator}. */
export function createEvaluator(options: EvaluatorOptions): Evaluator {
  const { task } = options;
  const weights = options.weights ?? defaultWeights(task);
  const names = scoreNamesOf(task);
  const fingerprint = computeFingerprint({
    corpusVersion: corpusVersion(options.corpus),
    scorerVersion: task.id,
    weights,
    executorId: options.executor.id,
    components: taskComponents(task),
  });
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const storedAs = options.storedAs ?? fingerprint;
  const now = options.now ?? (() => new Date());
  const context: EvaluationContext = { options, fingerprint, storedAs, weights, concurrency, now };

  return {
    fingerprint,
    task,
    executor: options.executor,
    weights,
    async evaluate(request: EvaluateRequest): Promise<PartitionScore> {
      const repeats = request.repeats ?? 1;
      if (!Number.isInteger(repeats) || repeats < 1)
        throw new RangeError(`repeats must be an integer ≥ 1, got ${repeats}`);
      const first = request.firstRepeat ?? 0;
      const { results, missing } = await runEvaluation(context, request, repeats, first);
      const score = aggregate(request.partition, contentHash(request.artifactText), fingerprint, results, names);
      return request.storedOnly === true ? { ...score, missing } : score;
    },
  };
}
