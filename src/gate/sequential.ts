/**
 * Early acceptance on the optimization partition (`gate.racing.earlyAcceptance`):
 * a group-sequential test whose false-accept rate stays at most α over the
 * looks actually taken.
 *
 * **Looks.** A raced candidate's optimization example-repeats come
 * repeat-major (src/gate/racing/race-plan.ts): after k complete repeats it
 * has k run-level composites. A look is taken at the end of each complete
 * repeat k with 2 ≤ k < R (an interim look), at information time t = k/R;
 * the final look is the full evaluation (k = R, t = 1).
 *
 * **Levels (α-spending).** Look j is judged at level aⱼ = α*(tⱼ) − α*(tⱼ₋₁),
 * the increment of a spending function α* between the previous look taken
 * and this one (α*(t₀) = 0); the final look at α − (what the interim looks
 * taken spent). So Σ aⱼ ≤ α over the looks actually taken, whichever they
 * were (a look skipped — a repeat with a transient failure, a candidate
 * stopped — spends nothing; the next one takes what was left, as in
 * Lan & DeMets 1983). Two spending rules:
 *
 * - `obrien-fleming`: α*(t) = 2 − 2Φ(z₁₋α/₂ / √t), O'Brien–Fleming-type
 *   (Lan & DeMets 1983, eq. 3); at α = 0.05, α*(0.4) = 0.00194,
 *   α*(0.6) = 0.01140, α*(0.8) = 0.02843 (scipy.stats.norm, below in the
 *   tests);
 * - `haybittle-peto`: every interim look at 0.001 (Haybittle 1971; Peto et
 *   al. 1976), the final look at α − 0.001 × (interim looks taken).
 *
 * **The bound is a union bound** (Bonferroni over the spending increments):
 * a candidate with no true gain is accepted only when some look passes, so
 * P(false accept) ≤ Σⱼ P(look j passes) ≤ Σⱼ aⱼ ≤ α, whatever the correlation
 * between the looks — no assumption of the Brownian-motion structure the
 * exact group-sequential boundaries (Armitage, McPherson & Rowe 1969) need,
 * which the tests here (t-tests with estimated variances, Welch's test on a
 * handful of runs) only approximately have. The price is conservatism: the
 * looks are strongly correlated, so the true rate is below α.
 *
 * **The test at a look** (`test`): the gate's own checks with R_c = k — the
 * margin τ·√(1/k + 1/R_i) and the significance check at the look's level:
 *
 * - `gate`: the paired t-test on per-example means and Welch's t-test on
 *   the k run-level composites (both, as the final gate); Welch's test with
 *   k = 2 or 3 runs has 1–3 degrees of freedom and rarely passes a small
 *   level;
 * - `shared-variance`: one paired t-test whose variance carries the noise
 *   shared by a run's examples, t = d̄ / √(s_d²/n + σ_u²·(1/k + 1/R_i)),
 *   df = n − 1, σ_u² from calibration (an upper estimate: the rolling maximum
 *   of the run-level SD) — the shadow check's test (src/gate/shadow-check.ts,
 *   Searle, Casella & McCulloch 1992, §3). Its level is exact under the
 *   normal model when σ_u² is at least the true shared variance.
 *
 * The final look keeps the gate's paired and Welch tests, at the level left.
 * An early pass ends the optimization evaluation only: anchors and the
 * shadow are evaluated and judged in full, as without it.
 *
 * @module
 */
import { normalCdf, studentTCdf } from '../stats/distributions.ts';
import { normalQuantile, standardError } from '../stats/index.ts';
import type { GateCalibration, GateCheck, GateInput, GateSettings } from './gate.ts';
import { marginCheck, significanceCheck } from './gate-checks.ts';
import type { PairedComparison } from './paired-comparison.ts';
import { round } from './paired-comparison.ts';
import { sharedRunVariance } from './shadow-check.ts';

/** The spending rule of early acceptance; `off`: no interim look. */
export type EarlyAcceptanceRule = 'off' | 'obrien-fleming' | 'haybittle-peto';

/** The test at an interim look (see the module comment). */
export type EarlyAcceptanceTest = 'gate' | 'shared-variance';

/** The level of every interim look under `haybittle-peto`. */
export const HAYBITTLE_PETO_LEVEL = 0.001;

/**
 * O'Brien–Fleming-type spending function of Lan & DeMets (1983):
 * α*(t) = 2 − 2Φ(z₁₋α/₂ / √t), the cumulative level spent by information
 * time t ∈ (0, 1]; α*(1) = α. 0 for t ≤ 0.
 */
export function obrienFlemingSpending(t: number, alpha: number): number {
  if (!(t > 0)) return 0;
  if (t >= 1) return alpha;
  return 2 - 2 * normalCdf(normalQuantile(1 - alpha / 2) / Math.sqrt(t), 0, 1);
}

