/**
 * The `custom` task: the user's own scorer, a JavaScript or TypeScript
 * module in the study folder (loaded by `module-loader.ts`, ESM or
 * CommonJS, TypeScript transpiled on load).
 *
 * The module exports (named exports, or the same keys on a default export;
 * a default export that is a function is `score`):
 *
 * - `score(output, expected, input)` (required), synchronous, returning one
 *   of (promptfoo's `file://` assertion convention):
 *   - a boolean: pass (1) or fail (0);
 *   - a number: the score, in [0, 1];
 *   - an object `{ score?, pass?, components?, feedback?, reason?, diagnostics? }`:
 *     `pass` decides (promptfoo's convention): `pass: false` scores 0
 *     whatever `score` says, `pass: true` scores `score` (default 1), and
 *     without `pass` the score is `score`, in [0, 1]; `feedback`, or
 *     promptfoo's `reason`, is the feedback text (when there is none and the
 *     score is below 1, kloop writes `scored 0.25; the scorer gave no
 *     reason`, so proposers see something); `diagnostics` a JSON object.
 * - `outputSchema` (optional): a zod 4 schema, or a JSON Schema object
 *   (read with zod's `fromJSONSchema`). Default: any JSON value. An output
 *   that does not fit is invalid and never reaches `score`. A module that
 *   imports zod needs it resolvable from the study folder (installed in or
 *   above it, as kloop's own copy is when kloop is a dependency of the
 *   project); a JSON Schema object needs nothing.
 * - `inputSchema`, `expectedSchema` (optional, same forms): the example's
 *   input and gold. Default: any JSON value.
 * - `components` (optional): the component names, or
 *   `{ name, weight?, description? }` objects (weight default 1).
 * - `outcome` (optional): `'binary'` when every score is 0 or 1 (the gate
 *   then uses McNemar's exact test), default `'continuous'`.
 *
 * Composite: without `components`, the returned score, with one component
 * `score`; components returned anyway are reported as metrics, beside the
 * composite. With `components`, the weighted mean of the returned
 * components under the study's weights (a declared component not returned
 * is skipped; `score`, if returned, is not used, so the weights are
 * honoured).
 *
 * A scorer bug is not an outcome of the artifact: a throw, a Promise, a
 * score outside [0, 1] or NaN, an undeclared component, or a result of
 * another shape throws an {@link InputError} with code `custom_scorer`
 * naming the module file. The evaluator turns it into that output's invalid
 * score `scorer_error` (src/evaluator/evaluator.ts `scoreExecution`): a
 * candidate is refused for it, an incumbent's stops the run (exit 2). `score` does not know the
 * example id (the task contract does not pass it): the message quotes the
 * start of the input, and the evaluator adds the id with
 * {@link locateScorerError}.
 *
 * Task id: `custom@<16 hex digits of the SHA-256 of the module file>`, so an
 * edit of the scorer is a new evaluator fingerprint (modules it imports are
 * not hashed); a scoring function named in the reference other than `score`
 * follows as `:<name>` (`custom@0123456789abcdef:strict`), so switching
 * functions of one file is a new fingerprint too.
 *
 * @example
 * ```ts
 * // study/score.ts
 * export const components = ['label', 'tone'];
 * export function score(output: { label: string; tone: string }, expected: { label: string; tone: string }) {
 *   return { components: { label: output.label === expected.label ? 1 : 0, tone: output.tone === expected.tone ? 1 : 0 }, reason: '...' };
 * }
 * // kloop
 * const task = await loadCustomTask({ studyFolder: 'study', module: 'score.ts' });
 * ```
 *
 * @module
 */
import type { z } from 'zod';
import { InputError, isKloopError, type KloopError } from '../../errors.ts';
import { jsonOutputContract } from '../../executors/llm/json-output-contract.ts';
import type { OutcomeKind, Task, TaskComponent, TaskScore } from '../task.ts';
import { hasWeightedComponent, inputText, weightedComposite } from '../task.ts';
import { loadStudyModule } from './module-loader.ts';
import { componentsExport, exportOf, isPlainObject, moduleError, schemaExport } from './module-exports.ts';

