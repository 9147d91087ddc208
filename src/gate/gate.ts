/**
 * The gate (the ratchet): decides whether a candidate replaces the incumbent.
 * It returns a typed decision with the evidence of every check it ran, never a
 * bare boolean.
 *
 * Checks, in order (the first failing one names the refusal):
 *
 * 1. constraints  — every mechanical invariant of the program holds;
 * 2. validity     — the candidate has no more invalid outputs than the incumbent
 *                   (deterministic executor: counts; stochastic: its invalid
 *                   rate is not significantly higher — Fisher's exact test,
 *                   one-sided, at α — since sampled invalid counts are noisy);
 * 3. margin       — Δoptimization > τ·√(1/R_c + 1/R_i) (√(2/R) for equal
 *                   repeats of candidate and incumbent): τ = `thresholdK` × the rolling
 *                   maximum of the run-to-run SD of one run's composite
 *                   (calibration; 0 without one), computed at decision time,
 *                   scaled to the SD of a difference of two R-run means so
 *                   that τ and Δ are in the same units;
 * 4. significance — one-sided paired test on per-example composites (same ids,
 *                   examples valid for both) at α: the paired t-test for a
 *                   continuous task; for a binary task (`outcome: 'binary'`,
 *                   every example right or wrong) McNemar's exact test on the
 *                   discordant pairs (see {@link pairedTest}); with ≥ 2
 *                   repeats of a stochastic executor, also Welch's t-test on
 *                   run-level composites;
 * 5. anchors      — no anchor example drops by more than its tolerance
 *                   (`anchorTolerance` + anchorK × its calibrated SD × √(1/R_c + 1/R_i));
 *                   an anchor that turns invalid is a regression;
 * 6. shadow       — the shadow must confirm the gain, all three of:
 *                   (a) Δshadow > 0 — a shadow that fell or stayed put never
 *                       confirms;
 *                   (b) Δshadow ≥ γ · Δoptimization − m, where m =
 *                       `shadowMarginSe` × the standard error of the shadow's
 *                       paired differences (the generalisation ratio);
 *                   (c) ONE one-sided test on the shadow's per-example
 *                       composites rejects "no gain" at `shadowAlpha`: the
 *                       paired t-test with the noise shared by a run's
 *                       examples added to its variance (McNemar's exact test
 *                       for a binary task), src/gate/shadow-check.ts.
 *                   Failing (a), (b) or a rise in invalid outputs is
 *                   *specialization*; Δshadow > 0 within the ratio but (c)
 *                   not rejecting is *not_confirmed* (positive, unproven).
 *                   (c) bounds the rate at which a true zero shadow effect
 *                   "confirms" by chance: at most `shadowAlpha` per decision
 *                   that reaches the shadow (exactly so under the t-test's
 *                   normality assumption; `npm run bench:gate`, overfit
 *                   column, measures it). The evidence carries the test's
 *                   power for the observed effect.
 *
 * The shadow partition is only evaluated when checks 1–5 pass: every look
 * spends a little of its novelty. With racing (`gate.racing`,
 * src/gate/racing/) the candidate's shadow may be evaluated in batches and
 * stopped for futility: `evaluateShadow` then says so (`stoppedEarly`) and
 * the check refuses with that evidence — `not_confirmed` when the raced
 * shadow's gain so far was positive, `specialization` otherwise — a raced
 * shadow never confirms on part of it. A candidate the race stops on the
 * optimization partition is refused as `futility` before it reaches this
 * gate (src/gate/racing/decide-raced.ts). Duplicates (check 7 of DESIGN §3) are caught
 * before any evaluation is paid for, by the study.
 *
 * Caveat on repeated testing: the gate tests many candidates over a study; α
 * bounds the false-accept rate per decision, not per study. A delta judged
 * again (a re-trial, src/loop/retrials.ts) is judged at levels split over
 * its re-trials, so the re-trials of one delta together spend at most one
 * more α. The shadow check
 * and the anchors are what protect against the selection bias that remains.
 *
 * Source: DESIGN.md §3; Welch (1947) and Student's paired t-test as in
 * scipy.stats.ttest_rel / ttest_ind(equal_var=False); McNemar (1947), the
 * exact binomial form as scipy.stats.binomtest (src/stats/mcnemar.ts).
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import { comparePaired, pairedTest, round } from './paired-comparison.ts';
import { DEFAULT_GATE_SETTINGS } from './gate-defaults.ts';
import { fisherExactTest, welchTTest } from '../stats/index.ts';
import { shadowCheck } from './shadow-check.ts';

/** Why a candidate was refused. */
export type RefusalReason =
  | 'constraint'
  | 'invalid'
  | 'below_margin'
  | 'not_significant'
  | 'anchor_regression'
  | 'specialization'
  | 'not_confirmed'
  | 'duplicate'
  | 'evaluation_failed'
  | 'futility';

