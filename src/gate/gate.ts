/**
 * The gate (the ratchet): decides whether a candidate replaces the incumbent.
 * It returns a typed decision with the evidence of every check it ran, never a
 * bare boolean.
 *
 * Checks, in order (the first failing one names the refusal):
 *
 * 1. constraints  — every mechanical invariant of the program holds;
 * 2. validity     — the candidate has no more invalid outputs than the incumbent;
 * 3. margin       — Δoptimization > τ·√(2/R): τ = k × the rolling maximum of the
 *                   run-to-run SD of one run's composite (calibration; 0 without
 *                   one), scaled to the SD of a difference of two R-run means so
 *                   that τ and Δ are in the same units;
 * 4. significance — one-sided paired t-test on per-example composites (same ids,
 *                   examples valid for both) at α; with ≥ 2 repeats of a
 *                   stochastic executor, also Welch's t-test on run-level composites;
 * 5. anchors      — no anchor example drops by more than its tolerance
 *                   (`anchorTolerance` + anchorK × its calibrated SD × √(2/R));
 *                   an anchor that turns invalid is a regression;
 * 6. shadow       — Δshadow ≥ γ · Δoptimization − m, where m = `shadowMarginSe` ×
 *                   the standard error of the shadow's paired differences (0 when
 *                   nothing on shadow changed). Failing it is *specialization*.
 *
 * The shadow partition is only evaluated when checks 1–5 pass: every look
 * spends a little of its novelty. Duplicates (check 7 of DESIGN §3) are caught
 * before any evaluation is paid for, by the study.
 *
 * Caveat on repeated testing: the gate tests many candidates over a study; α
 * bounds the false-accept rate per decision, not per study. The shadow check
 * and the anchors are what protect against the selection bias that remains.
 *
 * Source: DESIGN.md §3; Welch (1947) and Student's paired t-test as in
 * scipy.stats.ttest_rel / ttest_ind(equal_var=False).
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { perExampleMeans } from '../evaluator/evaluator.ts';
import { mean, pairedTTest, standardError, welchTTest } from '../stats/index.ts';

/** Why a candidate was refused. */
export type RefusalReason =
  | 'constraint'
  | 'invalid'
  | 'below_margin'
  | 'not_significant'
  | 'anchor_regression'
  | 'specialization'
  | 'duplicate'
  | 'evaluation_failed';

/** Every refusal reason, in report order. */
export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'below_margin',
  'not_significant',
  'anchor_regression',
  'specialization',
  'duplicate',
  'invalid',
  'constraint',
  'evaluation_failed',
];

export type GateCheckName = 'constraints' | 'validity' | 'margin' | 'significance' | 'anchors' | 'shadow' | 'diversity';

/** The evidence of one check. */
export interface GateCheck {
  name: GateCheckName;
  passed: boolean;
  /** The check's statistic (Δ, p-value, worst drop, ...), null when not numeric. */
  statistic: number | null;
  /** What the statistic was compared with. */
  threshold: number | null;
  /** One-sentence account, readable in reports. */
  detail: string;
  /** Extra evidence (test results, example ids, counts). */
  data?: Record<string, unknown>;
}

export type GateDecision =
  | { accepted: true; checks: GateCheck[]; shadowConsulted: boolean }
  | { accepted: false; reason: RefusalReason; checks: GateCheck[]; shadowConsulted: boolean };

/** Gate settings; see the module comment for their meaning. */
export interface GateSettings {
  /** Significance level of the one-sided tests. Default 0.05. */
  alpha: number;
  /** Required generalisation ratio γ. Default 0.5. */
  generalizationRatio: number;
  /** m = shadowMarginSe × SE of shadow paired differences. Default 1. */
  shadowMarginSe: number;
  /** Allowed drop per anchor example, on top of calibrated noise. Default 0. */
  anchorTolerance: number;
  /**
   * k of τ = k × rolling-max noise SD (applied by calibration). Default 1: with
   * the √(2/R) scaling, a margin of one standard error of Δ (see docs/gate.md
   * and `npm run bench:gate` for the measured trade-off).
   */
  thresholdK: number;
  /** Multiple of an anchor's per-example SD (× √(2/R)) it may drop without regressing. Default 3. */
  anchorK: number;
}

export const DEFAULT_GATE_SETTINGS: Readonly<GateSettings> = Object.freeze({
  alpha: 0.05,
  generalizationRatio: 0.5,
  shadowMarginSe: 1,
  anchorTolerance: 0,
  thresholdK: 1,
  anchorK: 3,
});

/** What calibration provides to the gate (zeros for a deterministic executor without calibration). */
export interface GateCalibration {
  /** τ: the margin Δoptimization must exceed. */
  threshold: number;
  /** Per-example SD of the composite across noise repeats, by example id. */
  exampleSds: Readonly<Record<string, number>>;
}

