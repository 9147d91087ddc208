/**
 * The search proposer's sampler: a random start, then the tree-structured
 * Parzen estimator (TPE) of Bergstra, Bardenet, Bengio & Kégl, "Algorithms
 * for Hyper-Parameter Optimization", NeurIPS 2011, §4, as Optuna's
 * `TPESampler` runs it with `multivariate=False`:
 *
 * 1. Fewer than `startupTrials` observations (or `tpe: false`): each
 *    parameter is drawn uniformly on its internal scale (random search).
 * 2. Otherwise the observations are sorted by score, best first; the top
 *    ⌈γ·n⌉ (at least 1) are *good*, the rest *bad*. Per parameter, a Parzen
 *    estimator l(x) is fitted to the good values and g(x) to the bad ones
 *    (`parzen.ts`); `candidates` values are drawn from l(x) and the one with
 *    the largest log l(x) − log g(x) (the expected improvement's maximiser,
 *    paper eq. 5) is kept, the first on a tie.
 *
 * Deterministic: the same space, observations and random source give the
 * same suggestion.
 *
 * @module
 */
import { DEFAULT_EI_CANDIDATES, DEFAULT_GAMMA, DEFAULT_STARTUP_TRIALS } from './search-defaults.ts';
import { fitParzen } from './parzen.ts';
import type { Params, ParamValue, SearchSpace } from './space.ts';
import { inDomain, sampleUniform, tidy } from './space.ts';

/** An observed point and its score (higher is better). */
export interface Trial {
  params: Params;
  score: number;
}

/** Settings of the sampler. */
export interface SamplerSettings {
  /** Observations needed before the TPE model is used (integer ≥ 0). Default {@link DEFAULT_STARTUP_TRIALS}. */
  startupTrials: number;
  /** Share of observations that are good, in (0, 1). Default {@link DEFAULT_GAMMA}. */
  gamma: number;
  /** Values drawn from l(x) per parameter (integer ≥ 1). Default {@link DEFAULT_EI_CANDIDATES}. */
  candidates: number;
  /** `false`: random search only (every suggestion uniform). Default true. */
  tpe: boolean;
}

export { DEFAULT_EI_CANDIDATES, DEFAULT_GAMMA, DEFAULT_STARTUP_TRIALS };

/** The sampler's defaults (each written once, in the constants above). */
export const DEFAULT_SAMPLER_SETTINGS: SamplerSettings = {
  startupTrials: DEFAULT_STARTUP_TRIALS,
  gamma: DEFAULT_GAMMA,
  candidates: DEFAULT_EI_CANDIDATES,
  tpe: true,
};

/** Splits observations into good (top ⌈γ·n⌉, at least 1) and bad, best first; ties keep their order. */
export function splitTrials(trials: readonly Trial[], gamma: number): { good: Trial[]; bad: Trial[] } {
  const sorted = trials
    .map((trial, index) => ({ trial, index }))
    .sort((a, b) => b.trial.score - a.trial.score || a.index - b.index);
  const goodCount = Math.max(1, Math.ceil(gamma * trials.length));
  return {
    good: sorted.slice(0, goodCount).map((entry) => entry.trial),
    bad: sorted.slice(goodCount).map((entry) => entry.trial),
  };
}

/**
 * One suggestion: every parameter of `space`, in its domain.
 *
 * @param trials observations so far (values outside a parameter's domain are ignored for that parameter)
 * @param random uniform source in [0, 1)
 */
export function suggest(
  space: SearchSpace,
  trials: readonly Trial[],
  random: () => number,
  settings: SamplerSettings = DEFAULT_SAMPLER_SETTINGS,
): Params {
  const params: Params = {};
  const modelled = settings.tpe && trials.length >= Math.max(1, settings.startupTrials);
  const { good, bad } = modelled ? splitTrials(trials, settings.gamma) : { good: [], bad: [] };
  for (const [name, spec] of Object.entries(space)) {
    if (!modelled) {
      params[name] = tidy(spec, sampleUniform(spec, random));
      continue;
    }
    const valuesOf = (group: readonly Trial[]): ParamValue[] =>
      group.map((trial) => trial.params[name]).filter((value): value is ParamValue => inDomain(spec, value));
    const below = fitParzen(spec, valuesOf(good));
    const above = fitParzen(spec, valuesOf(bad));
    let best: ParamValue | undefined;
    let bestRatio = -Infinity;
    for (let draw = 0; draw < settings.candidates; draw += 1) {
      const value = below.sample(random);
      const ratio = below.logDensity(value) - above.logDensity(value);
      if (best === undefined || ratio > bestRatio) {
        best = value;
        bestRatio = ratio;
      }
    }
    params[name] = tidy(spec, best!);
  }
  return params;
}
