/**
 * The `extraction` task: a JSON object of named fields read from a text (an
 * invoice's vendor, total and line items; a ticket's order number), scored
 * field by field against the gold.
 *
 * Shapes (JSON):
 *
 * - input: a text, or an object of text fields ({@link textInputSchema});
 * - expected: an object with some of the declared fields (partial gold:
 *   a field the gold leaves out is skipped, not scored 0); at least one;
 *   unknown keys are refused. `exact` fields hold a string, number, boolean
 *   or null; `set-f1` fields a list of strings or numbers; `number` fields
 *   a finite number or null. A null gold means "the text has no such value";
 * - output: an object with the declared fields, each optional (absent is
 *   read as null, or the empty set for `set-f1`), values of the same types
 *   (nullable); other keys are ignored (stripped by the schema).
 *
 * Score: each gold field gives a component named after it, in [0, 1], by
 * its match rule (`field-match.ts`: exact after normalising strings, set
 * F1, number within a tolerance); composite = the weighted mean of the
 * scored fields, the weights renormalised over them (fields absent from the
 * gold are listed in `skipped`), as the intent scorer does with partial gold.
 * Diagnostics: `{ fields: { <name>: FieldDiagnostic } }` for every scored
 * field, and `wrong`: the names of the fields scored below 1. Feedback: the
 * wrong fields in words, e.g. `total is 41.5, expected 42 (tolerance 0.01);
 * items misses "kiwi", has extra "pear".`
 *
 * @example
 * ```ts
 * const task = createExtractionTask({
 *   fields: { vendor: { match: 'exact' }, total: { match: 'number', tolerance: 0.01, weight: 2 }, items: { match: 'set-f1' } },
 * });
 * task.score({ vendor: 'ACME', total: 42, items: ['apple'] }, { vendor: 'acme ', total: 41.995, items: ['apple', 'kiwi'] }, 'text', defaultWeights(task));
 * // composite (1 + 2·1 + 2/3) / 4 = 0.9166…; components { vendor: 1, total: 1, items: 0.666… }
 * ```
 *
 * @module
 */
import { z } from 'zod';
import { contentHash } from '../../artifact/content-hash.ts';
import { InputError } from '../../errors.ts';
import { jsonOutputContract, jsonSchemaOf } from '../../executors/llm/json-output-contract.ts';
import type { AdmissionProblem, Task, TaskComponent, TaskScore } from '../task.ts';
import { stableJson, weightedComposite } from '../task.ts';
import { hasText, type TextInput, textInputSchema, textOfInput } from '../text-input.ts';
import {
  type ExactValue,
  FIELD_MATCHES,
  type FieldDiagnostic,
  type FieldMatch,
  matchExact,
  matchNumber,
  matchSet,
  type SetItem,
} from './field-match.ts';

/** Version of the scoring rules; the task id adds a hash of the field settings. */
export const EXTRACTION_SCORER_VERSION = 'extraction@1';

/** How one field is matched. */
export interface ExtractionFieldOptions {
  match: FieldMatch;
  /** Default weight of the field's component, ≥ 0. Default 1. */
  weight?: number;
  /** `number` fields only: the absolute tolerance, ≥ 0, in the field's units. Default 0. */
  tolerance?: number;
  /** One line for reports and the output contract. Default: the match rule in words. */
  description?: string;
}

/** Settings of {@link createExtractionTask}. */
export interface ExtractionTaskOptions {
  /** The fields, by name, in report order. At least one, and at least one of weight above 0. */
  fields: Readonly<Record<string, ExtractionFieldOptions>>;
  /** Fields of an object input written first in its text (see {@link textOfInput}). Default none. */
  fieldOrder?: readonly string[];
}

/** An extracted (or gold) object: field name → value. */
export type ExtractionRecord = Record<string, unknown>;

/** An extraction task, with its field settings. */
export interface ExtractionTask extends Task<TextInput, ExtractionRecord, ExtractionRecord> {
  readonly fields: Readonly<
    Record<string, Required<Omit<ExtractionFieldOptions, 'tolerance'>> & { tolerance: number }>
  >;
}

