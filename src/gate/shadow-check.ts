/**
 * The gate's shadow check (check 6 of `gate.ts`): does the unseen shadow
 * partition confirm the gain the optimization partition showed?
 *
 * **One test, at `shadowAlpha`.** Earlier releases required both the paired
 * t-test on per-example means and Welch's t-test on the run-level
 * composites, each at `shadowAlpha`: two tests at α each lose power (a real
 * but smaller gain passed 13 of 29 times, issue 34) for no gain in error
 * control once the paired test accounts for the noise it could not see. That
 * noise is the part shared by all examples of one run (a sampled model's
 * drift, a provider's slow minute): the per-example differences
 * dᵢ = c̄ᵢ − īᵢ of means over R_c and R_i runs all carry the same
 * ū_c − ū_i, which moves their mean but not their spread, so
 * Var(d̄) = s_d²/n + σ_u²·(1/R_c + 1/R_i), where s_d²/n is the paired
 * test's own squared standard error and σ_u² the variance of the shared run
 * effect (a two-stage nested design; Searle, Casella & McCulloch 1992,
 * "Variance Components", §3). The shadow's one test is the paired t-test
 * with that variance:
 *
 *   t = d̄ / √(s_d²/n + σ_u²·(1/R_c + 1/R_i)), df = n − 1, one-sided, at `shadowAlpha`.
 *
 * σ_u² comes from calibration when there is one: the calibrated run-level
 * SD of the optimization composite (`noiseSd`, a rolling maximum, so an
 * upper estimate) less the per-example part, σ_u² = noiseSd² − mean(sdᵢ²)/n_opt
 * (clamped at 0); without a calibration, from the two sides' own run-level
 * composites (their variance less the per-example part, pooled). A
 * deterministic executor, or one repeat, has σ_u² = 0: the test is then
 * exactly Student's paired t-test (scipy.stats.ttest_rel). A binary task
 * whose shadow outcomes are all 0/1 is compared with McNemar's exact test
 * (as the optimization partition), one test as well.
 *
 * **Power.** The evidence reports the test's power for the observed effect:
 * P(reject | true shadow gain = Δoptimization) and for the observed Δshadow,
 * by the normal approximation 1 − Φ(z₁₋α − Δ/SE) (Cohen 1988, ch. 2), SE the
 * test's standard error. A low power for Δoptimization says the shadow is too
 * small to confirm a gain of that size: `kloop doctor` warns about it before
 * a run (src/calibration/power-check.ts).
 *
 * **Reasons.** Δshadow ≤ 0, or below the generalisation ratio
 * (Δshadow < γ·Δopt − m), or more invalid outputs on shadow: `specialization`.
 * Δshadow > 0 and the ratio holds but the test does not reject "no gain":
 * `not_confirmed` (positive but unproven; a noisy refusal the loop may judge
 * again, src/loop/retrials.ts).
 *
 * @module
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { normalCdf, studentTCdf } from '../stats/distributions.ts';
import { mean, normalQuantile, standardError, variance } from '../stats/index.ts';
import type { GateCalibration, GateCheck, GateSettings, RefusalReason } from './gate.ts';
import type { PairedComparison, PairedTestResult } from './paired-comparison.ts';
import { comparePaired, invalidRose, pairedTest } from './paired-comparison.ts';

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

/**
 * σ_u²: the variance of the noise shared by all examples of one run
 * (composite units²), from calibration when it has a noise SD, else from the
 * two scores' run-level composites; 0 for a deterministic executor or fewer
 * than 2 runs a side without calibration.
 *
 * @param optimizationIds the optimization partition's example ids (n_opt and the per-example SDs of the calibration)
 */
export function sharedRunVariance(input: {
  calibration: GateCalibration;
  optimizationIds: readonly string[];
  incumbent: PartitionScore;
  candidate: PartitionScore;
  stochastic: boolean;
}): { variance: number; source: 'none' | 'calibration' | 'runs' } {
  if (!input.stochastic) return { variance: 0, source: 'none' };
  const { calibration } = input;
  if (calibration.noiseSd > 0) {
    const count = Math.max(1, input.optimizationIds.length);
    const perExample =
      input.optimizationIds.reduce((sum, id) => sum + (calibration.exampleSds[id] ?? 0) ** 2, 0) / count;
    return { variance: Math.max(0, calibration.noiseSd ** 2 - perExample / count), source: 'calibration' };
  }
  const sides = [input.incumbent, input.candidate]
    .map(runVarianceOf)
    .filter((side): side is { shared: number; df: number } => side !== null);
  if (sides.length === 0) return { variance: 0, source: 'none' };
  const df = sides.reduce((sum, side) => sum + side.df, 0);
  return { variance: Math.max(0, sides.reduce((sum, side) => sum + side.shared * side.df, 0) / df), source: 'runs' };
}

