/**
 * The gate's checks 1–5 and a raced shadow's refusal, one function each:
 * each returns the check's evidence (`passed`, the statistic, the threshold,
 * a one-sentence detail and its data); {@link decide} (src/gate/gate.ts)
 * runs them in order, and the first failing one names the refusal. The
 * shadow check is src/gate/shadow-check.ts. See src/gate/gate.ts's module
 * comment for what each check tests and why.
 *
 * @module
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import { fisherExactTest, welchTTest } from '../stats/index.ts';
import type { GateCalibration, GateCheck, GateInput, GateSettings, RefusalReason, ShadowPair } from './gate.ts';
import type { PairedComparison } from './paired-comparison.ts';
import { comparePaired, pairedTest, round } from './paired-comparison.ts';

/** 1. constraints: every mechanical invariant of the program holds. */
export function constraintsCheck(input: GateInput): GateCheck {
  return {
    name: 'constraints',
    passed: input.constraints.passed,
    statistic: input.constraints.violations.length,
    threshold: 0,
    detail: input.constraints.passed
      ? 'every mechanical constraint holds'
      : input.constraints.violations.map((violation) => `${violation.constraint}: ${violation.message}`).join('; '),
  };
}

/** 2. validity: the candidate has no more invalid outputs (counts), or for a stochastic executor no significantly higher invalid rate (Fisher's exact test at α). Transient failures are not counted. */
export function validityCheck(input: GateInput, settings: Readonly<GateSettings>): GateCheck {
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
    return {
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
    };
  }
  const validityPassed = candidateInvalid <= incumbentInvalid;
  return {
    name: 'validity',
    passed: validityPassed,
    statistic: candidateInvalid,
    threshold: incumbentInvalid,
    detail: `${candidateInvalid} invalid outputs (incumbent ${incumbentInvalid}) on optimization and anchor`,
  };
}

/** 3. margin: Δoptimization > τ·√(1/R_c + 1/R_i). Returns the check, the paired optimization scores and √(1/R_c + 1/R_i). */
export function marginCheck(
  input: GateInput,
  settings: Readonly<GateSettings>,
  calibration: GateCalibration,
): { check: GateCheck; optimization: PairedComparison; differenceScale: number } {
  const optimization = comparePaired(input.optimization.incumbent, input.optimization.candidate);
  // The SD of a difference of two means of R_c and R_i runs is σ·√(1/R_c + 1/R_i) (√(2/R) when equal).
  const candidateRepeats = Math.max(1, input.optimization.candidate.repeats);
  const incumbentRepeats = Math.max(1, input.optimization.incumbent.repeats);
  const repeats = candidateRepeats === incumbentRepeats ? candidateRepeats : `${candidateRepeats}+${incumbentRepeats}`;
  const differenceScale = Math.sqrt(1 / candidateRepeats + 1 / incumbentRepeats);
  const tau = settings.thresholdK * calibration.noiseSd;
  const margin = tau * differenceScale;
  const marginPassed = optimization.delta > margin;
  const check: GateCheck = {
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
  };
  return { check, optimization, differenceScale };
}

/** 4. significance: the one-sided paired test at α on per-example composites; with ≥ 2 runs of a stochastic executor, also Welch's t-test on run-level composites (both must pass). */
export function significanceCheck(
  input: GateInput,
  settings: Readonly<GateSettings>,
  optimization: PairedComparison,
): GateCheck {
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
  return {
    name: 'significance',
    passed: significancePassed,
    statistic: round(decidingP),
    threshold: settings.alpha,
    detail,
    data,
  };
}

/** 5. anchors: no anchor example drops by more than its tolerance (anchorTolerance + anchorK × its SD × √(1/R_c + 1/R_i)); none turns invalid. */
export function anchorsCheck(
  input: GateInput,
  settings: Readonly<GateSettings>,
  calibration: GateCalibration,
  differenceScale: number,
): GateCheck {
  const anchor = comparePaired(input.anchor.incumbent, input.anchor.candidate);
  const sdOf = anchorSds(anchor.ids, calibration);
  const drops: Array<{ id: string; drop: number; tolerance: number }> = anchor.ids.map((id, index) => ({
    id,
    drop: -anchor.differences[index]!,
    tolerance: settings.anchorTolerance + settings.anchorK * sdOf(id) * differenceScale,
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
  return {
    name: 'anchors',
    passed: anchorsPassed,
    statistic: closest === undefined ? 0 : round(Math.max(0, closest.drop)),
    threshold: closest === undefined ? settings.anchorTolerance : round(closest.tolerance),
    detail: anchorsPassed
      ? `no anchor regressed (${closest === undefined ? 'none dropped' : `closest to its tolerance: ${closest.id}, drop ${round(closest.drop)} ≤ ${round(closest.tolerance)}`}; Δanchor = ${round(anchor.delta)})`
      : `anchor regression: ${[...regressions.map((regression) => `${regression.id} −${regression.drop} > tolerance ${regression.tolerance}`), ...newlyInvalid.map((id) => `${id} became invalid`)].join(', ')}`,
    data: { regressions, newlyInvalid, delta: anchor.delta, closest: closest?.id ?? null },
  };
}

/**
 * The SD an anchor's tolerance is a multiple of: its calibrated per-example
 * SD, floored at the anchors' pooled SD (the root mean square of their
 * calibrated SDs). A per-example SD is an estimate from `noiseRepeats`
 * draws, and for a sampled model whose answer to an example flips now and
 * then it is often exactly 0: an outcome that flips one time in ten shows no
 * flip in 8 draws 43% of the time (0.9⁸), and a tolerance of 0 then refuses
 * the first flip of a candidate's repeats as a regression. The pooled SD is
 * the noise an anchor of this partition has on average; an anchor whose own
 * calibrated SD is larger keeps its own. Without a calibration (every SD 0)
 * the tolerance is `anchorTolerance` alone, as before.
 */
export function anchorSds(ids: readonly string[], calibration: GateCalibration): (id: string) => number {
  const sds = ids.map((id) => calibration.exampleSds[id] ?? 0);
  const pooled = sds.length === 0 ? 0 : Math.sqrt(sds.reduce((sum, sd) => sum + sd * sd, 0) / sds.length);
  return (id) => Math.max(calibration.exampleSds[id] ?? 0, pooled);
}

/** 6. shadow, raced and stopped for futility: refused (`not_confirmed` when its gain so far was positive, else `specialization`), never confirmed on a partial shadow. */
export function racedShadowCheck(stopped: NonNullable<ShadowPair['stoppedEarly']>): {
  check: GateCheck;
  reason: RefusalReason;
} {
  // A raced shadow stopped for futility: it cannot confirm the gain (a refusal only, never an acceptance).
  // Positive so far but out of reach of the test: not confirmed; flat or falling: specialization.
  const raced = (stopped.data.racing as { delta?: unknown } | undefined)?.delta;
  const reason: RefusalReason = typeof raced === 'number' && raced > 1e-12 ? 'not_confirmed' : 'specialization';
  const label = reason === 'not_confirmed' ? 'not confirmed' : 'specialization';
  const check: GateCheck = {
    name: 'shadow',
    passed: false,
    statistic: round(stopped.statistic),
    threshold: round(stopped.threshold),
    detail: `${label}: ${stopped.detail}`,
    data: stopped.data,
  };
  return { check, reason };
}
