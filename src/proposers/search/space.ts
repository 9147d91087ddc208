/**
 * The search space of the search proposer (`proposer.space:` in kloop.yaml):
 * one entry per parameter of the artifact, by its dotted path in the YAML or
 * JSON file (`forest.nEstimators` is the key `nEstimators` of the mapping
 * `forest`).
 *
 * ```yaml
 * proposer:
 *   kind: search
 *   space:
 *     nEstimators: { type: int, low: 1, high: 64, log: true }
 *     maxFeatures: { type: float, low: 0.25, high: 1 }
 *     criterion:   { type: choice, choices: [gini, entropy] }
 * ```
 *
 * - `float`: a real number in [low, high]; `log: true` samples log-uniformly
 *   (low > 0).
 * - `int`: an integer in [low, high]; `log: true` as for float (low ≥ 1).
 * - `choice`: one of `choices` (strings, numbers or booleans; at least two).
 *
 * Internally a number lives on its *internal scale*: the value itself, or its
 * natural log when `log` is set; an integer's interval is widened by ½ on
 * each side so that every integer gets the same width (Optuna's IntDistribution
 * does the same).
 *
 * @module
 */
import { z } from 'zod';

/** A parameter's value in a candidate. */
export type ParamValue = number | string | boolean;

const finite = z.number().refine(Number.isFinite, 'expected a finite number');

const floatParamSchema = z
  .strictObject({ type: z.literal('float'), low: finite, high: finite, log: z.boolean().default(false) })
  .refine((param) => param.high > param.low, { message: 'high must be above low', path: ['high'] })
  .refine((param) => !param.log || param.low > 0, { message: 'a log-scale range needs low > 0', path: ['low'] });

const intParamSchema = z
  .strictObject({
    type: z.literal('int'),
    low: z.int('expected an integer'),
    high: z.int('expected an integer'),
    log: z.boolean().default(false),
  })
  .refine((param) => param.high > param.low, { message: 'high must be above low', path: ['high'] })
  .refine((param) => !param.log || param.low >= 1, {
    message: 'a log-scale integer range needs low ≥ 1',
    path: ['low'],
  });

const choiceParamSchema = z
  .strictObject({
    type: z.literal('choice'),
    choices: z.array(z.union([z.string(), finite, z.boolean()])).min(2, 'a choice needs at least two choices'),
  })
  .refine((param) => new Set(param.choices.map((choice) => JSON.stringify(choice))).size === param.choices.length, {
    message: 'choices must be distinct',
    path: ['choices'],
  });

/** One parameter: `{ type: float|int, low, high, log? }` or `{ type: choice, choices }`. */
export const paramSchema = z.discriminatedUnion('type', [floatParamSchema, intParamSchema, choiceParamSchema]);

/** A dotted path into a YAML/JSON mapping: keys of letters, digits, `_` and `-`. */
const PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** `proposer.space:`: parameters by dotted path (at least one). */
export const searchSpaceSchema = z
  .record(z.string().regex(PATH, 'a parameter path is keys joined by dots, e.g. forest.nEstimators'), paramSchema)
  .refine((space) => Object.keys(space).length > 0, 'declare at least one parameter');

export type ParamSpec = z.infer<typeof paramSchema>;
export type NumericParamSpec = Extract<ParamSpec, { type: 'float' | 'int' }>;
export type SearchSpace = Record<string, ParamSpec>;
export type Params = Record<string, ParamValue>;

/** The interval of a number on its internal scale (see the module comment). */
export function internalRange(spec: NumericParamSpec): { low: number; high: number } {
  const widen = spec.type === 'int' ? 0.5 : 0;
  const low = spec.low - widen;
  const high = spec.high + widen;
  return spec.log ? { low: Math.log(low), high: Math.log(high) } : { low, high };
}

/** A number of the space on its internal scale. */
export function toInternal(spec: NumericParamSpec, value: number): number {
  return spec.log ? Math.log(value) : value;
}

/** Back from the internal scale: exponentiated when `log`, rounded and clamped for `int`, clamped to [low, high]. */
export function fromInternal(spec: NumericParamSpec, internal: number): number {
  const value = spec.log ? Math.exp(internal) : internal;
  const rounded = spec.type === 'int' ? Math.round(value) : value;
  return Math.min(spec.high, Math.max(spec.low, rounded));
}

/** Whether `value` belongs to the parameter's domain. */
export function inDomain(spec: ParamSpec, value: unknown): value is ParamValue {
  if (spec.type === 'choice') return spec.choices.some((choice) => choice === value);
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  if (spec.type === 'int' && !Number.isInteger(value)) return false;
  return value >= spec.low && value <= spec.high;
}

/** Draws one value uniformly on the internal scale (log-uniform for `log`), or a choice with equal probability. */
export function sampleUniform(spec: ParamSpec, random: () => number): ParamValue {
  if (spec.type === 'choice')
    return spec.choices[Math.min(spec.choices.length - 1, Math.floor(random() * spec.choices.length))]!;
  const { low, high } = internalRange(spec);
  return fromInternal(spec, low + random() * (high - low));
}

/** A float rounded to 6 significant digits, so a candidate file stays readable (integers and choices unchanged). */
export function tidy(spec: ParamSpec, value: ParamValue): ParamValue {
  return spec.type === 'float' && typeof value === 'number' ? Number(value.toPrecision(6)) : value;
}