export { CUSTOM_MODULE_ERROR } from './module-exports.ts';
import { truncateText } from '../../text/characters.ts';

/** Scorer version prefix of a custom task's id. */
export const CUSTOM_SCORER_VERSION = 'custom';

/** Error code of a scorer that failed on one example. */
export const CUSTOM_SCORER_ERROR = 'custom_scorer';

/** Settings of {@link loadCustomTask}. */
export interface CustomTaskOptions {
  /** The study folder: the module path is relative to it. */
  studyFolder: string;
  /** The module, e.g. `score.ts`, `file://scorers/route.js`, `score.ts:routeScore` (`score.ts#routeScore` is accepted as the same). */
  module: string;
}

/** A custom task, with where its scorer comes from. */
export interface CustomTask extends Task<unknown, unknown, unknown> {
  /** The module file as messages name it. */
  readonly file: string;
  /** SHA-256 of the module file, lower-case hex. */
  readonly contentHash: string;
}

type ScoreFunction = (output: unknown, expected: unknown, input: unknown) => unknown;

function shortInput(input: unknown): string {
  const text = inputText({}, input).replace(/\s+/g, ' ').trim();
  return truncateText(text, 60);
}

/**
 * Re-throws a custom scorer's error with the example id (the evaluator knows
 * it; `score` does not). Other errors are returned unchanged.
 */
export function locateScorerError(error: unknown, exampleId: string): unknown {
  if (!isKloopError(error) || error.code !== CUSTOM_SCORER_ERROR || error.exampleId !== undefined) return error;
  return new InputError(`example ${exampleId}: ${error.detail}`, {
    code: CUSTOM_SCORER_ERROR,
    exampleId,
    cause: (error as KloopError).cause,
    ...(error.file !== undefined ? { file: error.file } : {}),
  });
}

/**
 * The score of an object result `{ pass?, score? }`, promptfoo's
 * `GradingResult` convention: `pass` decides. `pass: false` scores 0 whatever
 * `score` says (a failed output earns nothing: `{ pass: false, score: 1 }` is
 * 0); with `pass: true`, `score` grades the passing output (default 1);
 * without `pass`, `score`. Undefined when the object has neither.
 */
function passOrScore(result: Record<string, unknown>, fail: (message: string) => never): number | undefined {
  const score = result.score !== undefined ? unitScore(result.score, 'returned a score that', fail) : undefined;
  if (result.pass !== undefined && typeof result.pass !== 'boolean')
    fail(`returned a pass that is not true or false (${JSON.stringify(result.pass) ?? typeof result.pass})`);
  if (result.pass === false) return 0;
  if (result.pass === true) return score ?? 1;
  return score;
}

function unitScore(value: unknown, what: string, fail: (message: string) => never): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > 1)
    fail(
      `${what} must be a number in [0, 1]; got ${typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value))}`,
    );
  return value as number;
}

/**
 * Loads a custom task from the study folder.
 *
 * @throws InputError (code `custom_module`, naming the file and, when it is
 *   about one export, the field) when the module cannot be loaded, has no
 *   `score` function, or exports an `outputSchema`, `components` or
 *   `outcome` that is not valid.
 */
export async function loadCustomTask(options: CustomTaskOptions): Promise<CustomTask> {
  const loaded = await loadStudyModule(options.studyFolder, options.module);
  return customTaskOf(loaded.exports, {
    file: loaded.file,
    contentHash: loaded.contentHash,
    ...(loaded.functionName !== undefined ? { functionName: loaded.functionName } : {}),
  });
}

/** Where a custom task's exports come from: a module file, or code (`createStudy({ score })`). */
export interface CustomTaskSource {
  /** The file messages name (a module path, or a label such as `createStudy({ score })`). */
  file: string;
  /** SHA-256 (hex) of what defines the scorer: the module file, or the function's source text; the task id carries its first 16 digits. */
  contentHash: string;
  /** The scoring function's export name; default `score` (or a default-exported function). */
  functionName?: string;
}

