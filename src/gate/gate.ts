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
 *                   run-level composites; with early acceptance
 *                   (`GateInput.sequential`, src/gate/sequential.ts) at the
 *                   level of the look instead of α;
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
import {
  anchorsCheck,
  constraintsCheck,
  marginCheck,
  racedShadowCheck,
  significanceCheck,
  validityCheck,
} from './gate-checks.ts';
import { DEFAULT_GATE_SETTINGS } from './gate-defaults.ts';
import type { SequentialJudgement } from './sequential.ts';
import { sequentialSignificanceCheck } from './sequential.ts';
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
  /**
   * Repeats the per-example SDs were measured over (`gate.noiseRepeats` of
   * the newest calibration). Adaptive repeats (src/gate/noise-free.ts) call an
   * example noise-free only with ≥ 3 of them; absent: none is.
   */
  noiseRepeats?: number;
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
  /**
   * A look of the sequential test of early acceptance (src/gate/sequential.ts):
   * the significance check runs at this level and with this test instead of
   * at `alpha` — an interim look on the candidate's first k repeats, or the
   * final look at what the interim looks left. Absent: `alpha`, paired + Welch.
   */
  sequential?: SequentialJudgement;
}

export type { PairedComparison, PairedTestName, PairedTestResult } from './paired-comparison.ts';
export { comparePaired, invalidRose, pairedTest } from './paired-comparison.ts';

/**
 * Runs the checks in order and returns the decision with its evidence (the
 * first failing check names the refusal; the shadow is evaluated only when
 * checks 1–5 pass). The checks are src/gate/gate-checks.ts and
 * src/gate/shadow-check.ts.
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
  const passes = (check: GateCheck): boolean => {
    checks.push(check);
    return check.passed;
  };
  if (!passes(constraintsCheck(input))) return refuse('constraint');
  if (!passes(validityCheck(input, settings))) return refuse('invalid');
  const margin = marginCheck(input, settings, calibration);
  if (!passes(margin.check)) return refuse('below_margin');
  const { optimization, differenceScale } = margin;
  const significance =
    input.sequential === undefined
      ? significanceCheck(input, settings, optimization)
      : sequentialSignificanceCheck(input, settings, calibration, optimization, input.sequential);
  if (!passes(significance)) return refuse('not_significant');
  // After an early look the optimization has k < R repeats; the anchors are evaluated in full: their own repeats scale them.
  const anchorScale =
    input.sequential === undefined
      ? differenceScale
      : Math.sqrt(1 / Math.max(1, input.anchor.candidate.repeats) + 1 / Math.max(1, input.anchor.incumbent.repeats));
  if (!passes(anchorsCheck(input, settings, calibration, anchorScale))) return refuse('anchor_regression');

  // 6. shadow (src/gate/shadow-check.ts)
  const shadowScores = await input.evaluateShadow({ optimizationDelta: optimization.delta });
  if (shadowScores.stoppedEarly !== undefined) {
    const raced = racedShadowCheck(shadowScores.stoppedEarly);
    checks.push(raced.check);
    return refuse(raced.reason, true);
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
