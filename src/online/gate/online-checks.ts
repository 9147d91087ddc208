/** The checks of the online gate (src/online/gate/online-gate.ts), each run at one look and leaving its evidence. */
import { welchTTestFromMoments } from '../../stats/index.ts';
import { armDifference, pooledUnitStandardDeviation } from '../statistics/arm-moments.ts';
import { mixtureSprt, type MixtureSprtResult } from '../statistics/mixture-sprt.ts';
import { sampleRatioMismatch } from '../statistics/sample-ratio-mismatch.ts';
import type { ArmPair, OnlineCheck, OnlineGateInput, OnlineGateSettings, OnlineMetric } from '../types.ts';

const round = (value: number): number => (Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : value);
const percent = (value: number): string => `${round(value * 100)}%`;
/** A p-value for reports: 6 decimals, or 3 significant digits below 1e-4. */
const formatP = (value: number): string => (value > 0 && value < 1e-4 ? value.toPrecision(3) : String(round(value)));

/**
 * One look of the mSPRT on a metric's two arms, with the mixing SD from the
 * pooled per-unit SD. `pValue` is **directional**: the running minimum of
 * 1/Λ over the looks (this one and `previousPValue`'s) at which Δ pointed
 * the `way` asked (`better` for the primary, `worse` for the harm stop), so
 * a guardrail that was significantly better at one look cannot lend that
 * evidence to a later, slightly worse one. The two-sided mixture bounds both
 * directions' crossings together by α, so each alone is bounded by α.
 */
export function sequentialTest(
  metric: OnlineMetric,
  arms: ArmPair,
  settings: Readonly<OnlineGateSettings>,
  way: 'better' | 'worse',
  previousPValue: number | undefined,
): MixtureSprtResult & { incumbentMean: number; candidateMean: number } {
  const difference = armDifference(arms, metric.kind, metric.direction);
  const unitSd = pooledUnitStandardDeviation(difference);
  const means = { incumbentMean: difference.incumbent.mean, candidateMean: difference.candidate.mean };
  const previous = Math.min(1, previousPValue ?? 1);
  if (unitSd === 0) {
    return {
      delta: difference.delta,
      varianceOfDelta: 0,
      logLikelihoodRatio: 0,
      pValue: previous,
      interval: { lower: -Infinity, upper: Infinity },
      ...means,
    };
  }
  const test = mixtureSprt(difference.delta, difference.varianceOfDelta, {
    alpha: settings.alpha,
    mixingStandardDeviation: settings.mixingEffectSize * unitSd,
  });
  const pointsTheWay = way === 'better' ? difference.delta > 0 : difference.delta < 0;
  return { ...test, pValue: Math.min(previous, pointsTheWay ? test.pValue : 1), ...means };
}

export function srmCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const previousPValue = input.previousPValues?.srm;
  const srm = sampleRatioMismatch(input.assignments, {
    split: settings.split,
    mixingShareSd: settings.srmMixingShareSd,
    ...(previousPValue !== undefined ? { previousPValue } : {}),
  });
  const failed = srm.sequentialPValue < settings.srmAlpha;
  const share = srm.candidate / Math.max(1, srm.incumbent + srm.candidate);
  return {
    name: 'srm',
    verdict: failed ? 'fail' : 'pass',
    statistic: srm.sequentialPValue,
    threshold: settings.srmAlpha,
    pValue: srm.sequentialPValue,
    detail: `${srm.incumbent} incumbent / ${srm.candidate} candidate assignments (candidate share ${percent(share)}, expected ${percent(srm.expectedShare)}); χ² = ${round(srm.chiSquare.statistic)}, df = ${srm.chiSquare.degreesOfFreedom}, fixed-horizon p = ${formatP(srm.chiSquare.pValue)}; always-valid p = ${formatP(srm.sequentialPValue)} ${failed ? '<' : '≥'} ${settings.srmAlpha}${failed ? ': sample-ratio mismatch, the experiment is invalid' : ''}`,
    data: {
      test: "Pearson's χ² goodness of fit of assignment counts; always-valid p-value by the mixture SPRT",
      pValueKey: 'srm',
      chiSquare: srm.chiSquare.statistic,
      incumbent: srm.incumbent,
      candidate: srm.candidate,
      expectedShare: srm.expectedShare,
      degreesOfFreedom: srm.chiSquare.degreesOfFreedom,
      fixedPValue: srm.chiSquare.pValue,
      sequentialPValue: srm.sequentialPValue,
    },
  };
}

