/**
 * The shared types of an online study's statistics: what the notebook
 * aggregates per arm, what the online gate reads, and the typed decision it
 * returns with the evidence of every check (the style of src/gate/gate.ts).
 *
 * Note for the code that builds the gate's input (storage, CLI, loop):
 *
 * - aggregate per arm and per metric the units **whose attribution window
 *   has closed** into {@link ArmStatistics}: `units` (analysed units),
 *   `sum` and `sumOfSquares` of the per-unit values (binary: 0/1 per unit, so
 *   `sum` = units with the outcome and `sumOfSquares` = `sum`; continuous:
 *   the sum of the unit's outcomes within its window, 0 when it had none);
 * - a unit belongs to one window: the decision window (the units the
 *   proposer may learn from) or, once the primary and the guardrails passed,
 *   the confirmation window (fresh units exposed after that look, whose
 *   outcomes the proposer never sees). When {@link OnlineGateDecision}
 *   continues with `waitingFor: 'confirmation'` for the first time, freeze
 *   the decision window's statistics as they were at that look and route
 *   every later unit to the confirmation window;
 * - `assignments` counts every assigned unit (closed window or not), per
 *   period of constant split (one period per ramp step), for the
 *   sample-ratio-mismatch check;
 * - feed the decision's always-valid p-values back as `previousPValues` on
 *   the next look (`alwaysValidPValues(decision)` in src/online/gate/ gives
 *   them, keyed `srm`, `primary` and `harm:<metric>`): an always-valid
 *   p-value is the minimum over looks (omit them and the gate uses the
 *   current look only, which is valid and a little more conservative);
 * - τ comes from the A/A calibration: `calibrationTau(calibrations, metric)`
 *   in src/online/gate/ (the rolling maximum of the per-unit noise SD);
 * - the gate: `decideOnline(input, settings)` in
 *   src/online/gate/online-gate.ts, pure and synchronous;
 *   `DEFAULT_ONLINE_GATE_SETTINGS` (src/online/gate/online-gate-settings.ts) holds every default, once.
 *
 * Metric directions are `increase` / `decrease` (better is higher / lower),
 * as `metrics:` in kloop.yaml spells them (src/online/config.ts). Every
 * difference the gate reports, Δ, is oriented so that positive is better
 * for the candidate: Δ = mean(candidate) − mean(incumbent) for `increase`,
 * mean(incumbent) − mean(candidate) for `decrease`.
 *
 * @module
 */
export type { ArmPair, ArmStatistics, AssignmentPeriod } from '../stats/arm-statistics.ts';
import type { ArmPair, ArmStatistics, AssignmentPeriod } from '../stats/arm-statistics.ts';

/** `binary`: a unit's value is 0 or 1 (did it reply?); `continuous`: a real number per unit (revenue). */
export type OnlineMetricKind = 'binary' | 'continuous';

/** Which way is better: `increase` (higher is better) or `decrease` (lower is better). */
export type OnlineMetricDirection = 'increase' | 'decrease';

/** A metric of an online study, as `metrics:` in kloop.yaml defines it. */
export interface OnlineMetric {
  readonly name: string;
  readonly kind: OnlineMetricKind;
  readonly direction: OnlineMetricDirection;
}

/**
 * A guardrail: a metric the candidate may not make worse by `margin` or
 * more (non-inferiority). The margin is **absolute**, in the metric's own
 * units per unit (0.004 = 0.4 percentage points of unsubscribe rate), as
 * kloop.yaml states it: an absolute margin means the same thing at every
 * base rate and needs no estimate of the incumbent's mean to apply.
 */
export interface OnlineGuardrail {
  readonly metric: OnlineMetric;
  /** Non-inferiority margin, ≥ 0, in the metric's units per unit. */
  readonly margin: number;
}

/** A guardrail with its statistics on the decision window. */
export interface GuardrailObservation {
  readonly guardrail: OnlineGuardrail;
  readonly arms: ArmPair;
}

/** What the online gate reads at one look. */
export interface OnlineGateInput {
  /** The primary metric and its statistics on the decision window. */
  readonly primary: { readonly metric: OnlineMetric; readonly arms: ArmPair };
  /** The guardrails and their statistics (decision window; the caller may add the confirmation window's units). */
  readonly guardrails: readonly GuardrailObservation[];
  /** Assignment counts per period of constant split (every assigned unit). */
  readonly assignments: readonly AssignmentPeriod[];
  /** The primary metric on the confirmation window's fresh units; absent until that window opens. */
  readonly confirmation?: ArmPair;
  /** How many looks the experiment has had, this one included (an integer ≥ 1). */
  readonly looks: number;
  /** Always-valid p-values of earlier looks (their running minimum), keyed `srm`, `primary`, `harm:<metric>`; default none. */
  readonly previousPValues?: Readonly<Record<string, number>>;
  /** True when the experiment may receive no more units (its traffic budget is spent). Default false. */
  readonly budgetExhausted?: boolean;
}

