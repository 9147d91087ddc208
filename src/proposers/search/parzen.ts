/**
 * Parzen estimators of one parameter, as the tree-structured Parzen
 * estimator (TPE) builds them: Bergstra, Bardenet, Bengio & Kégl,
 * "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011, §4, and
 * Optuna's `optuna/samplers/_tpe/parzen_estimator.py` (non-multivariate).
 *
 * Numbers: a mixture of normals truncated to the parameter's internal range,
 * one component per observation (equal weights) and one prior component
 * centred on the range with σ = its width (prior weight 1). A component's σ
 * is the larger distance to its sorted neighbours (the range's ends bound the
 * outermost ones), clipped to [width / min(100, 1 + n), width] (Optuna's
 * default, without its magic clip).
 *
 * Choices: a categorical distribution, each observation adding 1 to its
 * choice's weight, the prior 1 spread equally over the choices.
 *
 * @module
 */
import { normalCdf } from '../../stats/distributions.ts';
import type { NumericParamSpec, ParamSpec, ParamValue } from './space.ts';
import { fromInternal, internalRange, toInternal } from './space.ts';

/** A density over one parameter that can be sampled from. */
export interface ParzenEstimator {
  sample(random: () => number): ParamValue;
  /** Natural log of the density (numbers, on the internal scale) or of the probability (choices) at `value`. */
  logDensity(value: ParamValue): number;
}

/** Weight of the prior component, Optuna's `prior_weight` default. */
export const PRIOR_WEIGHT = 1;

/** Most normal draws rejected for falling outside the range before the draw is clamped. */
const MAX_REJECTIONS = 100;

interface Component {
  mu: number;
  sigma: number;
  weight: number;
  /** Mass of the normal inside the range, the truncation's normaliser. */
  mass: number;
}

/** A standard normal draw (Box–Muller, one of the pair). */
function standardNormal(random: () => number): number {
  const u = Math.max(random(), Number.MIN_VALUE);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function numericComponents(spec: NumericParamSpec, values: readonly number[]): Component[] {
  const { low, high } = internalRange(spec);
  const width = high - low;
  const mus = values.map((value) => toInternal(spec, value));
  const points = [...mus.map((mu) => ({ mu, prior: false })), { mu: (low + high) / 2, prior: true }].sort(
    (a, b) => a.mu - b.mu,
  );
  const minSigma = width / Math.min(100, 1 + points.length);
  const total = mus.length + PRIOR_WEIGHT;
  return points.map((point, index) => {
    const left = point.mu - (index > 0 ? points[index - 1]!.mu : low);
    const right = (index < points.length - 1 ? points[index + 1]!.mu : high) - point.mu;
    const sigma = point.prior ? width : Math.min(width, Math.max(minSigma, left, right));
    const mass = normalCdf(high, point.mu, sigma) - normalCdf(low, point.mu, sigma);
    return { mu: point.mu, sigma, weight: (point.prior ? PRIOR_WEIGHT : 1) / total, mass };
  });
}

function pickIndex(weights: readonly number[], random: () => number): number {
  let draw = random();
  for (let index = 0; index < weights.length; index += 1) {
    draw -= weights[index]!;
    if (draw < 0) return index;
  }
  return weights.length - 1;
}

function numericEstimator(spec: NumericParamSpec, values: readonly number[]): ParzenEstimator {
  const { low, high } = internalRange(spec);
  const components = numericComponents(spec, values);
  const weights = components.map((component) => component.weight);
  return {
    sample(random) {
      const component = components[pickIndex(weights, random)]!;
      let internal = component.mu + component.sigma * standardNormal(random);
      for (let rejected = 0; (internal < low || internal > high) && rejected < MAX_REJECTIONS; rejected += 1) {
        internal = component.mu + component.sigma * standardNormal(random);
      }
      return fromInternal(spec, Math.min(high, Math.max(low, internal)));
    },
    logDensity(value) {
      const x = toInternal(spec, value as number);
      let density = 0;
      for (const component of components) {
        const z = (x - component.mu) / component.sigma;
        density +=
          (component.weight * Math.exp(-0.5 * z * z)) /
          (component.sigma * Math.sqrt(2 * Math.PI) * Math.max(component.mass, Number.MIN_VALUE));
      }
      return Math.log(density);
    },
  };
}

function choiceEstimator(choices: readonly ParamValue[], values: readonly ParamValue[]): ParzenEstimator {
  const weights = choices.map(() => PRIOR_WEIGHT / choices.length);
  for (const value of values) {
    const index = choices.indexOf(value);
    if (index >= 0) weights[index]! += 1;
  }
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const probabilities = weights.map((weight) => weight / total);
  return {
    sample: (random) => choices[pickIndex(probabilities, random)]!,
    logDensity: (value) => Math.log(probabilities[choices.indexOf(value)] ?? 0),
  };
}

/** The Parzen estimator of `spec` fitted to observed values (each in the parameter's domain). */
export function fitParzen(spec: ParamSpec, values: readonly ParamValue[]): ParzenEstimator {
  if (spec.type === 'choice') return choiceEstimator(spec.choices, values);
  return numericEstimator(spec, values as readonly number[]);
}