/** Every refusal reason, in report order. */
export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'below_margin',
  'not_significant',
  'anchor_regression',
  'specialization',
  'not_confirmed',
  'duplicate',
  'invalid',
  'constraint',
  'evaluation_failed',
  'futility',
];

export type GateCheckName =
  | 'constraints'
  | 'validity'
  | 'margin'
  | 'significance'
  | 'anchors'
  | 'shadow'
  | 'diversity'
  | 'evaluation'
  | 'racing';

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
  /** Significance level of the one-sided tests on the optimization partition. Default 0.05. */
  alpha: number;
  /**
   * Level of the one-sided paired t-test on the shadow partition: the most a
   * true zero shadow effect may "confirm" a gain by chance, per decision that
   * reaches the shadow. Default 0.05.
   */
  shadowAlpha: number;
  /** Required generalisation ratio γ. Default 0.5. */
  generalizationRatio: number;
  /** m = shadowMarginSe × SE of shadow paired differences. Default 1. */
  shadowMarginSe: number;
  /** Allowed drop per anchor example, on top of calibrated noise. Default 0. */
  anchorTolerance: number;
  /**
   * k of τ = k × rolling-max noise SD, applied at decision time to the stored
   * noise of the calibration. Default 1: with the √(2/R) scaling, a margin of
   * one standard error of Δ (see docs/gate.md and `npm run bench:gate` for
   * where it binds).
   */
  thresholdK: number;
  /** Multiple of an anchor's per-example SD (× √(2/R)) it may drop without regressing. Default 3. */
  anchorK: number;
}

export { DEFAULT_GATE_SETTINGS } from './gate-defaults.ts';

/** What calibration provides to the gate (zeros for a deterministic executor without calibration). */
export interface GateCalibration {
  /**
   * The rolling maximum of the run-to-run SD of one run's optimization
   * composite over the recent calibrations of this evaluator (composite
   * units). The gate's τ = `thresholdK` × this, at decision time.
   */
  noiseSd: number;
  /** Per-example SD of the composite across noise repeats, by example id. */
  exampleSds: Readonly<Record<string, number>>;
}

export const NO_CALIBRATION: Readonly<GateCalibration> = Object.freeze({ noiseSd: 0, exampleSds: {} });

/** A pair of scores on one partition. */
export interface ScorePair {
  incumbent: PartitionScore;
  candidate: PartitionScore;
}

/**
 * The shadow as `evaluateShadow` gives it: both scores, and — when the
 * shadow was raced and stopped for futility (src/gate/racing/shadow-race.ts)
 * — why it stopped: the shadow check is then refused as `specialization`
 * with that evidence, never confirmed on a partial shadow.
 */
export interface ShadowPair extends ScorePair {
  stoppedEarly?: { statistic: number; threshold: number; detail: string; data: Record<string, unknown> };
}

export interface GateInput {
  constraints: { passed: boolean; violations: Array<{ constraint: string; message: string }> };
  optimization: ScorePair;
  anchor: ScorePair;
  /**
   * Evaluates the shadow partition; called only when every earlier check
   * passed, with the decision's Δoptimization (what a raced shadow must
   * confirm).
   */
  evaluateShadow: (context: { optimizationDelta: number }) => Promise<ShadowPair>;
  calibration?: GateCalibration;
  /** Whether the executor is stochastic (enables Welch's test on run-level composites). */
  stochastic?: boolean;
  /**
   * The task's outcome kind (`task.outcome`): `'binary'` tasks (every example
   * right or wrong) are compared with McNemar's exact test, `'continuous'`
   * ones (default) with the paired t-test. See {@link pairedTest}.
   */
  outcome?: 'continuous' | 'binary';
}

export type { PairedComparison, PairedTestName, PairedTestResult } from './paired-comparison.ts';
export { comparePaired, invalidRose, pairedTest } from './paired-comparison.ts';

/**
 * Runs the checks in order and returns the decision with its evidence.
 */