export const NO_CALIBRATION: Readonly<GateCalibration> = Object.freeze({ threshold: 0, exampleSds: {} });

/** A pair of scores on one partition. */
export interface ScorePair {
  incumbent: PartitionScore;
  candidate: PartitionScore;
}

export interface GateInput {
  constraints: { passed: boolean; violations: Array<{ constraint: string; message: string }> };
  optimization: ScorePair;
  anchor: ScorePair;
  /** Evaluates the shadow partition; called only when every earlier check passed. */
  evaluateShadow: () => Promise<ScorePair>;
  calibration?: GateCalibration;
  /** Whether the executor is stochastic (enables Welch's test on run-level composites). */
  stochastic?: boolean;
}

/** Paired comparison of two scores over the examples valid for both. */
export interface PairedComparison {
  ids: string[];
  incumbent: number[];
  candidate: number[];
  differences: number[];
  /** Mean difference (candidate − incumbent) over shared examples; 0 when none. */
  delta: number;
  /** Examples left out because one side had no valid output. */
  leftOut: string[];
}

/** Pairs per-example mean composites by id (examples valid for both). */
export function comparePaired(incumbent: PartitionScore, candidate: PartitionScore): PairedComparison {
  const left = perExampleMeans(incumbent);
  const right = perExampleMeans(candidate);
  const allIds = new Set([...incumbent.examples, ...candidate.examples].map((record) => record.exampleId));
  const ids: string[] = [];
  const leftOut: string[] = [];
  for (const id of [...allIds].sort()) {
    if (left.has(id) && right.has(id)) ids.push(id);
    else leftOut.push(id);
  }
  const incumbentValues = ids.map((id) => left.get(id)!);
  const candidateValues = ids.map((id) => right.get(id)!);
  const differences = ids.map((_, index) => candidateValues[index]! - incumbentValues[index]!);
  return {
    ids,
    incumbent: incumbentValues,
    candidate: candidateValues,
    differences,
    delta: differences.length === 0 ? 0 : mean(differences),
    leftOut,
  };
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

/**
 * Runs the checks in order and returns the decision with its evidence.
 */
export async function decide(input: GateInput, settings: Readonly<GateSettings> = DEFAULT_GATE_SETTINGS): Promise<GateDecision> {
  const calibration = input.calibration ?? NO_CALIBRATION;
  const checks: GateCheck[] = [];
  const refuse = (reason: RefusalReason, shadowConsulted = false): GateDecision => ({
    accepted: false,
    reason,
    checks,
    shadowConsulted,
  });

  // 1. constraints
  checks.push({
    name: 'constraints',
    passed: input.constraints.passed,
    statistic: input.constraints.violations.length,
    threshold: 0,
    detail: input.constraints.passed
      ? 'every mechanical constraint holds'
      : input.constraints.violations.map((violation) => `${violation.constraint}: ${violation.message}`).join('; '),
  });
  if (!input.constraints.passed) return refuse('constraint');

  // 2. validity
  const incumbentInvalid = input.optimization.incumbent.invalid + input.anchor.incumbent.invalid;
  const candidateInvalid = input.optimization.candidate.invalid + input.anchor.candidate.invalid;
  const validityPassed = candidateInvalid <= incumbentInvalid;
  checks.push({
    name: 'validity',
    passed: validityPassed,
    statistic: candidateInvalid,
    threshold: incumbentInvalid,
    detail: `${candidateInvalid} invalid outputs (incumbent ${incumbentInvalid}) on optimization and anchor`,
  });
  if (!validityPassed) return refuse('invalid');

  // 3. margin
  const optimization = comparePaired(input.optimization.incumbent, input.optimization.candidate);
  const repeats = Math.max(1, Math.min(input.optimization.incumbent.repeats, input.optimization.candidate.repeats));
  const differenceScale = Math.sqrt(2 / repeats);
  const margin = calibration.threshold * differenceScale;
  const marginPassed = optimization.delta > margin;
  checks.push({
    name: 'margin',
    passed: marginPassed,
    statistic: round(optimization.delta),
    threshold: round(margin),
    detail: `Δoptimization = ${round(optimization.delta)} over ${optimization.ids.length} examples (${optimization.leftOut.length} left out, invalid on one side); τ·√(2/R) = ${round(calibration.threshold)}·√(2/${repeats}) = ${round(margin)}`,
    data: { examples: optimization.ids.length, leftOut: optimization.leftOut, tau: calibration.threshold, repeats },
  });
  if (!marginPassed) return refuse('below_margin');

  // 4. significance
  const paired =
    optimization.ids.length >= 2
      ? pairedTTest(optimization.candidate, optimization.incumbent, { alternative: 'greater' })
      : { t: Number.NaN, df: 0, pValue: 1 };
  let significancePassed = paired.pValue < settings.alpha;
  const data: Record<string, unknown> = {
    test: 'paired t-test, one-sided (candidate > incumbent), per-example composites',
    t: paired.t,
    df: paired.df,
    pValue: paired.pValue,
    improved: optimization.differences.filter((difference) => difference > 0).length,
    worsened: optimization.differences.filter((difference) => difference < 0).length,
  };
  let detail = `paired t-test: t = ${round(paired.t)}, df = ${paired.df}, p = ${round(paired.pValue)} (α = ${settings.alpha}); ${String(data.improved)} examples improved, ${String(data.worsened)} worsened`;
  const runsIncumbent = input.optimization.incumbent.runComposites.filter((value): value is number => value !== null);
  const runsCandidate = input.optimization.candidate.runComposites.filter((value): value is number => value !== null);
  if (input.stochastic === true && runsIncumbent.length >= 2 && runsCandidate.length >= 2) {
    const welch = welchTTest(runsCandidate, runsIncumbent, { alternative: 'greater' });
    data.welch = { test: "Welch's t-test, one-sided, run-level composites", ...welch };
    detail += `; Welch: t = ${round(welch.t)}, df = ${round(welch.df)}, p = ${round(welch.pValue)}`;
    significancePassed = significancePassed && welch.pValue < settings.alpha;
  }
  checks.push({
    name: 'significance',
    passed: significancePassed,
    statistic: round(paired.pValue),
    threshold: settings.alpha,
    detail,
    data,
  });
  if (!significancePassed) return refuse('not_significant');

  // 5. anchors
  const anchor = comparePaired(input.anchor.incumbent, input.anchor.candidate);
  const regressions: Array<{ id: string; drop: number; tolerance: number }> = [];
  anchor.ids.forEach((id, index) => {
    const tolerance = settings.anchorTolerance + settings.anchorK * (calibration.exampleSds[id] ?? 0) * differenceScale;
    const drop = -anchor.differences[index]!;
    if (drop > tolerance + 1e-12) regressions.push({ id, drop: round(drop), tolerance: round(tolerance) });
  });
  const incumbentValidAnchors = new Set(perExampleMeans(input.anchor.incumbent).keys());
  const newlyInvalid = anchor.leftOut.filter((id) => incumbentValidAnchors.has(id));
  const worstDrop = Math.max(0, ...anchor.differences.map((difference) => -difference));
  const anchorsPassed = regressions.length === 0 && newlyInvalid.length === 0;
  checks.push({
    name: 'anchors',
    passed: anchorsPassed,
    statistic: round(worstDrop),
    threshold: settings.anchorTolerance,
    detail: anchorsPassed
      ? `no anchor regressed (worst drop ${round(worstDrop)}, Δanchor = ${round(anchor.delta)})`
      : `anchor regression: ${[...regressions.map((regression) => `${regression.id} −${regression.drop}`), ...newlyInvalid.map((id) => `${id} became invalid`)].join(', ')}`,
    data: { regressions, newlyInvalid, delta: anchor.delta },
  });
  if (!anchorsPassed) return refuse('anchor_regression');

  // 6. shadow
  const shadowScores = await input.evaluateShadow();
  const shadow = comparePaired(shadowScores.incumbent, shadowScores.candidate);
  const changed = shadow.differences.some((difference) => difference !== 0);
  const shadowSe = changed && shadow.differences.length >= 2 ? standardError(shadow.differences) : 0;
  const shadowMargin = settings.shadowMarginSe * shadowSe;
  const required = settings.generalizationRatio * optimization.delta - shadowMargin;
  const shadowInvalidRose = shadowScores.candidate.invalid > shadowScores.incumbent.invalid;
  const shadowPassed = shadow.delta >= required - 1e-12 && !shadowInvalidRose;
  checks.push({
    name: 'shadow',
    passed: shadowPassed,
    statistic: round(shadow.delta),
    threshold: round(required),
    detail: shadowPassed
      ? `shadow confirms: Δshadow = ${round(shadow.delta)} ≥ γ·Δopt − m = ${round(required)}`
      : `specialization: Δshadow = ${round(shadow.delta)} < γ·Δopt − m = ${settings.generalizationRatio}×${round(optimization.delta)} − ${round(shadowMargin)} = ${round(required)}${shadowInvalidRose ? '; more invalid outputs on shadow' : ''}`,
    data: {
      examples: shadow.ids.length,
      leftOut: shadow.leftOut.length,
      changed: shadow.differences.filter((difference) => difference !== 0).length,
      standardError: shadowSe,
      margin: shadowMargin,
    },
  });
  if (!shadowPassed) return refuse('specialization', true);
  return { accepted: true, checks, shadowConsulted: true };
}