export function harmCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const results = input.guardrails.map(({ guardrail, arms }) => {
    const test = sequentialTest(
      guardrail.metric,
      arms,
      settings,
      'worse',
      input.previousPValues?.[`harm:${guardrail.metric.name}`],
    );
    return {
      metric: guardrail.metric.name,
      pValueKey: `harm:${guardrail.metric.name}`,
      delta: test.delta,
      pValue: test.pValue,
      incumbentMean: test.incumbentMean,
      candidateMean: test.candidateMean,
      harmed: test.pValue < settings.alpha,
    };
  });
  if (results.length === 0)
    return {
      name: 'harm',
      verdict: 'pass',
      statistic: null,
      threshold: settings.alpha,
      detail: 'no guardrail to watch',
      data: { guardrails: [] },
    };
  // The row shows the guardrail closest to a harm stop: the smallest p-value among those moving the wrong way.
  const worse = results.filter((result) => result.delta < 0).sort((left, right) => left.pValue - right.pValue);
  const shown = worse[0] ?? results[0]!;
  const harmed = results.filter((result) => result.harmed);
  return {
    name: 'harm',
    verdict: harmed.length > 0 ? 'fail' : 'pass',
    statistic: shown.pValue,
    threshold: settings.alpha,
    pValue: shown.pValue,
    detail:
      harmed.length > 0
        ? `harm stop: ${harmed.map((result) => `${result.metric} significantly worse (${round(result.candidateMean)} vs ${round(result.incumbentMean)}, always-valid p = ${formatP(result.pValue)} < α = ${settings.alpha})`).join('; ')}`
        : `no guardrail significantly worse (${worse.length === 0 ? 'none moved the wrong way' : `closest: ${shown.metric} ${round(shown.candidateMean)} vs ${round(shown.incumbentMean)}, always-valid p = ${formatP(shown.pValue)} ≥ α = ${settings.alpha}`})`,
    data: { test: 'mixture SPRT (Johari et al. 2017), always-valid p-value, guardrail worse', guardrails: results },
  };
}

export function minimumUnitsCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const units = Math.min(input.primary.arms.incumbent.units, input.primary.arms.candidate.units);
  const passed = units >= settings.minUnitsPerArm;
  return {
    name: 'minimum_units',
    verdict: passed ? 'pass' : 'wait',
    statistic: units,
    threshold: settings.minUnitsPerArm,
    detail: `${input.primary.arms.incumbent.units} incumbent / ${input.primary.arms.candidate.units} candidate analysed units; ${passed ? '≥' : '<'} ${settings.minUnitsPerArm} per arm`,
  };
}

export function budgetSpent(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): boolean {
  const { incumbent, candidate } = input.primary.arms;
  return input.budgetExhausted === true || Math.min(incumbent.units, candidate.units) >= settings.maxUnitsPerArm;
}

export function primaryCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const { metric, arms } = input.primary;
  const test = sequentialTest(metric, arms, settings, 'better', input.previousPValues?.primary);
  const margin =
    settings.thresholdK *
    settings.tau *
    Math.sqrt(1 / Math.max(1, arms.candidate.units) + 1 / Math.max(1, arms.incumbent.units));
  const significant = test.pValue < settings.alpha && test.delta > 0;
  const aboveMargin = test.delta > margin;
  const passed = significant && aboveMargin;
  const spent = !passed && budgetSpent(input, settings);
  const interval = { lower: round(test.interval.lower), upper: round(test.interval.upper), level: 1 - settings.alpha };
  return {
    name: 'primary',
    verdict: passed ? 'pass' : spent ? 'fail' : 'wait',
    statistic: round(test.delta),
    threshold: round(margin),
    pValue: test.pValue,
    interval,
    detail: `${metric.name}: ${round(test.candidateMean)} candidate vs ${round(test.incumbentMean)} incumbent, Δ = ${round(test.delta)} ${aboveMargin ? '>' : '≤'} margin ${settings.thresholdK}×τ·√(1/n_c + 1/n_i) = ${round(margin)}; mSPRT always-valid p = ${formatP(test.pValue)} ${test.pValue < settings.alpha ? '<' : '≥'} α = ${settings.alpha}, ${percent(1 - settings.alpha)} confidence sequence [${interval.lower}, ${interval.upper}]${spent ? '; the unit budget is spent' : ''}`,
    data: {
      test: 'mixture SPRT (Johari et al. 2017), two-sided, always-valid',
      pValueKey: 'primary',
      looks: input.looks,
      tau: settings.tau,
      thresholdK: settings.thresholdK,
      logLikelihoodRatio: test.logLikelihoodRatio,
      varianceOfDelta: test.varianceOfDelta,
      units: { incumbent: arms.incumbent.units, candidate: arms.candidate.units },
    },
  };
}

