/**
 * The task contract: what kloop needs to know about a measurable workflow.
 *
 * A task says what an example's input and expected output look like, what an
 * executor must answer, and how an answer is scored against the expected
 * output: a composite in [0, 1], named components, per-example diagnostics,
 * and a short feedback text that proposers read ("what went wrong, in
 * words"). The loop, the evaluator, the gate, the storage and the reports
 * know a task only through this contract; executors and proposers too.
 *
 * Required: `id` (name and scorer version), `schemas`, `score`. Everything
 * else has a default.
 *
 * Built-in tasks: `intent` (src/tasks/intent), `classification`,
 * `extraction` and `custom` (a module of the user's). Peers with the same
 * shape: DSPy's and GEPA's metric (a score and textual feedback),
 * promptfoo's JavaScript assertion (pass, score, reason).
 *
 * @example
 * ```ts
 * const exactMatch: Task<string, string, string> = {
 *   id: 'exact-match@1',
 *   schemas: { input: z.string(), expected: z.string(), output: z.string() },
 *   score: (output, expected) => {
 *     const right = output.trim() === expected.trim();
 *     return { composite: right ? 1 : 0, components: { match: right ? 1 : 0 }, feedback: right ? '' : `expected "${expected}", got "${output}"` };
 *   },
 * };
 * ```
 */
import type { ZodType } from 'zod';
import { stableJson } from '../text/stable-json.ts';

export { stableJson };

/** How one example's outcome is measured: continuous scores, or right/wrong. */
export type OutcomeKind = 'continuous' | 'binary';

/** One named component of a task's composite. */
export interface TaskComponent {
  /** Name used in reports, weights (`kloop.yaml` `weights:`) and JSON, e.g. `entityRecall`. */
  name: string;
  /** Default weight, ≥ 0; only ratios matter. */
  weight: number;
  /** One line: what the component measures. */
  description: string;
}

/** The score of one valid output against its expected output. */
export interface TaskScore {
  /** Weighted mean of the scored components, renormalised over them; in [0, 1]. */
  composite: number;
  /** Scored components, each in [0, 1]; a component absent here was not scored (see `skipped`). */
  components: Record<string, number>;
  /** Components the expected output does not let us score (partial gold). Default none. */
  skipped?: string[];
  /** Diagnostic metrics reported beside the composite, not in it (null when undefined, 0/0). */
  metrics?: Record<string, number | null>;
  /** Per-example diagnostics, task-specific and JSON-serialisable (which entity went missing, which label was confused). */
  diagnostics?: Record<string, unknown>;
  /** What went wrong, in words, for proposers and users; empty when the output is right. */
  feedback: string;
}

/** One problem that keeps a new record out of the corpus (task-specific admission rules). */
export interface AdmissionProblem {
  /** Machine-readable reason, e.g. `grounding`, `non_trivial_gold`. */
  reason: string;
  message: string;
  /** The field of the record at fault, e.g. `expected.entities[2].name`. */
  field?: string;
}

/** The schemas of a task (zod). */
export interface TaskSchemas<Input, Expected, Output> {
  /** An example's input (a text, or an object whose fields a prompt template names). */
  input: ZodType<Input>;
  /** An example's expected output (the gold). */
  expected: ZodType<Expected>;
  /** What an executor must answer; an answer that does not fit is invalid, never scored. */
  output: ZodType<Output>;
}

/** A task. See the module comment. */
export interface Task<Input = unknown, Expected = unknown, Output = unknown> {
  /** Name and scorer version, e.g. `intent@1`, `classification@1`: part of the evaluator fingerprint. */
  readonly id: string;
  readonly schemas: TaskSchemas<Input, Expected, Output>;
  /**
   * Scores a valid output. Must not throw for any output that fits
   * `schemas.output`; must return a composite in [0, 1].
   *
   * @param weights component name → weight (the task's defaults, or the study's `weights:`)
   */
  score(output: Output, expected: Expected, input: Input, weights: Readonly<Record<string, number>>): TaskScore;
  /** Named components with default weights, in report order. Default: one component `score` of weight 1. */
  readonly components?: readonly TaskComponent[];
  /** Names of the diagnostic metrics `score` reports beside the composite, in report order. Default none. */
  readonly metrics?: readonly string[];
  /**
   * `'binary'` when every example is right or wrong (composite 0 or 1): the
   * gate's paired test is then McNemar's exact test; `'continuous'` (default):
   * the paired t-test.
   */
  readonly outcome?: OutcomeKind;
  /**
   * The text of an input, for near-duplicate checks, grounding, leak checks
   * and an LLM's user message. Default: a string input as it is, an object
   * as stable JSON.
   */
  text?(input: Input): string;
  /** Task-specific admission rules (beyond the schemas), e.g. gold entities grounded in the text. Default none. */
  admit?(input: Input, expected: Expected): AdmissionProblem[];
  /** The contract appended to a prompt artifact for an LLM executor (the answer's JSON shape, in words). Default: the output schema as JSON Schema. */
  outputContract?(): string;
}

/** The components of a task, with the default when it declares none. */
export function taskComponents(task: Pick<Task, 'components'>): readonly TaskComponent[] {
  return task.components ?? [{ name: 'score', weight: 1, description: 'the task score' }];
}

/** The task's default weights, by component name. */
export function defaultWeights(task: Pick<Task, 'components'>): Record<string, number> {
  return Object.fromEntries(taskComponents(task).map((component) => [component.name, component.weight]));
}

/** The text of an input (see {@link Task.text}). */
export function inputText<Input>(task: Pick<Task<Input>, 'text'>, input: Input): string {
  if (task.text !== undefined) return task.text(input);
  return typeof input === 'string' ? input : stableJson(input);
}

/**
 * True when at least one component of weight > 0 was scored: the example has
 * a composite. An example without one (a partial gold that names only
 * components of weight 0, a scorer that omits the only weighted one) has no
 * score, not a 0: the evaluator leaves it out of the composite
 * (src/evaluator/evaluator.ts, invalid reason `unscored`).
 */
export function hasWeightedComponent(
  components: Readonly<Record<string, number>>,
  weights: Readonly<Record<string, number>>,
): boolean {
  return Object.keys(components).some((name) => (weights[name] ?? 0) > 0);
}

/**
 * The weighted mean of the scored components, renormalised over those
 * present (a component missing from `components` or of weight 0 counts for
 * nothing). 0 when no weighted component was scored ({@link hasWeightedComponent}
 * false): a placeholder the evaluator never averages in.
 */
export function weightedComposite(
  components: Readonly<Record<string, number>>,
  weights: Readonly<Record<string, number>>,
): number {
  let sum = 0;
  let total = 0;
  for (const [name, value] of Object.entries(components)) {
    const weight = weights[name] ?? 0;
    if (weight <= 0) continue;
    sum += weight * value;
    total += weight;
  }
  return total === 0 ? 0 : sum / total;
}
