/** `task:` and `weights:` of `kloop.yaml` (src/config/config.ts): the task's kind and settings, and the composite weights. */
import { z } from 'zod';
import { nonNegative } from './schema-numbers.ts';

/**
 * Composite weights by the task's component names (intent: `appType`,
 * `entityRecall`, `roleAccuracy`, `behaviorCoverage`, and the optional
 * `entityPrecision`, `relationRecall`); absent names keep the task's
 * defaults. The names and "at least one above 0" are checked once the task is
 * built (`src/study/compose.ts`).
 */
export const weightsSchema = z.record(z.string().min(1), nonNegative);

/** The task kinds of `task:`. */
export const TASK_KINDS = ['intent', 'classification', 'extraction', 'custom'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

const classificationTaskSchema = z.strictObject({
  kind: z.literal('classification'),
  /** The closed set of labels, in report order. */
  labels: z.array(z.string()).min(1, 'list at least one label'),
  /** `accuracy` (default) or `misroute rate` (1 − accuracy): how reports name the headline. */
  reportAs: z.enum(['accuracy', 'misroute rate']).optional(),
  /** Fields of an object input written first in its text. */
  fieldOrder: z.array(z.string().min(1)).optional(),
});
const extractionTaskSchema = z.strictObject({
  kind: z.literal('extraction'),
  /** The fields, by name: `{ match: exact | set-f1 | number, weight?, tolerance?, description? }`. */
  fields: z.record(z.string(), z.unknown()),
  fieldOrder: z.array(z.string().min(1)).optional(),
});
const customTaskSchema = z.strictObject({
  kind: z.literal('custom'),
  /**
   * The scorer module, relative to the study folder: `score.ts`, or
   * `score.ts:functionName` for an export other than `score` (promptfoo's
   * `file://` form is accepted; `score.ts#functionName` is read as the same);
   * JS or TS, ESM or CJS.
   */
  module: z.string().trim().min(1),
});

/** `task:` — a kind, or an object with `kind` and the task's settings. */
export const taskSchema = z.union([
  z.enum(TASK_KINDS),
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('intent') }),
    classificationTaskSchema,
    extractionTaskSchema,
    customTaskSchema,
  ]),
]);
