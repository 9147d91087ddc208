import { describe, expect, it } from 'vitest';
import type { ArmStatistics, OnlineGateDecision, OnlineGateInput, OnlineGuardrail } from '../types.ts';
import { alwaysValidPValues, calibrationTau, decideOnline, DEFAULT_ONLINE_GATE_SETTINGS } from './online-gate.ts';

const binary = (units: number, sum: number): ArmStatistics => ({ units, sum, sumOfSquares: sum });
const replyRate = { name: 'reply_rate', kind: 'binary', direction: 'increase' } as const;
const unsubscribes: OnlineGuardrail = {
  metric: { name: 'unsubscribe_rate', kind: 'binary', direction: 'decrease' },
  margin: 0.004,
};

/** A 5.0% → 6.2% reply rate on 20 000 units per arm, unsubscribes 0.50% → 0.52%, a fair split. */
const BASE: OnlineGateInput = {
  primary: { metric: replyRate, arms: { incumbent: binary(20_000, 1000), candidate: binary(20_000, 1240) } },
  guardrails: [{ guardrail: unsubscribes, arms: { incumbent: binary(20_000, 100), candidate: binary(20_000, 104) } }],
  assignments: [{ incumbent: 20_100, candidate: 19_950 }],
  looks: 12,
};

const summary = (decision: OnlineGateDecision) => ({
  outcome: decision.outcome,
  ...(decision.outcome === 'refuse' ? { reason: decision.reason } : {}),
  ...(decision.outcome === 'continue' ? { waitingFor: decision.waitingFor } : {}),
  checks: decision.checks.map((check) => [check.name, check.verdict]),
});