export function guardrailCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const results = input.guardrails.map(({ guardrail, arms }) => {
    const test = sequentialTest(guardrail.metric, arms, settings, 'worse', undefined);
    // The most the candidate may be worse by, at this look: minus the confidence sequence's lower bound on Δ.
    const worstCase = -test.interval.lower;
    return {
      metric: guardrail.metric.name,
      margin: guardrail.margin,
      delta: test.delta,
      worstCase,
      interval: test.interval,
      holds: worstCase < guardrail.margin,
    };
  });
  if (results.length === 0)
    return {
      name: 'guardrails',
      verdict: 'pass',
      statistic: null,
      threshold: null,
      detail: 'no guardrail',
      data: { guardrails: [] },
    };
  // The row shows the guardrail closest to (or furthest past) its margin.
  const shown = [...results].sort((left, right) => right.worstCase - right.margin - (left.worstCase - left.margin))[0]!;
  const failed = results.filter((result) => !result.holds);
  const spent = budgetSpent(input, settings);
  return {
    name: 'guardrails',
    verdict: failed.length === 0 ? 'pass' : spent ? 'fail' : 'wait',
    statistic: round(shown.worstCase),
    threshold: shown.margin,
    interval: { lower: round(shown.interval.lower), upper: round(shown.interval.upper), level: 1 - settings.alpha },
    detail:
      failed.length > 0
        ? `non-inferiority not shown${spent ? ' and the unit budget is spent' : ' yet'}: ${failed.map((result) => `${result.metric} may be worse by up to ${round(result.worstCase)} ≥ margin ${result.margin} (Δ = ${round(result.delta)})`).join('; ')}`
        : `every guardrail non-inferior (closest: ${shown.metric}, worse by at most ${round(shown.worstCase)} < margin ${shown.margin}, ${percent(1 - settings.alpha)} confidence sequence)`,
    data: {
      test: 'non-inferiority: the mSPRT confidence sequence’s bound on the worsening below the absolute margin',
      guardrails: results.map(({ interval: _interval, ...result }) => ({
        ...result,
        worstCase: round(result.worstCase),
      })),
    },
  };
}

export function confirmationCheck(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>): OnlineCheck {
  const arms = input.confirmation;
  const metric = input.primary.metric;
  const units = arms === undefined ? 0 : Math.min(arms.incumbent.units, arms.candidate.units);
  if (arms === undefined || units < settings.confirmationUnits) {
    return {
      name: 'confirmation',
      verdict: 'wait',
      statistic: units,
      threshold: settings.confirmationUnits,
      detail: `the confirmation window has ${units} of ${settings.confirmationUnits} fresh units per arm`,
    };
  }
  const difference = armDifference(arms, metric.kind, metric.direction);
  const better = (side: 'incumbent' | 'candidate') => ({
    size: difference[side].units,
    mean: difference[side].mean,
    variance: difference[side].sampleVariance,
  });
  // One-sided: the candidate better; for a `decrease` metric that is a lower mean.
  const [first, second] =
    metric.direction === 'increase'
      ? [better('candidate'), better('incumbent')]
      : [better('incumbent'), better('candidate')];
  const welch = welchTTestFromMoments(first, second, { alternative: 'greater' });
  const gained = difference.delta > 0;
  const confirmed = gained && welch.pValue < settings.shadowAlpha;
  const counts = `${difference.candidate.units} candidate / ${difference.incumbent.units} incumbent fresh units: ${round(difference.candidate.mean)} vs ${round(difference.incumbent.mean)}`;
  return {
    name: 'confirmation',
    verdict: confirmed ? 'pass' : 'fail',
    statistic: gained ? round(welch.pValue) : round(difference.delta),
    threshold: gained ? settings.shadowAlpha : 0,
    pValue: welch.pValue,
    detail: `${confirmed ? 'confirmed' : gained ? 'not confirmed' : 'specialization'}: ${counts}, Δconfirm = ${round(difference.delta)}${gained ? '' : ' ≤ 0 (no gain on fresh units)'}; Welch's t-test, one-sided: t = ${round(welch.t)}, df = ${round(welch.df)}, p = ${formatP(welch.pValue)} ${welch.pValue < settings.shadowAlpha ? '<' : '≥'} shadowAlpha = ${settings.shadowAlpha}`,
    data: {
      test: "Welch's t-test, one-sided (candidate better), confirmation window",
      delta: difference.delta,
      t: welch.t,
      df: welch.df,
      pValue: welch.pValue,
      gained,
    },
  };
}