/** The online gate's settings; defaults and their reasons in `DEFAULT_ONLINE_GATE_SETTINGS`. */
export interface OnlineGateSettings {
  /** Level of the anytime-valid tests of the primary metric and of the harm stop, in (0, 1). */
  readonly alpha: number;
  /** Level of the confirmation window's one-sided fixed-horizon test, in (0, 1). */
  readonly shadowAlpha: number;
  /** Refuse as `srm` when the assignment counts fit the split with an always-valid p below this. */
  readonly srmAlpha: number;
  /**
   * τ: the A/A calibration's per-unit noise SD of the primary metric (the
   * rolling maximum over recent calibrations, metric units per unit; see
   * `calibrationTau` in src/online/gate/); 0 without a calibration. The
   * primary's Δ must exceed `thresholdK` × τ × √(1/n_c + 1/n_i): the
   * offline gate's margin (src/gate/gate.ts, check 3) scaled to a
   * difference of two arm means.
   */
  readonly tau: number;
  /** k of the margin k × τ × √(1/n_c + 1/n_i). */
  readonly thresholdK: number;
  /** Analysed units per arm before the primary metric is judged (an integer ≥ 2). */
  readonly minUnitsPerArm: number;
  /** Fresh units per arm the confirmation window needs (an integer ≥ 2). */
  readonly confirmationUnits: number;
  /** Units per arm after which the decision window is spent (`not_significant`); Infinity for none. */
  readonly maxUnitsPerArm: number;
  /** The candidate's configured share of assignments, in (0, 1). */
  readonly split: number;
  /**
   * The mixture SPRT's mixing standard deviation, in per-unit standard
   * deviations (a standardized effect size, Cohen's d): τ_mix = this × the
   * pooled per-unit SD. See src/online/statistics/msprt.ts.
   */
  readonly mixingEffectSize: number;
  /** The SRM check's mixing SD of the candidate share's deviation (src/online/statistics/sample-ratio-mismatch.ts), > 0. */
  readonly srmMixingShareSd: number;
}

/** Why the online gate refused a candidate. */
export type OnlineRefusalReason =
  /** Sample-ratio mismatch: assignment or logging is broken; the experiment is invalid, never a result. */
  | 'srm'
  /** A guardrail was significantly worse at some look (harm stop). */
  | 'harm'
  /** The primary metric did not show a gain above τ before the unit budget was spent. */
  | 'not_significant'
  /** A guardrail's non-inferiority could not be shown within its margin. */
  | 'anchor_regression'
  /** The confirmation window shows no gain (Δ ≤ 0). */
  | 'specialization'
  /** The confirmation window's gain is positive but not significant at shadowAlpha. */
  | 'not_confirmed';

/** Every online refusal reason, in the gate's order. */
export const ONLINE_REFUSAL_REASONS: readonly OnlineRefusalReason[] = [
  'srm',
  'harm',
  'not_significant',
  'anchor_regression',
  'specialization',
  'not_confirmed',
];

/** The online gate's checks, in order. */
export type OnlineCheckName = 'srm' | 'harm' | 'minimum_units' | 'primary' | 'guardrails' | 'confirmation';

/** A check's verdict: it passed, it failed (a refusal), or it needs more units (continue). */
export type OnlineVerdict = 'pass' | 'fail' | 'wait';

/** The evidence of one check of the online gate. */
export interface OnlineCheck {
  readonly name: OnlineCheckName;
  readonly verdict: OnlineVerdict;
  /** The check's statistic (χ², Δ, units, ...), null when not numeric. */
  readonly statistic: number | null;
  /** What the statistic was compared with. */
  readonly threshold: number | null;
  /** The (always-valid or fixed-horizon) p-value that decided, when there is one. */
  readonly pValue?: number;
  /** A confidence interval (or confidence sequence at this look) for Δ, when there is one. */
  readonly interval?: { readonly lower: number; readonly upper: number; readonly level: number };
  /** One-sentence account, readable in reports. */
  readonly detail: string;
  /** Extra evidence (test name, per-arm means, per-guardrail results). */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** The online gate's decision at one look. */
export type OnlineGateDecision =
  | { readonly outcome: 'accept'; readonly checks: readonly OnlineCheck[] }
  | { readonly outcome: 'refuse'; readonly reason: OnlineRefusalReason; readonly checks: readonly OnlineCheck[] }
  | { readonly outcome: 'continue'; readonly waitingFor: OnlineCheckName; readonly checks: readonly OnlineCheck[] };
