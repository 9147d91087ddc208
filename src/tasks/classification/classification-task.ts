/**
 * The `classification` task: one label from a closed set (a support ticket's
 * queue, a document's category, an email's intent).
 *
 * Shapes (JSON, as corpus records and executors write them):
 *
 * - input: a text (`"My invoice is wrong"`), or an object of text fields
 *   (`{ "subject": "Invoice", "body": "charged twice", "customer": "ACME" }`),
 *   see {@link textInputSchema}; its text is written by {@link textOfInput}:
 *   one `name: value` line per field, the `fieldOrder` fields first, the
 *   others sorted by name;
 * - expected: `{ "label": "billing" }`, a label of the study's set;
 * - output: `{ "label": "technical" }`; a label outside the set does not fit
 *   the output schema, so it is an invalid output and is never scored. Other
 *   keys of an output object are ignored (stripped by the schema).
 *
 * Score: composite 1 when the predicted label is the expected one, else 0,
 * whatever the weights (one component has no ratio to weigh) (outcome `'binary'`: the gate's paired test is McNemar's exact test), one
 * component `accuracy`; diagnostics `{ expected, predicted }`; feedback
 * `expected billing, routed to technical` (a study reporting a misroute
 * rate) or `expected billing, predicted technical`, and empty when right.
 * Reports over many examples: `classification-report.ts`.
 *
 * @example
 * ```ts
 * const task = createClassificationTask({ labels: ['billing', 'technical', 'account'], reportAs: 'misroute rate' });
 * task.score({ label: 'technical' }, { label: 'billing' }, 'I was charged twice', defaultWeights(task)).feedback;
 * // 'expected billing, routed to technical'
 * ```
 *
 * @module
 */
import { z } from 'zod';
import { contentHash } from '../../artifact/content-hash.ts';
import { InputError } from '../../errors.ts';
import { jsonOutputContract, jsonSchemaOf } from '../../executors/llm/json-output-contract.ts';
import type { AdmissionProblem, Task, TaskComponent, TaskScore } from '../task.ts';
import { hasText, type TextInput, textInputSchema, textOfInput } from '../text-input.ts';

/** How a study reports a classification task's headline: accuracy, or its complement the misroute rate. */
export const CLASSIFICATION_REPORTS = ['accuracy', 'misroute rate'] as const;
export type ClassificationReportAs = (typeof CLASSIFICATION_REPORTS)[number];

/** Version of the scoring rules; the task id adds a hash of the label set. */
export const CLASSIFICATION_SCORER_VERSION = 'classification@1';

/** Most labels a study may declare. */
export const MAX_LABELS = 500;

/** The gold of one example: `{ label }`. */
export interface ClassificationExpected {
  label: string;
}

/** An executor's answer: `{ label }`. */
export interface ClassificationOutput {
  label: string;
}

/** Settings of {@link createClassificationTask}. */
export interface ClassificationTaskOptions {
  /** The closed set of labels, in report order: non-empty, unique, no surrounding spaces. */
  labels: readonly string[];
  /** How reports name the headline figure. Default `'accuracy'`; `'misroute rate'` reports 1 − accuracy. */
  reportAs?: ClassificationReportAs;
  /** Fields of an object input written first in its text, in this order (see {@link textOfInput}). Default none. */
  fieldOrder?: readonly string[];
}

/** A classification task, with its settings. */
export interface ClassificationTask extends Task<TextInput, ClassificationExpected, ClassificationOutput> {
  /** The closed set of labels, in report order. */
  readonly labels: readonly string[];
  readonly reportAs: ClassificationReportAs;
}

const COMPONENTS: readonly TaskComponent[] = Object.freeze([
  { name: 'accuracy', weight: 1, description: '1 when the predicted label is the expected one, else 0' },
]);

const optionsSchema = z.strictObject({
  labels: z
    .array(
      z
        .string()
        .min(1, 'a label is empty')
        .max(120, 'a label is longer than 120 characters')
        .refine((label) => label.trim() === label, 'a label has leading or trailing spaces'),
    )
    .min(1, 'the study declares no label')
    .max(MAX_LABELS, `a study declares at most ${MAX_LABELS} labels`)
    .refine((labels) => new Set(labels).size === labels.length, 'labels must be unique'),
  reportAs: z.enum(CLASSIFICATION_REPORTS).default('accuracy'),
  fieldOrder: z.array(z.string().min(1)).default([]),
});

/**
 * Creates a classification task over a closed set of labels.
 *
 * The task id is `classification@1:<8 hex digits>`, the digits being the
 * start of the SHA-256 of the labels joined by newlines: results under
 * another label set (another validity rule) are never compared.
 *
 * @throws InputError (field `labels`, `reportAs` or `fieldOrder`) when the
 *   settings are not valid: no label, a duplicate or blank label, an unknown
 *   `reportAs`, an unknown key.
 */
export function createClassificationTask(options: ClassificationTaskOptions): ClassificationTask {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError(`classification task: ${issue.message}`, {
      field: issue.path.map(String).join('.') || 'task',
    });
  }
  const { labels, reportAs, fieldOrder } = parsed.data;
  const labelSchema = z.enum(labels as [string, ...string[]]);
  const expected = z.strictObject({ label: labelSchema });
  const output = z.object({ label: labelSchema });
  const verb = reportAs === 'misroute rate' ? 'routed to' : 'predicted';
  const contract = jsonOutputContract(jsonSchemaOf(output), [
    `It must be an object {"label": ...} whose label is exactly one of: ${labels.join(', ')}.`,
  ]);
  return {
    id: `${CLASSIFICATION_SCORER_VERSION}:${contentHash(labels.join('\n')).slice(0, 8)}`,
    labels: Object.freeze([...labels]),
    reportAs,
    schemas: { input: textInputSchema, expected, output },
    components: COMPONENTS,
    outcome: 'binary',
    // One component: its weight has no ratio to change, so the composite is the accuracy itself.
    score(predicted: ClassificationOutput, gold: ClassificationExpected): TaskScore {
      const right = predicted.label === gold.label;
      return {
        composite: right ? 1 : 0,
        components: { accuracy: right ? 1 : 0 },
        diagnostics: { expected: gold.label, predicted: predicted.label },
        feedback: right ? '' : `expected ${gold.label}, ${verb} ${predicted.label}`,
      };
    },
    text: (input: TextInput) => textOfInput(input, fieldOrder),
    admit(input: TextInput): AdmissionProblem[] {
      return hasText(input)
        ? []
        : [
            {
              reason: 'non_trivial_input',
              field: 'input',
              message: 'the input has no text to classify (every field is blank)',
            },
          ];
    },
    outputContract: () => contract,
  };
}