/**
 * A custom task from a module's exports (`score`, and optionally
 * `outputSchema`, `inputSchema`, `expectedSchema`, `components`, `outcome`),
 * with the rules of {@link loadCustomTask}. The library API builds the task
 * of `createStudy({ score })` with it.
 *
 * @throws InputError (code `custom_module`) as {@link loadCustomTask}
 */
export function customTaskOf(exports: Record<string, unknown>, source: CustomTaskSource): CustomTask {
  const { file } = source;
  const scoreName = source.functionName ?? 'score';
  const found =
    exportOf(exports, scoreName) ??
    (source.functionName === undefined && typeof exports.default === 'function' ? exports.default : undefined);
  if (typeof found !== 'function') {
    throw moduleError(
      found === undefined ? `the module exports no ${scoreName} function` : `${scoreName} is not a function`,
      file,
      scoreName,
    );
  }
  const output = schemaExport(exportOf(exports, 'outputSchema'), 'outputSchema', file);
  const input = schemaExport(exportOf(exports, 'inputSchema'), 'inputSchema', file);
  const expected = schemaExport(exportOf(exports, 'expectedSchema'), 'expectedSchema', file);
  const declared = componentsExport(exportOf(exports, 'components'), file);
  const outcome = exportOf(exports, 'outcome') ?? 'continuous';
  if (outcome !== 'continuous' && outcome !== 'binary')
    throw moduleError(`outcome must be "continuous" or "binary"; got ${JSON.stringify(outcome)}`, file, 'outcome');
  const context: ScorerContext = {
    file,
    scoreName,
    scoreFunction: found as ScoreFunction,
    declared,
    declaredNames: new Set(declared?.map((component) => component.name)),
    outcome,
  };
  const contract = jsonOutputContract(output.jsonSchema, [
    "It must fit this JSON Schema (the custom scorer's output schema):",
  ]);
  return {
    id: `${CUSTOM_SCORER_VERSION}@${source.contentHash.slice(0, 16)}${scoreName !== 'score' ? `:${scoreName}` : ''}`,
    file,
    contentHash: source.contentHash,
    schemas: {
      input: input.schema as z.ZodType<unknown>,
      expected: expected.schema as z.ZodType<unknown>,
      output: output.schema as z.ZodType<unknown>,
    },
    ...(declared !== undefined ? { components: declared } : {}),
    outcome: outcome as OutcomeKind,
    score: (answer, gold, example, weights) => scoreExample(context, answer, gold, example, weights),
    outputContract: () => contract,
  };
}

/** What scoring one example needs from a loaded custom module. */
interface ScorerContext {
  file: string;
  scoreName: string;
  scoreFunction: ScoreFunction;
  declared: TaskComponent[] | undefined;
  declaredNames: Set<string>;
  outcome: OutcomeKind;
}

/** Throws the scorer error of one example (code `custom_scorer`). */
type Fail = (message: string, cause?: unknown) => never;

/** A scorer's return value, read: its score, components, feedback and diagnostics. */
interface ScorerResult {
  value: number | undefined;
  returned: Record<string, unknown> | undefined;
  feedback: string;
  diagnostics: Record<string, unknown> | undefined;
}

/** Scores one example with the module's function (the task's `score`). */
function scoreExample(
  context: ScorerContext,
  answer: unknown,
  gold: unknown,
  example: unknown,
  weights: Readonly<Record<string, number>>,
): TaskScore {
  const fail: Fail = (message, cause) => {
    throw new InputError(`${context.scoreName}() ${message}, for the example whose input is "${shortInput(example)}"`, {
      file: context.file,
      code: CUSTOM_SCORER_ERROR,
      ...(cause !== undefined ? { cause } : {}),
    });
  };
  const read = readResult(callScorer(context, answer, gold, example, fail), fail);
  const { composite, components, metrics, skipped } = composeScore(context, read, weights, fail);
  let feedback = read.feedback;
  // Only for a score that exists: an example with no weighted component has none (the evaluator leaves it out), so nothing is invented for it.
  if (feedback === '' && composite < 1 && hasWeightedComponent(components, weights))
    feedback = `scored ${Number(composite.toFixed(3))}; the scorer gave no reason`;
  return {
    composite,
    components,
    ...(skipped.length > 0 ? { skipped } : {}),
    ...(Object.keys(metrics).length > 0 ? { metrics } : {}),
    diagnostics: read.diagnostics ?? {},
    feedback,
  };
}