/**
 * The level of an interim look at information time `t` (k/R), given what
 * the looks taken before it spent: the spending increment (never below 0).
 * 0 under `off`.
 */
export function interimLevel(rule: EarlyAcceptanceRule, t: number, alpha: number, spent: number): number {
  if (rule === 'off') return 0;
  if (rule === 'haybittle-peto') return Math.max(0, Math.min(HAYBITTLE_PETO_LEVEL, alpha - spent));
  return Math.max(0, obrienFlemingSpending(t, alpha) - spent);
}

/** The level of the final look: α less what the interim looks taken spent (never below 0). */
export function finalLevel(alpha: number, spent: number): number {
  return Math.max(0, alpha - spent);
}

/** One look of the sequential test, as stored in the race evidence (`looks`). */
export interface SequentialLook {
  /** Complete repeats at the look (k), of R. */
  repeats: number;
  of: number;
  /** The level of this look (the spending increment). */
  level: number;
  /** The level spent by the looks up to and including this one. */
  spent: number;
  /** The look's one-sided p-value (the larger of the paired and Welch p-values under `gate`). */
  pValue: number;
  /** Δoptimization at the look and the margin it had to exceed. */
  delta: number;
  margin: number;
  passed: boolean;
}

/** How the gate judges the optimization partition at a look: the level and the test (`GateInput.sequential`). */
export interface SequentialJudgement {
  level: number;
  test: EarlyAcceptanceTest;
}

/**
 * The significance check at a look: the gate's (paired + Welch) at `level`,
 * or the paired t-test with the run-shared variance (see the module comment).
 */
export function sequentialSignificanceCheck(
  input: GateInput,
  settings: Readonly<GateSettings>,
  calibration: GateCalibration,
  optimization: PairedComparison,
  judgement: SequentialJudgement,
): GateCheck {
  if (judgement.test === 'gate') {
    const check = significanceCheck(input, { ...settings, alpha: judgement.level }, optimization);
    return { ...check, data: { ...check.data, sequential: judgement } };
  }
  const { candidate, incumbent } = input.optimization;
  const shared = sharedRunVariance({
    calibration,
    optimizationIds: [...optimization.ids, ...optimization.leftOut],
    incumbent,
    candidate,
    stochastic: input.stochastic === true,
  });
  const n = optimization.differences.length;
  const pairedSe = n >= 2 ? standardError(optimization.differences) : 0;
  const scale = 1 / Math.max(1, candidate.repeats) + 1 / Math.max(1, incumbent.repeats);
  const se = Math.sqrt(pairedSe ** 2 + shared.variance * scale);
  const df = Math.max(1, n - 1);
  const t = se > 0 ? optimization.delta / se : optimization.delta > 0 ? Infinity : 0;
  const pValue = n < 2 ? 1 : se > 0 ? studentTCdf(-t, df) : optimization.delta > 0 ? 0 : 1;
  const passed = pValue < judgement.level;
  return {
    name: 'significance',
    passed,
    statistic: round(pValue),
    threshold: judgement.level,
    detail: `paired t-test with the run-shared noise (σ_u² = ${round(shared.variance)} from ${shared.source}, ${candidate.repeats} vs ${incumbent.repeats} runs): t = ${round(t)}, df = ${df}, p = ${round(pValue)} ${passed ? '<' : '≥'} the look's level ${round(judgement.level)}`,
    data: {
      test: 'paired t-test with the run-shared noise, one-sided, per-example composites',
      t,
      df,
      pValue,
      sharedRunVariance: shared.variance,
      sharedRunVarianceFrom: shared.source,
      sequential: judgement,
    },
  };
}

/**
 * One interim look: the gate's margin (R_c = the candidate's repeats so far)
 * and the significance check at the look's level, on the candidate's partial
 * optimization evaluation against the incumbent's.
 */
export function optimizationLook(
  input: Pick<GateInput, 'optimization' | 'calibration' | 'stochastic' | 'outcome'>,
  settings: Readonly<GateSettings>,
  judgement: SequentialJudgement,
): { passed: boolean; pValue: number; delta: number; margin: number; checks: GateCheck[] } {
  const calibration = input.calibration ?? { noiseSd: 0, exampleSds: {} };
  const gateInput = input as GateInput;
  const margin = marginCheck(gateInput, settings, calibration);
  const significance = sequentialSignificanceCheck(gateInput, settings, calibration, margin.optimization, judgement);
  return {
    passed: margin.check.passed && significance.passed,
    pValue: significance.statistic ?? 1,
    delta: margin.optimization.delta,
    margin: margin.check.threshold ?? 0,
    checks: [margin.check, significance],
  };
}

/** z₁₋ₐ of a level (for reports): the normal critical value of a one-sided test at `level`. */
export function criticalZ(level: number): number {
  return level > 0 && level < 1 ? normalQuantile(1 - level) : Infinity;
}
