/**
 * The online gate: decides, at one look at a running online experiment,
 * whether the candidate replaces the incumbent, is refused, or needs more
 * units. Pure and synchronous; it returns a typed decision with the evidence
 * of every check it ran (the style of the offline gate, src/gate/gate.ts).
 *
 * Checks, in order (the first that fails names the refusal; the first that
 * waits makes the decision `continue`):
 *
 * 1. srm           — the assignment counts fit the split: Pearson's χ² over
 *                    the periods of constant split, refused as `srm` when its
 *                    always-valid p-value < srmAlpha (0.001): the experiment
 *                    is invalid, never a result
 *                    (src/online/statistics/sample-ratio-mismatch.ts);
 * 2. harm          — no guardrail is significantly worse at this or any
 *                    earlier look: the mixture SPRT's always-valid p-value
 *                    over the looks where it moved the wrong way < alpha → `harm`
 *                    (a harm stop, at any look, before any minimum);
 * 3. minimum_units — both arms have ≥ minUnitsPerArm analysed units of the
 *                    primary metric, else `continue`;
 * 4. primary       — the mixture SPRT (Johari et al., KDD 2017) rejects "no
 *                    difference" at alpha (always-valid p over the looks
 *                    where the candidate led < alpha; it leads now) with
 *                    Δ > thresholdK × τ × √(1/n_c + 1/n_i) (τ from the A/A
 *                    calibration); else `continue`, or `not_significant`
 *                    once the unit budget is spent (`budgetExhausted`, or
 *                    both arms at maxUnitsPerArm);
 * 5. guardrails    — non-inferiority: for every guardrail, the confidence
 *                    sequence's bound on how much worse the candidate is
 *                    stays below the guardrail's margin (absolute, metric
 *                    units); not shown yet → `continue` (the decision window
 *                    grows: a small sample cannot show non-inferiority, which
 *                    is no evidence of harm), not shown when the unit budget
 *                    is spent → `anchor_regression`;
 * 6. confirmation  — on the confirmation window's fresh units (exposed after
 *                    the look where checks 1–5 first passed; the proposer
 *                    never sees their outcomes), once both arms have
 *                    confirmationUnits: Δconfirm ≤ 0 → `specialization`;
 *                    a one-sided Welch t-test (candidate better) with
 *                    p ≥ shadowAlpha → `not_confirmed`; before that,
 *                    `continue`. This also refuses novelty effects that
 *                    fade: the decision window saw them, fresh units do not.
 *
 * Every Δ is oriented so that positive is better for the candidate (see
 * src/online/types.ts). Caveat on repeated testing: alpha bounds the false
 * accepts per experiment under any number of looks (checks 2 and 4 are
 * anytime-valid), not per study; the confirmation window is what protects
 * against the selection of lucky candidates.
 *
 * @module
 */
import { assertArmStatistics } from '../statistics/arm-moments.ts';
import type {
  ArmPair,
  OnlineCheck,
  OnlineCheckName,
  OnlineGateDecision,
  OnlineGateInput,
  OnlineGateSettings,
  OnlineMetric,
  OnlineRefusalReason,
} from '../types.ts';
import { DEFAULT_ONLINE_GATE_SETTINGS } from './online-gate-settings.ts';
import {
  budgetSpent,
  confirmationCheck,
  guardrailCheck,
  harmCheck,
  minimumUnitsCheck,
  primaryCheck,
  srmCheck,
} from './online-checks.ts';

export { DEFAULT_ONLINE_GATE_SETTINGS, calibrationTau } from './online-gate-settings.ts';

function assertInput(input: OnlineGateInput): void {
  const metrics: Array<[OnlineMetric, ArmPair | undefined, string]> = [
    [input.primary.metric, input.primary.arms, 'primary'],
    [input.primary.metric, input.confirmation, 'confirmation'],
    ...input.guardrails.map((observation, index): [OnlineMetric, ArmPair, string] => [
      observation.guardrail.metric,
      observation.arms,
      `guardrails[${index}]`,
    ]),
  ];
  for (const [metric, arms, label] of metrics) {
    if (arms === undefined) continue;
    assertArmStatistics(arms.incumbent, metric.kind, `${label}.incumbent`);
    assertArmStatistics(arms.candidate, metric.kind, `${label}.candidate`);
  }
  input.guardrails.forEach(({ guardrail }, index) => {
    if (!(Number.isFinite(guardrail.margin) && guardrail.margin >= 0))
      throw new RangeError(`guardrails[${index}].margin must be a finite number ≥ 0; got ${guardrail.margin}.`);
  });
  if (!(Number.isInteger(input.looks) && input.looks >= 1))
    throw new RangeError(`looks must be an integer ≥ 1; got ${input.looks}.`);
}

const REFUSAL_OF: Partial<Record<OnlineCheckName, OnlineRefusalReason>> = {
  srm: 'srm',
  harm: 'harm',
  primary: 'not_significant',
  guardrails: 'anchor_regression',
};

/**
 * Runs the online gate's checks in order at one look (see the module
 * comment) and returns `accept`, `refuse` with its reason, or `continue`
 * with the check that waits; every check run leaves its evidence.
 *
 * @throws RangeError on impossible statistics (negative units, a binary sum
 *   above its units, sumOfSquares below sum²/units), a negative margin or
 *   `looks` < 1
 */
export function decideOnline(
  input: OnlineGateInput,
  settings: Readonly<OnlineGateSettings> = DEFAULT_ONLINE_GATE_SETTINGS,
): OnlineGateDecision {
  assertInput(input);
  const checks: OnlineCheck[] = [];
  const steps: Array<(input: OnlineGateInput, settings: Readonly<OnlineGateSettings>) => OnlineCheck> = [
    srmCheck,
    harmCheck,
    minimumUnitsCheck,
    primaryCheck,
    guardrailCheck,
    confirmationCheck,
  ];
  for (const step of steps) {
    const check = step(input, settings);
    checks.push(check);
    if (check.verdict === 'wait') {
      if (check.name === 'minimum_units' && budgetSpent(input, settings))
        return { outcome: 'refuse', reason: 'not_significant', checks };
      return { outcome: 'continue', waitingFor: check.name, checks };
    }
    if (check.verdict === 'fail') {
      const reason =
        check.name === 'confirmation'
          ? check.data?.gained === true
            ? 'not_confirmed'
            : 'specialization'
          : REFUSAL_OF[check.name]!;
      return { outcome: 'refuse', reason, checks };
    }
  }
  return { outcome: 'accept', checks };
}

/**
 * The always-valid p-values of a decision, keyed as `previousPValues` wants
 * them on the next look (`srm`, `primary`, `harm:<metric>`).
 */
export function alwaysValidPValues(decision: OnlineGateDecision): Record<string, number> {
  const values: Record<string, number> = {};
  for (const check of decision.checks) {
    const key = check.data?.pValueKey;
    if (typeof key === 'string' && check.pValue !== undefined) values[key] = check.pValue;
    if (check.name === 'harm') {
      for (const guardrail of (check.data?.guardrails ?? []) as Array<{ pValueKey: string; pValue: number }>)
        values[guardrail.pValueKey] = guardrail.pValue;
    }
  }
  return values;
}