/** One side's estimate of σ_u² from its run-level composites: their variance less the per-example part (null below 2 runs). */
function runVarianceOf(score: PartitionScore): { shared: number; df: number } | null {
  const runs = score.runComposites.filter((value): value is number => value !== null);
  if (runs.length < 2) return null;
  const byExample = new Map<string, number[]>();
  for (const record of score.examples) {
    if (!record.valid) continue;
    byExample.set(record.exampleId, [...(byExample.get(record.exampleId) ?? []), record.composite]);
  }
  const within = [...byExample.values()].filter((values) => values.length >= 2).map((values) => variance(values));
  const perExample = within.length === 0 ? 0 : mean(within) / Math.max(1, byExample.size);
  return { shared: variance(runs) - perExample, df: runs.length - 1 };
}

/** Power of the one-sided test at `alpha` for a true gain `effect`, standard error `se` (normal approximation): 1 − Φ(z₁₋α − effect/SE). */
export function oneSidedPower(effect: number, se: number, alpha: number): number {
  if (!(se > 0)) return effect > 0 ? 1 : alpha;
  return 1 - normalCdf(normalQuantile(1 - alpha) - effect / se, 0, 1);
}

/** What the shadow check decided. */
export interface ShadowCheckResult {
  check: GateCheck;
  /** Null when the shadow confirms; else the refusal. */
  reason: RefusalReason | null;
}

/** The shadow check on evaluated shadow scores (see the module comment). */
export function shadowCheck(input: {
  incumbent: PartitionScore;
  candidate: PartitionScore;
  optimizationDelta: number;
  optimizationIds: readonly string[];
  calibration: GateCalibration;
  stochastic: boolean;
  outcome: 'continuous' | 'binary' | undefined;
  settings: Readonly<GateSettings>;
}): ShadowCheckResult {
  const { settings } = input;
  const shadow = comparePaired(input.incumbent, input.candidate);
  const improved = shadow.differences.filter((difference) => difference > 0).length;
  const worsened = shadow.differences.filter((difference) => difference < 0).length;
  const changed = improved + worsened > 0;
  const pairedSe = changed && shadow.differences.length >= 2 ? standardError(shadow.differences) : 0;
  const shadowMargin = settings.shadowMarginSe * pairedSe;
  const required = settings.generalizationRatio * input.optimizationDelta - shadowMargin;
  const shared = sharedRunVariance({ ...input, stochastic: input.stochastic && changed });
  const repeatsScale = 1 / Math.max(1, input.candidate.repeats) + 1 / Math.max(1, input.incumbent.repeats);
  const se = Math.sqrt(pairedSe ** 2 + shared.variance * repeatsScale);
  const { mcnemar, useMcNemar, t, df, pValue, testText } = shadowTest(input, shadow, { changed, se, shared });
  const invalid = invalidRose(input.incumbent, input.candidate, input.stochastic, settings.alpha);
  const gained = shadow.delta > 1e-12;
  const ratioHolds = shadow.delta >= required - 1e-12;
  const testPasses = pValue < settings.shadowAlpha;
  const passed = gained && ratioHolds && testPasses && !invalid;
  const power = oneSidedPower(input.optimizationDelta, se, settings.shadowAlpha);
  const powerObserved = oneSidedPower(shadow.delta, se, settings.shadowAlpha);
  const reason: RefusalReason | null = passed
    ? null
    : !gained || !ratioHolds || invalid
      ? 'specialization'
      : 'not_confirmed';
  const decidedByDelta = !gained || !ratioHolds;
  const detail = shadowDetail({
    reason,
    delta: shadow.delta,
    gained,
    ratioHolds,
    invalid,
    improved,
    worsened,
    examples: shadow.ids.length,
    testText,
    testPasses,
    power,
    settings,
    optimizationDelta: input.optimizationDelta,
    shadowMargin,
    required,
  });
  const check: GateCheck = {
    name: 'shadow',
    passed,
    statistic: decidedByDelta ? round(shadow.delta) : round(pValue),
    threshold: decidedByDelta ? round(Math.max(0, required)) : settings.shadowAlpha,
    detail,
    data: shadowData({
      shadow,
      improved,
      worsened,
      required,
      pairedSe,
      shadowMargin,
      settings,
      se,
      shared,
      invalid,
      power,
      powerObserved,
      test: { mcnemar, useMcNemar, t, df, pValue },
    }),
  };
  return { check, reason };
}

