/**
 * The schema of `proposer.space:` in kloop.yaml: the search proposer's
 * parameters, by dotted path, each a `float`, `int` or `choice` (see
 * src/proposers/search/space.ts for what they mean and how the proposer
 * samples them). Config, so that reading kloop.yaml reaches no proposer.
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