/** Calls the scoring function; a throw or a Promise fails. */
function callScorer(context: ScorerContext, answer: unknown, gold: unknown, example: unknown, fail: Fail): unknown {
  let result: unknown;
  try {
    result = context.scoreFunction(answer, gold, example);
  } catch (error) {
    fail(`threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`, error);
  }
  if (typeof result === 'object' && result !== null && typeof (result as { then?: unknown }).then === 'function') {
    (result as Promise<unknown>).then(undefined, () => undefined); // the rejection is reported here, not as an unhandled one
    fail('returned a Promise; kloop scores synchronously, so make score a plain (not async) function');
  }
  return result;
}

/** Reads a boolean, a number or an object result; anything else fails. */
function readResult(result: unknown, fail: Fail): ScorerResult {
  let value: number | undefined;
  let returned: Record<string, unknown> | undefined;
  let feedback = '';
  let diagnostics: Record<string, unknown> | undefined;
  if (typeof result === 'boolean') value = result ? 1 : 0;
  else if (typeof result === 'number') value = unitScore(result, 'returned a score that', fail);
  else if (isPlainObject(result)) {
    value = passOrScore(result, fail);
    if (result.components !== undefined) {
      if (!isPlainObject(result.components)) fail('returned components that are not an object of name → score');
      returned = result.components as Record<string, unknown>;
    }
    const text = result.feedback ?? result.reason;
    if (text !== undefined && typeof text !== 'string') fail('returned a feedback (or reason) that is not text');
    feedback = (text as string | undefined) ?? '';
    if (result.diagnostics !== undefined) {
      if (!isPlainObject(result.diagnostics)) fail('returned diagnostics that are not an object');
      diagnostics = { ...(result.diagnostics as Record<string, unknown>) };
    }
    if (typeof result.pass === 'boolean') diagnostics = { ...diagnostics, pass: result.pass };
    // The score a failed output gave is kept for the reader, though pass decided.
    if (result.pass === false && result.score !== undefined) diagnostics = { ...diagnostics, score: result.score };
  } else {
    fail(
      `returned ${result === undefined ? 'nothing' : (JSON.stringify(result) ?? typeof result)}; return a boolean, a number in [0, 1] or { score, reason }`,
    );
  }
  return { value, returned, feedback, diagnostics };
}

/** The composite and components of a read result (see the module comment), checked against the declarations. */
function composeScore(
  context: ScorerContext,
  read: ScorerResult,
  weights: Readonly<Record<string, number>>,
  fail: Fail,
): { composite: number; components: Record<string, number>; metrics: Record<string, number>; skipped: string[] } {
  const { declared, declaredNames } = context;
  const components: Record<string, number> = {};
  const metrics: Record<string, number> = {};
  for (const [name, component] of Object.entries(read.returned ?? {})) {
    const checked = unitScore(component, `returned a component "${name}" that`, fail);
    if (declared === undefined) metrics[name] = checked;
    else if (declaredNames.has(name)) components[name] = checked;
    else
      fail(
        `returned the component "${name}", which the module does not declare in its components (${[...declaredNames].join(', ')})`,
      );
  }
  let composite: number;
  const skipped: string[] = [];
  if (declared === undefined) {
    if (read.value === undefined) fail('returned an object with neither a score nor a pass');
    composite = read.value!;
    components.score = composite;
  } else {
    if (Object.keys(components).length === 0) fail('returned no component, but the module declares components');
    for (const name of declaredNames) if (components[name] === undefined) skipped.push(name);
    composite = weightedComposite(components, weights);
  }
  if (context.outcome === 'binary' && composite !== 0 && composite !== 1)
    fail(`returned ${composite}, but the module declares outcome "binary" (0 or 1 only)`);
  return { composite, components, metrics, skipped };
}