const nonNegative = z.number().finite().min(0);
const fieldSchema = z
  .strictObject({
    match: z.enum(FIELD_MATCHES),
    weight: nonNegative.default(1),
    tolerance: nonNegative.optional(),
    description: z.string().min(1).optional(),
  })
  .refine((field) => field.tolerance === undefined || field.match === 'number', {
    message: 'tolerance applies to number fields only',
    path: ['tolerance'],
  });
const optionsSchema = z.strictObject({
  fields: z
    .record(z.string().min(1, 'a field name is empty'), fieldSchema)
    .refine((fields) => Object.keys(fields).length > 0, 'the task declares no field')
    .refine(
      (fields) => Object.values(fields).some((field) => field.weight > 0),
      'at least one field must weigh more than 0',
    ),
  fieldOrder: z.array(z.string().min(1)).default([]),
});

const exactValue = z.union([z.string(), z.number().finite(), z.boolean(), z.null()]);
const setValue = z.array(z.union([z.string(), z.number().finite()]));
const numberValue = z.number().finite().nullable();

const DESCRIPTIONS: Record<FieldMatch, string> = {
  exact: 'exact match (strings compared trimmed, case-folded, white space collapsed)',
  'set-f1': 'F1 of the predicted items against the gold items (a set)',
  number: 'a number within the tolerance',
};

function valueSchema(match: FieldMatch): z.ZodType {
  return match === 'exact' ? exactValue : match === 'set-f1' ? setValue : numberValue;
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

function describeField(name: string, field: FieldDiagnostic): string {
  if (field.unexpected === true) return `${name} should be absent (the text has none), got ${quote(field.predicted)}`;
  if (field.match === 'set-f1') {
    const parts: string[] = [];
    if (field.missingItems!.length > 0) parts.push(`misses ${field.missingItems!.map(quote).join(', ')}`);
    if (field.extraItems!.length > 0) parts.push(`has extra ${field.extraItems!.map(quote).join(', ')}`);
    return `${name} ${parts.join(', ')}`;
  }
  if (field.missing === true) return `${name} is missing, expected ${quote(field.expected)}`;
  const tolerance = field.match === 'number' && field.tolerance! > 0 ? ` (tolerance ${field.tolerance})` : '';
  return `${name} is ${quote(field.predicted)}, expected ${quote(field.expected)}${tolerance}`;
}

/**
 * Creates an extraction task over the declared fields.
 *
 * The task id is `extraction@1:<8 hex digits>`, from the SHA-256 of the
 * field settings (match, weight, tolerance) as stable JSON: another rule is
 * another scorer.
 *
 * @throws InputError (field `fields.<name>.<key>`) when the settings are not
 *   valid: no field, an unknown match rule, a negative weight or tolerance,
 *   a tolerance on a field that is not `number`, no field of weight above 0.
 */
export function createExtractionTask(options: ExtractionTaskOptions): ExtractionTask {
  const { fields, fieldOrder } = resolveFields(options);
  const names = Object.keys(fields);
  const components: TaskComponent[] = names.map((name) => ({
    name,
    weight: fields[name]!.weight,
    description: fields[name]!.description,
  }));
  const { expected, output } = recordSchemas(fields);
  const contract = outputContractOf(fields, output);
  const settings = Object.fromEntries(
    names.map((name) => [
      name,
      { match: fields[name]!.match, weight: fields[name]!.weight, tolerance: fields[name]!.tolerance },
    ]),
  );
  return {
    id: `${EXTRACTION_SCORER_VERSION}:${contentHash(stableJson(settings)).slice(0, 8)}`,
    fields: Object.freeze(fields),
    schemas: {
      input: textInputSchema,
      expected: expected as z.ZodType<ExtractionRecord>,
      output: output as z.ZodType<ExtractionRecord>,
    },
    components,
    outcome: 'continuous',
    score: (predicted: ExtractionRecord, gold: ExtractionRecord, _input: TextInput, weights) =>
      scoreRecord(fields, predicted, gold, weights),
    text: (input: TextInput) => textOfInput(input, fieldOrder),
    admit: admitText,
    outputContract: () => contract,
  };
}

/** A declared field with its defaults filled in. */
type ResolvedField = ExtractionTask['fields'][string];

/** The validated settings: every field with its defaults, and the input field order. */
function resolveFields(options: ExtractionTaskOptions): {
  fields: Record<string, ResolvedField>;
  fieldOrder: string[];
} {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError(`extraction task: ${issue.message}`, { field: issue.path.map(String).join('.') || 'task' });
  }
  const { fieldOrder } = parsed.data;
  const fields = Object.fromEntries(
    Object.entries(parsed.data.fields).map(([name, field]) => [
      name,
      {
        match: field.match,
        weight: field.weight,
        tolerance: field.tolerance ?? 0,
        description: field.description ?? DESCRIPTIONS[field.match],
      },
    ]),
  );
  return { fields, fieldOrder };
}