describe('decideOnline', () => {
  it('passes SRM, harm, minimum units, primary and guardrails, then waits for the confirmation window', () => {
    const decision = decideOnline(BASE);
    expect(summary(decision)).toEqual({
      outcome: 'continue',
      waitingFor: 'confirmation',
      checks: [
        ['srm', 'pass'],
        ['harm', 'pass'],
        ['minimum_units', 'pass'],
        ['primary', 'pass'],
        ['guardrails', 'pass'],
        ['confirmation', 'wait'],
      ],
    });
    const primary = decision.checks[3]!;
    // The paper's Λ by hand: V = .05·.95/20000 + .062·.938/20000, τ = 0.05·√((.0475 + .058156)/2).
    const v = (0.05 * 0.95 + 0.062 * 0.938) / 20_000;
    const tau2 = (0.05 * 0.05 * (0.05 * 0.95 + 0.062 * 0.938)) / 2;
    const expectedP = 1 / (Math.sqrt(v / (v + tau2)) * Math.exp((tau2 * 0.012 * 0.012) / (2 * v * (v + tau2))));
    expect(primary.pValue).toBeCloseTo(expectedP, 15);
    expect(primary.pValue).toBeCloseTo(0.00001037729559382909, 15);
    expect(primary.statistic).toBe(0.012);
    expect(primary.interval).toEqual({ lower: 0.004871, upper: 0.019129, level: 0.95 });
    expect(decision.checks[4]).toMatchObject({ statistic: 0.002409, threshold: 0.004 });
    expect(decision.checks[0]).toMatchObject({ statistic: 1, threshold: 0.001, pValue: 1 });
    // scipy.stats.chisquare([20100, 19950], [20025, 20025]) → statistic=0.5617977528089888, pvalue=0.45353680622870707
    expect(decision.checks[0]!.data?.chiSquare).toBeCloseTo(0.5617977528089888, 12);
    expect(decision.checks[0]!.data?.fixedPValue).toBeCloseTo(0.45353680622870707, 12);
  });

  it('accepts when the fresh units confirm (Welch one-sided, scipy: p = 0.00030002780691567953)', () => {
    // scipy.stats.ttest_ind_from_stats(500/8000, sd, 8000, 400/8000, sd, 8000, equal_var=False, alternative='greater')
    const decision = decideOnline({
      ...BASE,
      confirmation: { incumbent: binary(8000, 400), candidate: binary(8000, 500) },
    });
    expect(decision.outcome).toBe('accept');
    expect(decision.checks[5]!.pValue).toBeCloseTo(0.00030002780691567953, 15);
  });

  it('refuses as not_confirmed a positive but unproven confirmation (scipy: p = 0.2366882854618508)', () => {
    const decision = decideOnline({
      ...BASE,
      confirmation: { incumbent: binary(8000, 400), candidate: binary(8000, 420) },
    });
    expect(decision).toMatchObject({ outcome: 'refuse', reason: 'not_confirmed' });
    expect(decision.checks[5]!.pValue).toBeCloseTo(0.2366882854618508, 14);
  });

  it('refuses as specialization a confirmation window with no gain (Δ ≤ 0)', () => {
    const flat = decideOnline({
      ...BASE,
      confirmation: { incumbent: binary(8000, 400), candidate: binary(8000, 400) },
    });
    expect(flat).toMatchObject({ outcome: 'refuse', reason: 'specialization' });
    expect(flat.checks[5]).toMatchObject({ statistic: 0, threshold: 0 });
    expect(
      decideOnline({ ...BASE, confirmation: { incumbent: binary(8000, 400), candidate: binary(8000, 380) } }),
    ).toMatchObject({ outcome: 'refuse', reason: 'specialization' });
    // Not enough fresh units yet: wait.
    expect(
      summary(decideOnline({ ...BASE, confirmation: { incumbent: binary(7999, 400), candidate: binary(8000, 380) } })),
    ).toMatchObject({ outcome: 'continue', waitingFor: 'confirmation' });
  });

  it('refuses as srm a split that does not fit, before anything else (scipy: χ² = 40.816326530612244)', () => {
    const decision = decideOnline({ ...BASE, assignments: [{ incumbent: 50_000, candidate: 48_000 }] });
    expect(summary(decision)).toEqual({ outcome: 'refuse', reason: 'srm', checks: [['srm', 'fail']] });
    expect(decision.checks[0]).toMatchObject({ threshold: 0.001 });
    expect(decision.checks[0]!.data?.chiSquare).toBeCloseTo(40.816326530612244, 9);
    expect(decision.checks[0]!.data?.fixedPValue).toBeCloseTo(1.6723011081609717e-10, 20);
    expect(decision.checks[0]!.pValue).toBeCloseTo(2.980035736319385e-8, 20);
  });

  it('stops for harm when a guardrail is significantly worse, even below the minimum units', () => {
    const decision = decideOnline({
      ...BASE,
      primary: { metric: replyRate, arms: { incumbent: binary(500, 25), candidate: binary(500, 40) } },
      guardrails: [{ guardrail: unsubscribes, arms: { incumbent: binary(5000, 25), candidate: binary(5000, 70) } }],
    });
    expect(summary(decision)).toEqual({
      outcome: 'refuse',
      reason: 'harm',
      checks: [
        ['srm', 'pass'],
        ['harm', 'fail'],
      ],
    });
    expect(decision.checks[1]).toMatchObject({ threshold: 0.05 });
    expect((decision.checks[1]!.data!.guardrails as Array<{ delta: number }>)[0]!.delta).toBeCloseTo(-0.009, 12);
    expect(decision.checks[1]!.pValue).toBeCloseTo(0.0002471620581130379, 15);
  });

  it('waits for the minimum units, then for significance; refuses not_significant once the budget is spent', () => {
    const few = {
      ...BASE,
      primary: { metric: replyRate, arms: { incumbent: binary(600, 30), candidate: binary(590, 40) } },
    };
    expect(summary(decideOnline(few))).toMatchObject({ outcome: 'continue', waitingFor: 'minimum_units' });
    expect(summary(decideOnline({ ...few, budgetExhausted: true }))).toMatchObject({
      outcome: 'refuse',
      reason: 'not_significant',
    });
    const small = {
      ...BASE,
      primary: { metric: replyRate, arms: { incumbent: binary(20_000, 1000), candidate: binary(20_000, 1080) } },
    };
    const waiting = decideOnline(small);
    expect(summary(waiting)).toMatchObject({ outcome: 'continue', waitingFor: 'primary' });
    expect(waiting.checks[3]).toMatchObject({
      statistic: 0.004,
      pValue: 1,
      interval: { lower: -0.002886, upper: 0.010886, level: 0.95 },
    });
    expect(summary(decideOnline({ ...small, budgetExhausted: true }))).toMatchObject({
      outcome: 'refuse',
      reason: 'not_significant',
    });
    expect(summary(decideOnline(small, { ...DEFAULT_ONLINE_GATE_SETTINGS, maxUnitsPerArm: 20_000 }))).toMatchObject({
      outcome: 'refuse',
      reason: 'not_significant',
    });
  });

  it('holds a significant primary to the margin τ from the A/A calibration', () => {
    // τ = 0.5 per unit (an A/A that measured far more noise than the arms show): margin 0.5·√(2/20000) = 0.005.
    const withTau = decideOnline(BASE, { ...DEFAULT_ONLINE_GATE_SETTINGS, tau: 0.5 });
    expect(withTau.checks[3]).toMatchObject({ verdict: 'pass', statistic: 0.012, threshold: 0.005 });
    const strict = decideOnline(BASE, { ...DEFAULT_ONLINE_GATE_SETTINGS, tau: 0.5, thresholdK: 3 });
    expect(strict.checks[3]).toMatchObject({ verdict: 'wait', threshold: 0.015 });
    expect(
      calibrationTau(
        [
          { incumbent: binary(1000, 50), candidate: binary(1000, 60) },
          { incumbent: binary(1000, 40), candidate: binary(1000, 40) },
          { incumbent: binary(1, 1), candidate: binary(1, 0) },
        ],
        replyRate,
      ),
    ).toBeCloseTo(Math.sqrt((0.05 * 0.95 + 0.06 * 0.94) / 2), 15);
    expect(calibrationTau([], replyRate)).toBe(0);
  });

  it('waits while a guardrail’s non-inferiority is not shown, and refuses it as anchor_regression once the budget is spent', () => {
    const tight = {
      ...BASE,
      guardrails: [{ guardrail: { ...unsubscribes, margin: 0.002 }, arms: BASE.guardrails[0]!.arms }],
    };
    const waiting = decideOnline(tight);
    expect(summary(waiting)).toMatchObject({ outcome: 'continue', waitingFor: 'guardrails' });
    expect(waiting.checks[4]).toMatchObject({
      verdict: 'wait',
      statistic: 0.002409,
      threshold: 0.002,
      interval: { lower: -0.002409, upper: 0.002009, level: 0.95 },
    });
    const spent = decideOnline({ ...tight, budgetExhausted: true });
    expect(summary(spent)).toMatchObject({ outcome: 'refuse', reason: 'anchor_regression' });
    expect(spent.checks[4]).toMatchObject({ verdict: 'fail', statistic: 0.002409, threshold: 0.002 });
  });

  it('orients a decrease metric: a lower mean is the gain', () => {
    const cost = { name: 'cost_per_reply', kind: 'continuous', direction: 'decrease' } as const;
    const arms = {
      incumbent: { units: 8000, sum: 8000 * 10, sumOfSquares: 8000 * (100 + 4) },
      candidate: { units: 8000, sum: 8000 * 9.7, sumOfSquares: 8000 * (9.7 * 9.7 + 4) },
    };
    const decision = decideOnline({
      ...BASE,
      primary: { metric: cost, arms },
      confirmation: { incumbent: arms.incumbent, candidate: arms.candidate },
    });
    expect(decision.outcome).toBe('accept');
    expect(decision.checks[3]!.statistic).toBeCloseTo(0.3, 6);
    expect(decision.checks[5]!.data?.delta).toBeCloseTo(0.3, 12);
  });

  it('feeds the always-valid p-values back: an earlier look’s evidence counts', () => {
    const first = decideOnline(BASE);
    expect(alwaysValidPValues(first)).toEqual({ srm: 1, 'harm:unsubscribe_rate': 1, primary: first.checks[3]!.pValue });
    const later = decideOnline({
      ...BASE,
      primary: { metric: replyRate, arms: { incumbent: binary(21_000, 1050), candidate: binary(21_000, 1100) } },
      previousPValues: alwaysValidPValues(first),
    });
    expect(later.checks[3]).toMatchObject({ verdict: 'pass', pValue: first.checks[3]!.pValue });
  });

  it('keeps the always-valid p-values per direction: a guardrail once significantly better lends no evidence of harm', () => {
    const better = {
      ...BASE,
      guardrails: [{ guardrail: unsubscribes, arms: { incumbent: binary(5000, 70), candidate: binary(5000, 25) } }],
    };
    const first = decideOnline(better);
    expect(first.checks[1]).toMatchObject({ verdict: 'pass', pValue: 1 });
    expect(alwaysValidPValues(first)['harm:unsubscribe_rate']).toBe(1);
    // Had the earlier look's two-sided p (0.000247, the harm test's mirror image) been carried, this slightly worse look would stop.
    const slightlyWorse = decideOnline({
      ...BASE,
      guardrails: [{ guardrail: unsubscribes, arms: { incumbent: binary(6000, 30), candidate: binary(6000, 33) } }],
      previousPValues: alwaysValidPValues(first),
    });
    expect(slightlyWorse.checks[1]).toMatchObject({ verdict: 'pass', pValue: 1 });
    // A primary that was significantly worse does not make a later lead significant either.
    const behind = decideOnline({
      ...BASE,
      primary: { metric: replyRate, arms: { incumbent: binary(20_000, 1240), candidate: binary(20_000, 1000) } },
    });
    expect(alwaysValidPValues(behind).primary).toBe(1);
  });

  it('refuses impossible statistics with the field named', () => {
    expect(() =>
      decideOnline({
        ...BASE,
        primary: { metric: replyRate, arms: { incumbent: binary(10, 11), candidate: binary(10, 1) } },
      }),
    ).toThrow(/primary.incumbent/);
    expect(() => decideOnline({ ...BASE, looks: 0 })).toThrow(/looks/);
    expect(() =>
      decideOnline({
        ...BASE,
        guardrails: [{ guardrail: { ...unsubscribes, margin: -1 }, arms: BASE.guardrails[0]!.arms }],
      }),
    ).toThrow(/guardrails\[0\].margin/);
    expect(() => decideOnline({ ...BASE, assignments: [{ incumbent: 1.5, candidate: 2 }] })).toThrow(
      /assignments\[0\].incumbent/,
    );
  });
});