export async function decide(
  input: GateInput,
  settings: Readonly<GateSettings> = DEFAULT_GATE_SETTINGS,
): Promise<GateDecision> {
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
  // Transient failures (timeouts, server errors) are the infrastructure's, not the artifact's: not counted here.
  const terminal = (score: PartitionScore): number => score.invalid - (score.transient ?? 0);
  const counted = (score: PartitionScore): number => score.total - (score.transient ?? 0);
  const incumbentInvalid = terminal(input.optimization.incumbent) + terminal(input.anchor.incumbent);
  const candidateInvalid = terminal(input.optimization.candidate) + terminal(input.anchor.candidate);
  const incumbentOutputs = counted(input.optimization.incumbent) + counted(input.anchor.incumbent);
  const candidateOutputs = counted(input.optimization.candidate) + counted(input.anchor.candidate);
  if (input.stochastic === true) {
    // A sampled model's invalid outputs are noisy counts (and the incumbent may have more repeats):
    // refuse only an invalid *rate* that is significantly higher — Fisher's exact test, one-sided, at α.
    const fisher = fisherExactTest(
      [
        [candidateInvalid, candidateOutputs - candidateInvalid],
        [incumbentInvalid, incumbentOutputs - incumbentInvalid],
      ],
      'greater',
    );
    const validityPassed = fisher.pValue >= settings.alpha;
    checks.push({
      name: 'validity',
      passed: validityPassed,
      statistic: round(fisher.pValue),
      threshold: settings.alpha,
      detail: `${candidateInvalid} invalid of ${candidateOutputs} outputs (incumbent ${incumbentInvalid} of ${incumbentOutputs}) on optimization and anchor; Fisher's exact test, one-sided (candidate's rate higher): p = ${round(fisher.pValue)} ${validityPassed ? '≥' : '<'} α = ${settings.alpha}`,
      data: {
        test: "Fisher's exact test, one-sided",
        candidateInvalid,
        candidateOutputs,
        incumbentInvalid,
        incumbentOutputs,
        pValue: fisher.pValue,
      },
    });
    if (!validityPassed) return refuse('invalid');
  } else {
    const validityPassed = candidateInvalid <= incumbentInvalid;
    checks.push({
      name: 'validity',
      passed: validityPassed,
      statistic: candidateInvalid,
      threshold: incumbentInvalid,
      detail: `${candidateInvalid} invalid outputs (incumbent ${incumbentInvalid}) on optimization and anchor`,
    });
    if (!validityPassed) return refuse('invalid');
  }

  // 3. margin
  const optimization = comparePaired(input.optimization.incumbent, input.optimization.candidate);
  // The SD of a difference of two means of R_c and R_i runs is σ·√(1/R_c + 1/R_i) (√(2/R) when equal).
  const candidateRepeats = Math.max(1, input.optimization.candidate.repeats);
  const incumbentRepeats = Math.max(1, input.optimization.incumbent.repeats);
  const repeats = candidateRepeats === incumbentRepeats ? candidateRepeats : `${candidateRepeats}+${incumbentRepeats}`;
  const differenceScale = Math.sqrt(1 / candidateRepeats + 1 / incumbentRepeats);
  const tau = settings.thresholdK * calibration.noiseSd;
  const margin = tau * differenceScale;
  const marginPassed = optimization.delta > margin;
  checks.push({
    name: 'margin',
    passed: marginPassed,
    statistic: round(optimization.delta),
    threshold: round(margin),
    detail: `Δoptimization = ${round(optimization.delta)} over ${optimization.ids.length} examples (${optimization.leftOut.length} left out, invalid on one side); τ·√(1/R_c + 1/R_i) = ${settings.thresholdK}×${round(calibration.noiseSd)}·√(1/${candidateRepeats} + 1/${incumbentRepeats}) = ${round(margin)}`,
    data: {
      examples: optimization.ids.length,
      leftOut: optimization.leftOut,
      tau,
      thresholdK: settings.thresholdK,
      noiseSd: calibration.noiseSd,
      repeats,
    },
  });
  if (!marginPassed) return refuse('below_margin');

  // 4. significance
  const paired = pairedTest(optimization.candidate, optimization.incumbent, input.outcome);
  const pairedPassed = paired.pValue < settings.alpha;
  const improved = optimization.differences.filter((difference) => difference > 0).length;
  const worsened = optimization.differences.filter((difference) => difference < 0).length;
  const data: Record<string, unknown> = {
    test: paired.test,
    ...paired.data,
    improved,
    worsened,
  };
  let detail = `${paired.text} ${pairedPassed ? '<' : '≥'} α = ${settings.alpha}`;
  // The statistic that decided: the larger p-value when both tests ran (both must pass).
  let decidingP = paired.pValue;
  let significancePassed = pairedPassed;
  const runsIncumbent = input.optimization.incumbent.runComposites.filter((value): value is number => value !== null);
  const runsCandidate = input.optimization.candidate.runComposites.filter((value): value is number => value !== null);
  if (input.stochastic === true && runsIncumbent.length >= 2 && runsCandidate.length >= 2) {
    const welch = welchTTest(runsCandidate, runsIncumbent, { alternative: 'greater' });
    const welchPassed = welch.pValue < settings.alpha;
    data.welch = {
      test: "Welch's t-test, one-sided, run-level composites",
      ...welch,
      runs: { candidate: runsCandidate.length, incumbent: runsIncumbent.length },
    };
    detail += `; Welch's t-test on ${runsCandidate.length} vs ${runsIncumbent.length} run-level composites: t = ${round(welch.t)}, df = ${round(welch.df)}, p = ${round(welch.pValue)} ${welchPassed ? '<' : '≥'} α`;
    decidingP = Math.max(decidingP, welch.pValue);
    significancePassed = pairedPassed && welchPassed;
  }
  detail += `; ${improved} examples improved, ${worsened} worsened`;
  checks.push({
    name: 'significance',
    passed: significancePassed,
    statistic: round(decidingP),
    threshold: settings.alpha,
    detail,
    data,
  });
  if (!significancePassed) return refuse('not_significant');

  // 5. anchors
  const anchor = comparePaired(input.anchor.incumbent, input.anchor.candidate);
  const drops: Array<{ id: string; drop: number; tolerance: number }> = anchor.ids.map((id, index) => ({
    id,
    drop: -anchor.differences[index]!,
    tolerance: settings.anchorTolerance + settings.anchorK * (calibration.exampleSds[id] ?? 0) * differenceScale,
  }));
  const regressions = drops
    .filter((entry) => entry.drop > entry.tolerance + 1e-12)
    .map((entry) => ({ id: entry.id, drop: round(entry.drop), tolerance: round(entry.tolerance) }));
  const incumbentValidAnchors = new Set(perExampleMeans(input.anchor.incumbent).keys());
  const newlyInvalid = anchor.leftOut.filter((id) => incumbentValidAnchors.has(id));
  // The row shows the anchor closest to (or furthest past) its own tolerance: its drop and that tolerance.
  const closest = drops
    .filter((entry) => entry.drop > 1e-12)
    .sort(
      (left, right) => right.drop - right.tolerance - (left.drop - left.tolerance) || left.id.localeCompare(right.id),
    )[0];
  const anchorsPassed = regressions.length === 0 && newlyInvalid.length === 0;
  checks.push({
    name: 'anchors',
    passed: anchorsPassed,
    statistic: closest === undefined ? 0 : round(Math.max(0, closest.drop)),
    threshold: closest === undefined ? settings.anchorTolerance : round(closest.tolerance),
    detail: anchorsPassed
      ? `no anchor regressed (${closest === undefined ? 'none dropped' : `closest to its tolerance: ${closest.id}, drop ${round(closest.drop)} ≤ ${round(closest.tolerance)}`}; Δanchor = ${round(anchor.delta)})`
      : `anchor regression: ${[...regressions.map((regression) => `${regression.id} −${regression.drop} > tolerance ${regression.tolerance}`), ...newlyInvalid.map((id) => `${id} became invalid`)].join(', ')}`,
    data: { regressions, newlyInvalid, delta: anchor.delta, closest: closest?.id ?? null },
  });
  if (!anchorsPassed) return refuse('anchor_regression');

  // 6. shadow (src/gate/shadow-check.ts)
  const shadowScores = await input.evaluateShadow({ optimizationDelta: optimization.delta });
  if (shadowScores.stoppedEarly !== undefined) {
    // A raced shadow stopped for futility: it cannot confirm the gain (a refusal only, never an acceptance).
    // Positive so far but out of reach of the test: not confirmed; flat or falling: specialization.
    const stopped = shadowScores.stoppedEarly;
    const raced = (stopped.data.racing as { delta?: unknown } | undefined)?.delta;
    const reason: RefusalReason = typeof raced === 'number' && raced > 1e-12 ? 'not_confirmed' : 'specialization';
    const label = reason === 'not_confirmed' ? 'not confirmed' : 'specialization';
    checks.push({
      name: 'shadow',
      passed: false,
      statistic: round(stopped.statistic),
      threshold: round(stopped.threshold),
      detail: `${label}: ${stopped.detail}`,
      data: stopped.data,
    });
    return refuse(reason, true);
  }
  const shadow = shadowCheck({
    incumbent: shadowScores.incumbent,
    candidate: shadowScores.candidate,
    optimizationDelta: optimization.delta,
    optimizationIds: [...optimization.ids, ...optimization.leftOut],
    calibration,
    stochastic: input.stochastic === true,
    outcome: input.outcome,
    settings,
  });
  checks.push(shadow.check);
  if (shadow.reason !== null) return refuse(shadow.reason, true);
  return { accepted: true, checks, shadowConsulted: true };
}