/** The gold schema (partial, at least one field) and the output schema (every field optional). */
function recordSchemas(fields: Readonly<Record<string, ResolvedField>>): { expected: z.ZodType; output: z.ZodType } {
  const names = Object.keys(fields);
  const expected = z
    .strictObject(Object.fromEntries(names.map((name) => [name, valueSchema(fields[name]!.match).optional()])))
    .refine((record) => names.some((name) => record[name] !== undefined), 'the gold has no field to score');
  const output = z.object(
    Object.fromEntries(
      names.map((name) => [
        name,
        (fields[name]!.match === 'set-f1' ? setValue.nullable() : valueSchema(fields[name]!.match)).optional(),
      ]),
    ),
  );
  return { expected, output };
}

function outputContractOf(fields: Readonly<Record<string, ResolvedField>>, output: z.ZodType): string {
  const names = Object.keys(fields);
  return jsonOutputContract(jsonSchemaOf(output), [
    'It must be an object with these fields, each optional (leave out, or give null for, a value the text does not have):',
    ...names.map(
      (name) =>
        `- ${name}: ${fields[name]!.match === 'set-f1' ? 'a list' : fields[name]!.match === 'number' ? 'a number' : 'a text, number or true/false'}; ${fields[name]!.description}.`,
    ),
  ]);
}

/** Scores the fields the gold has (the rest skipped) and describes the wrong ones. */
function scoreRecord(
  fields: Readonly<Record<string, ResolvedField>>,
  predicted: ExtractionRecord,
  gold: ExtractionRecord,
  weights: Readonly<Record<string, number>>,
): TaskScore {
  const scores: Record<string, number> = {};
  const diagnostics: Record<string, FieldDiagnostic> = {};
  const skipped: string[] = [];
  for (const name of Object.keys(fields)) {
    const goldValue = gold[name];
    if (goldValue === undefined) {
      skipped.push(name);
      continue;
    }
    const field = fields[name]!;
    const value = predicted[name];
    const diagnostic =
      field.match === 'exact'
        ? matchExact(goldValue as ExactValue, value as ExactValue | undefined)
        : field.match === 'set-f1'
          ? matchSet(goldValue as SetItem[], value as SetItem[] | null | undefined)
          : matchNumber(goldValue as number | null, value as number | null | undefined, field.tolerance);
    scores[name] = diagnostic.score;
    diagnostics[name] = diagnostic;
  }
  const wrong = Object.keys(diagnostics).filter((name) => diagnostics[name]!.score < 1);
  return {
    composite: weightedComposite(scores, weights),
    components: scores,
    skipped,
    diagnostics: { fields: diagnostics, wrong },
    feedback: wrong.length === 0 ? '' : `${wrong.map((name) => describeField(name, diagnostics[name]!)).join('; ')}.`,
  };
}

function admitText(input: TextInput): AdmissionProblem[] {
  return hasText(input)
    ? []
    : [
        {
          reason: 'non_trivial_input',
          field: 'input',
          message: 'the input has no text to extract from (every field is blank)',
        },
      ];
}
