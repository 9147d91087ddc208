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
import type { NumericParamSpec, ParamSpec, ParamValue } from '../../config/search-space-schema.ts';

// The schema and its types are config (kloop.yaml `proposer.space:`); the search proposer reads them from here too.
export {
  paramSchema,
  searchSpaceSchema,
  type NumericParamSpec,
  type Params,
  type ParamSpec,
  type ParamValue,
  type SearchSpace,
} from '../../config/search-space-schema.ts';

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