/** The shadow row's detail: what confirmed or refused, the test, its power, the counts. */
function shadowDetail(input: {
  reason: RefusalReason | null;
  delta: number;
  gained: boolean;
  ratioHolds: boolean;
  invalid: boolean;
  improved: number;
  worsened: number;
  examples: number;
  testText: string;
  testPasses: boolean;
  power: number;
  settings: Readonly<GateSettings>;
  optimizationDelta: number;
  shadowMargin: number;
  required: number;
}): string {
  const { settings, delta } = input;
  const powerText = `power for Δopt = ${round(input.optimizationDelta)}: ${round(input.power)}`;
  const counts = `${input.improved} of ${input.examples} shadow examples improved, ${input.worsened} worsened`;
  const ratioText = `γ·Δopt − m = ${settings.generalizationRatio}×${round(input.optimizationDelta)} − ${round(input.shadowMargin)} = ${round(input.required)}`;
  const verdict = `${input.testText} ${input.testPasses ? '<' : '≥'} shadowAlpha = ${settings.shadowAlpha}`;
  if (input.reason === null)
    return `shadow confirms: Δshadow = ${round(delta)} > 0 and ≥ ${ratioText}; ${verdict}; ${powerText}; ${counts}`;
  if (input.reason === 'not_confirmed')
    return `not confirmed: Δshadow = ${round(delta)} > 0 but not distinguishable from no gain: ${verdict}; ${powerText}; ${counts}`;
  const why = !input.gained
    ? `Δshadow = ${round(delta)} ${delta < -1e-12 ? 'fell' : 'did not move'} (a shadow that did not rise never confirms)`
    : !input.ratioHolds
      ? `Δshadow = ${round(delta)} < ${ratioText}`
      : `Δshadow = ${round(delta)}; ${verdict}`;
  return `specialization: ${why}${input.invalid ? '; more invalid outputs on shadow' : ''}; ${counts}`;
}

/** The shadow's one test: McNemar's exact test for a binary task, else the paired t-test with the run-shared noise added to its variance. */
function shadowTest(
  input: { outcome: 'continuous' | 'binary' | undefined },
  shadow: PairedComparison,
  noise: { changed: boolean; se: number; shared: { variance: number } },
): { mcnemar: PairedTestResult; useMcNemar: boolean; t: number; df: number; pValue: number; testText: string } {
  const { changed, se, shared } = noise;
  const mcnemar = pairedTest(shadow.candidate, shadow.incumbent, input.outcome, {
    testable: changed,
    what: ' on shadow',
  });
  const useMcNemar = mcnemar.name === 'mcnemar-exact';
  const df = Math.max(1, shadow.differences.length - 1);
  const t = se > 0 ? shadow.delta / se : shadow.delta > 0 ? Infinity : 0;
  const pValue = useMcNemar
    ? mcnemar.pValue
    : !changed || shadow.differences.length < 2
      ? 1
      : se > 0
        ? studentTCdf(-t, df)
        : shadow.delta > 0
          ? 0
          : 1;
  const testText = useMcNemar
    ? mcnemar.text
    : `paired t-test on shadow${shared.variance > 0 ? ' with the run-shared noise' : ''}: t = ${round(t)}, df = ${df}, p = ${round(pValue)}`;
  return { mcnemar, useMcNemar, t, df, pValue, testText };
}

/** The shadow check's data: counts, Δshadow, what it had to reach, the test's statistics and its power. */
function shadowData(values: {
  shadow: PairedComparison;
  improved: number;
  worsened: number;
  required: number;
  pairedSe: number;
  shadowMargin: number;
  settings: Readonly<GateSettings>;
  se: number;
  shared: { variance: number; source: unknown };
  invalid: boolean;
  power: number;
  powerObserved: number;
  test: { mcnemar: PairedTestResult; useMcNemar: boolean; t: number; df: number; pValue: number };
}): Record<string, unknown> {
  const { mcnemar, useMcNemar, t, df, pValue } = values.test;
  return {
    examples: values.shadow.ids.length,
    leftOut: values.shadow.leftOut.length,
    improved: values.improved,
    worsened: values.worsened,
    changed: values.improved + values.worsened,
    delta: values.shadow.delta,
    required: values.required,
    standardError: values.pairedSe,
    margin: values.shadowMargin,
    ...(useMcNemar ? { test: mcnemar.test, ...mcnemar.data } : {}),
    ...(!useMcNemar
      ? {
          test: 'paired t-test, one-sided (candidate > incumbent), per-example shadow composites, its variance with the noise shared by a run added',
          pairedTest: 'paired-t',
          t,
          df,
          pValue,
          testStandardError: values.se,
          sharedRunVariance: values.shared.variance,
          sharedRunVarianceFrom: values.shared.source,
        }
      : {}),
    power: {
      alpha: values.settings.shadowAlpha,
      forOptimizationDelta: values.power,
      forObservedDelta: values.powerObserved,
      standardError: values.se,
    },
    invalidRose: values.invalid,
  };
}
