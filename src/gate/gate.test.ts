import { describe, expect, it } from 'vitest';
import { aggregate } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { GateInput, ScorePair } from './gate.ts';
import { DEFAULT_GATE_SETTINGS, comparePaired, decide } from './gate.ts';

/** A partition score from per-example composites; 'invalid' marks an invalid output. */
function score(partition: string, values: Record<string, number | 'invalid'>): PartitionScore {
  const records: ExampleScoreRecord[] = Object.entries(values).map(([exampleId, value]) =>
    value === 'invalid'
      ? { exampleId, repeat: 0, valid: false, invalidReason: 'unparsable', message: 'not JSON' }
      : {
          exampleId,
          repeat: 0,
          valid: true,
          composite: value,
          components: { appType: value },
          skipped: [],
          metrics: {},
          diagnostics: {},
          feedback: '',
        },
  );
  return aggregate(partition, 'hash', 'fingerprint', [
    { records, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latencyMs: 0 },
  ]);
}

function series(prefix: string, values: number[]): Record<string, number> {
  return Object.fromEntries(values.map((value, index) => [`${prefix}${index}`, value]));
}

const base = series('o', [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
// Five of ten optimization examples rise by 0.25: Δ = 0.125, clearly significant.
const improved = series('o', [0.75, 0.75, 0.75, 0.75, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5]);
const anchors = series('a', [0.6, 0.7, 0.8]);
const shadowBase = series('s', [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
const shadowImproved = series('s', [0.75, 0.75, 0.75, 0.5, 0.5, 0.5]);

function input(overrides: Partial<GateInput> & { shadow?: ScorePair } = {}): GateInput {
  let shadowCalls = 0;
  const shadowPair = overrides.shadow ?? {
    incumbent: score('shadow', shadowBase),
    candidate: score('shadow', shadowImproved),
  };
  const result: GateInput = {
    constraints: { passed: true, violations: [] },
    optimization: { incumbent: score('optimization', base), candidate: score('optimization', improved) },
    anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', anchors) },
    evaluateShadow: async () => {
      shadowCalls += 1;
      return shadowPair;
    },
    ...overrides,
  };
  Object.defineProperty(result, 'shadowCalls', { get: () => shadowCalls });
  return result;
}

describe('the gate', () => {
  it('accepts a real, general improvement and records every check', async () => {
    const decision = await decide(input());
    expect(decision.accepted).toBe(true);
    expect(decision.checks.map((check) => [check.name, check.passed])).toEqual([
      ['constraints', true],
      ['validity', true],
      ['margin', true],
      ['significance', true],
      ['anchors', true],
      ['shadow', true],
    ]);
    const margin = decision.checks.find((check) => check.name === 'margin')!;
    expect(margin.statistic).toBe(0.125);
    expect(margin.threshold).toBe(0);
  });

  it('refuses a constraint violation without evaluating the shadow', async () => {
    const gateInput = input({
      constraints: {
        passed: false,
        violations: [{ constraint: 'editableSections', message: 'section "defaults" changed' }],
      },
    });
    const decision = await decide(gateInput);
    expect(decision).toMatchObject({ accepted: false, reason: 'constraint', shadowConsulted: false });
    expect((gateInput as unknown as { shadowCalls: number }).shadowCalls).toBe(0);
  });

  it('refuses a candidate with more invalid outputs than the incumbent', async () => {
    const candidate = score('optimization', { ...improved, o9: 'invalid' });
    const decision = await decide(input({ optimization: { incumbent: score('optimization', base), candidate } }));
    expect(decision).toMatchObject({ accepted: false, reason: 'invalid' });
  });

  it('refuses a gain at or below the calibrated margin τ·√(2/R)', async () => {
    // τ = 0.1 with one repeat: the margin is 0.1 × √2 = 0.141421 > Δ = 0.125.
    const decision = await decide(input({ calibration: { noiseSd: 0.1, exampleSds: {} } }));
    expect(decision).toMatchObject({ accepted: false, reason: 'below_margin' });
    const margin = decision.checks.find((check) => check.name === 'margin')!;
    expect(margin).toMatchObject({ passed: false, statistic: 0.125, threshold: 0.141421 });
    // τ = 0.08: the margin is 0.113137 < 0.125, and the candidate goes on.
    expect((await decide(input({ calibration: { noiseSd: 0.08, exampleSds: {} } }))).accepted).toBe(true);
  });

  it("compares a sampled model's invalid outputs by rate (Fisher's exact test), not by count", async () => {
    const withInvalid = (values: Record<string, number>, invalid: number, prefix: string): PartitionScore =>
      score('optimization', {
        ...values,
        ...Object.fromEntries(Array.from({ length: invalid }, (_, index) => [`${prefix}${index}`, 'invalid' as const])),
      });
    const incumbentPlus = withInvalid(base, 1, 'x');
    // One more invalid output than the incumbent: a count rule refuses, the rate test does not (p ≥ α).
    const noisy = await decide(
      input({ optimization: { incumbent: incumbentPlus, candidate: withInvalid(improved, 2, 'x') }, stochastic: true }),
    );
    const validity = noisy.checks.find((check) => check.name === 'validity')!;
    expect(validity.passed).toBe(true);
    expect(validity.detail).toContain("Fisher's exact test");
    const deterministic = await decide(
      input({ optimization: { incumbent: incumbentPlus, candidate: withInvalid(improved, 2, 'x') } }),
    );
    expect(deterministic).toMatchObject({ accepted: false, reason: 'invalid' });
    // Many more invalid outputs: refused either way.
    const many = await decide(
      input({
        optimization: { incumbent: score('optimization', base), candidate: withInvalid(improved, 9, 'x') },
        stochastic: true,
      }),
    );
    expect(many).toMatchObject({ accepted: false, reason: 'invalid' });
  });

  it('refuses a gain carried by one example as not significant', async () => {
    const one = series('o', [1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    const decision = await decide(
      input({ optimization: { incumbent: score('optimization', base), candidate: score('optimization', one) } }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'not_significant' });
    const significance = decision.checks.find((check) => check.name === 'significance')!;
    // One difference of 0.5 among ten: t = 1 with df 9, one-sided p = 0.171718 (scipy.stats.ttest_rel).
    expect(significance.data!.t).toBeCloseTo(1, 9);
    expect(significance.data!.pValue).toBeCloseTo(0.171718, 5);
  });

  it('refuses an anchor regression even when the mean rises', async () => {
    const decision = await decide(
      input({ anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a1: 0.65 }) } }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'anchor_regression', shadowConsulted: false });
    expect(decision.checks.at(-1)!.detail).toContain('a1');
  });

  it('tolerates an anchor drop within anchorK × its calibrated SD × √(2/R)', async () => {
    // a1 drops 0.05; tolerance 3 × 0.012 × √2 = 0.0509 lets it through, 3 × 0.011 × √2 = 0.0467 does not.
    const refused = await decide(
      input({
        anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a1: 0.65 }) },
        calibration: { noiseSd: 0, exampleSds: { a1: 0.011 } },
      }),
    );
    expect(refused).toMatchObject({ accepted: false, reason: 'anchor_regression' });
    const decision = await decide(
      input({
        anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a1: 0.65 }) },
        calibration: { noiseSd: 0, exampleSds: { a1: 0.012 } },
      }),
    );
    expect(decision.accepted).toBe(true);
  });

  it("floors an anchor's calibrated SD at the anchors' pooled SD: an SD of 0 from a few draws does not make every flip a regression", async () => {
    // a0 was calibrated at SD 0, a1 and a2 at 0.03: pooled √((0 + 0.03² + 0.03²)/3) = 0.024495, a0's tolerance
    // 3 × 0.024495 × √2 = 0.103923. A drop of 0.05 passes (with the SD of 0 it was refused); a drop of 0.15 does not.
    const calibration = { noiseSd: 0, exampleSds: { a0: 0, a1: 0.03, a2: 0.03 } };
    const passed = await decide(
      input({
        anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a0: 0.55 }) },
        calibration,
      }),
    );
    expect(passed.accepted).toBe(true);
    expect(passed.checks.find((check) => check.name === 'anchors')).toMatchObject({
      passed: true,
      threshold: 0.103923,
    });
    const refused = await decide(
      input({
        anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a0: 0.45 }) },
        calibration,
      }),
    );
    expect(refused).toMatchObject({ accepted: false, reason: 'anchor_regression' });
    expect(refused.checks.at(-1)!.detail).toContain('a0 −0.15 > tolerance 0.103923');
    // Without a calibration every SD is 0 and the tolerance is anchorTolerance alone.
    const strict = await decide(
      input({ anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a0: 0.55 }) } }),
    );
    expect(strict).toMatchObject({ accepted: false, reason: 'anchor_regression' });
  });

  it('refuses as specialization a gain the shadow does not confirm', async () => {
    const decision = await decide(
      input({ shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', shadowBase) } }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'specialization', shadowConsulted: true });
    const shadow = decision.checks.find((check) => check.name === 'shadow')!;
    // Nothing changed on shadow: m = 0, required = γ·Δopt = 0.5 × 0.125.
    expect(shadow).toMatchObject({ passed: false, statistic: 0, threshold: 0.0625 });
  });

  it('refuses as specialization when the shadow got worse', async () => {
    const worse = series('s', [0.25, 0.25, 0.5, 0.5, 0.5, 0.5]);
    const decision = await decide(
      input({ shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', worse) } }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'specialization' });
  });

  it('refuses an unchanged shadow whatever the settings: γ = 0 and a wide margin do not make it a confirmation', async () => {
    const decision = await decide(
      input({ shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', shadowBase) } }),
      { ...DEFAULT_GATE_SETTINGS, generalizationRatio: 0, shadowMarginSe: 10 },
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'specialization' });
    expect(decision.checks.at(-1)!.detail).toContain('did not move');
  });

  it('refuses a small gain whose shadow fell, although Δshadow ≥ γ·Δopt − m holds', async () => {
    // Δopt = 0.025 (one of ten rises by 0.25); γ·Δopt − m is negative once the shadow moved, and the shadow fell.
    const small = series('o', [0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    const fell = series('s', [0.45, 0.55, 0.5, 0.5, 0.5, 0.5]);
    const settings = { ...DEFAULT_GATE_SETTINGS, alpha: 0.5 };
    const decision = await decide(
      input({
        optimization: { incumbent: score('optimization', base), candidate: score('optimization', small) },
        shadow: {
          incumbent: score('shadow', shadowBase),
          candidate: score('shadow', series('s', [0.45, 0.5, 0.5, 0.5, 0.5, 0.5])),
        },
      }),
      settings,
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'specialization' });
    const shadow = decision.checks.at(-1)!;
    expect(shadow.detail).toContain('fell');
    expect(shadow.data).toMatchObject({ improved: 0, worsened: 1 });
    // One up, one down, the mean at 0: not a confirmation either.
    const flat = await decide(
      input({
        optimization: { incumbent: score('optimization', base), candidate: score('optimization', small) },
        shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', fell) },
      }),
      settings,
    );
    expect(flat).toMatchObject({ accepted: false, reason: 'specialization' });
  });

  it('refuses a shadow gain carried by one example as not_confirmed (Δshadow > 0, the one shadow test not significant), with its power', async () => {
    // Shadow differences [0.25, 0, 0, 0, 0, 0]: t = 1, df = 5, one-sided p = 0.181609 (scipy.stats.ttest_rel) ≥ 0.05.
    const one = series('s', [0.75, 0.5, 0.5, 0.5, 0.5, 0.5]);
    const decision = await decide(
      input({ shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', one) } }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'not_confirmed' });
    const shadow = decision.checks.at(-1)!;
    expect(shadow.statistic).toBeCloseTo(0.181609, 5);
    expect(shadow.threshold).toBe(0.05);
    expect(shadow.data).toMatchObject({ improved: 1, worsened: 0, examples: 6, pairedTest: 'paired-t', df: 5 });
    expect(shadow.detail).toMatch(/^not confirmed: Δshadow = 0\.041667 > 0 but not distinguishable from no gain/);
    // Power of the one-sided test at 0.05 with SE 0.041667 (scipy: 1 − norm.cdf(norm.ppf(0.95) − Δ/SE)):
    // for Δopt = 0.125, 0.912315; for the observed Δshadow = 0.041667, 0.259511.
    const power = shadow.data!.power as { forOptimizationDelta: number; forObservedDelta: number };
    expect(power.forOptimizationDelta).toBeCloseTo(0.912315, 5);
    expect(power.forObservedDelta).toBeCloseTo(0.259511, 5);
    expect(shadow.detail).toContain('power for Δopt = 0.125: 0.912315');
    // shadowAlpha is honoured: at 0.2 the same shadow confirms.
    const lenient = await decide(
      input({ shadow: { incumbent: score('shadow', shadowBase), candidate: score('shadow', one) } }),
      { ...DEFAULT_GATE_SETTINGS, shadowAlpha: 0.2 },
    );
    expect(lenient.accepted).toBe(true);
    expect(lenient.checks.at(-1)!.detail).toContain('1 of 6 shadow examples improved, 0 worsened');
  });

  it('adds the calibrated run-shared noise to the shadow test of a sampled model: the same shadow gain is then not_confirmed', async () => {
    // σ_u² = noiseSd² − mean(sdᵢ²)/n_opt = 0.05² − 0.1²/10 = 0.0015; one repeat a side: SE = √(s_d²/n + 0.0015·(1 + 1))
    // = √(0.0559017² + 0.003) = 0.0782624, t = 0.125/SE = 1.597191, df = 5, p = 0.0855566 (scipy.stats.t.sf);
    // power for Δopt = 0.125: 1 − Φ(1.644854 − 1.597191) = 0.480993. Deterministic, the same shadow confirms (p = 0.0354).
    const calibration = { noiseSd: 0.05, exampleSds: Object.fromEntries(Object.keys(base).map((id) => [id, 0.1])) };
    const decision = await decide(input({ calibration, stochastic: true }));
    expect(decision).toMatchObject({ accepted: false, reason: 'not_confirmed' });
    const shadow = decision.checks.at(-1)!;
    expect(shadow.data!.sharedRunVariance as number).toBeCloseTo(0.0015, 10);
    expect(shadow.data).toMatchObject({ sharedRunVarianceFrom: 'calibration', df: 5 });
    expect(shadow.data!.t as number).toBeCloseTo(1.597191, 5);
    expect(shadow.statistic).toBeCloseTo(0.085557, 5);
    expect((shadow.data!.power as { forOptimizationDelta: number }).forOptimizationDelta).toBeCloseTo(0.480993, 5);
    expect(shadow.detail).toContain(
      'paired t-test on shadow with the run-shared noise: t = 1.597191, df = 5, p = 0.085557 ≥ shadowAlpha = 0.05',
    );
    expect((await decide(input({ calibration }))).accepted).toBe(true);
  });

  it('labels a raced shadow stopped for futility not_confirmed when its gain so far was positive, specialization otherwise', async () => {
    const stopped =
      (delta: number): GateInput['evaluateShadow'] =>
      async () => ({
        incumbent: score('shadow', shadowBase),
        candidate: score('shadow', shadowBase),
        stoppedEarly: { statistic: 0.01, threshold: 0.05, detail: 'stopped for futility', data: { racing: { delta } } },
      });
    const positive = await decide(input({ evaluateShadow: stopped(0.02) }));
    expect(positive).toMatchObject({ accepted: false, reason: 'not_confirmed' });
    expect(positive.checks.at(-1)!.detail).toBe('not confirmed: stopped for futility');
    const flat = await decide(input({ evaluateShadow: stopped(0) }));
    expect(flat).toMatchObject({ accepted: false, reason: 'specialization' });
    expect(flat.checks.at(-1)!.detail).toBe('specialization: stopped for futility');
  });

  it('shows on the significance row the p-value that decided, with both tests in the detail', async () => {
    // Two runs per side: the paired test passes, Welch's test on the run-level composites does not.
    const runs = (values: Record<string, number>[], partition: string): PartitionScore => {
      const results = values.map((row, repeat) => ({
        records: Object.entries(row).map(
          ([exampleId, value]): ExampleScoreRecord => ({
            exampleId,
            repeat,
            valid: true,
            composite: value,
            components: { appType: value },
            skipped: [],
            metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
            diagnostics: {},
            feedback: '',
          }),
        ),
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        latencyMs: 0,
      }));
      return aggregate(partition, 'hash', 'fingerprint', results);
    };
    const lowRun = series('o', [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]);
    const highRun = series('o', [0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]);
    const up = (row: Record<string, number>): Record<string, number> =>
      Object.fromEntries(Object.entries(row).map(([id, value]) => [id, value + 0.05]));
    const decision = await decide(
      input({
        optimization: {
          incumbent: runs([lowRun, highRun], 'optimization'),
          candidate: runs([up(lowRun), up(highRun)], 'optimization'),
        },
        stochastic: true,
      }),
    );
    expect(decision).toMatchObject({ accepted: false, reason: 'not_significant' });
    const significance = decision.checks.find((check) => check.name === 'significance')!;
    const welch = significance.data!.welch as { pValue: number };
    expect(significance.data!.pValue as number).toBeLessThan(0.05);
    expect(welch.pValue).toBeGreaterThan(0.05);
    expect(significance.statistic).toBeCloseTo(welch.pValue, 6);
    expect(significance.detail).toContain('paired t-test');
    expect(significance.detail).toContain("Welch's t-test");
  });

  it('shows on the anchors row the drop and the tolerance of the anchor closest to its tolerance', async () => {
    const decision = await decide(
      input({
        anchor: { incumbent: score('anchor', anchors), candidate: score('anchor', { ...anchors, a1: 0.65, a2: 0.79 }) },
        calibration: { noiseSd: 0, exampleSds: { a1: 0.012, a2: 0.01 } },
      }),
    );
    expect(decision.accepted).toBe(true);
    const row = decision.checks.find((check) => check.name === 'anchors')!;
    // a1: drop 0.05 against 3 × 0.012 × √2 = 0.050912 (slack 0.0009); a2: drop 0.01 against 0.042426 (slack 0.032).
    expect(row).toMatchObject({ passed: true, statistic: 0.05, threshold: 0.050912 });
    expect(row.detail).toContain('a1');
  });
});

describe('comparePaired', () => {
  it('uses only examples valid for both and says which were left out', () => {
    const comparison = comparePaired(
      score('p', { x: 0.5, y: 'invalid', z: 0.2 }),
      score('p', { x: 0.7, y: 0.9, z: 'invalid' }),
    );
    expect(comparison.ids).toEqual(['x']);
    expect(comparison.leftOut).toEqual(['y', 'z']);
    expect(comparison.delta).toBeCloseTo(0.2, 12);
  });
});

describe("the gate on a binary task (McNemar's exact test)", () => {
  /** 0/1 outcomes of `count` examples `prefix0..`, right (1) at the given indexes. */
  function outcomes(prefix: string, count: number, right: readonly number[]): Record<string, number> {
    return Object.fromEntries(
      Array.from({ length: count }, (_, index) => [`${prefix}${index}`, right.includes(index) ? 1 : 0]),
    );
  }
  const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, index) => from + index);

  // Optimization, 20 examples: the incumbent gets 0–7 right; the candidate keeps 1–7, loses 0, and fixes 8–14: b = 7, c = 1.
  const optimization: ScorePair = {
    incumbent: score('optimization', outcomes('o', 20, range(0, 8))),
    candidate: score('optimization', outcomes('o', 20, [...range(1, 8), ...range(8, 15)])),
  };
  // Shadow, 10 examples: the incumbent gets 0–3 right; the candidate keeps them and fixes 4–8: b = 5, c = 0.
  const shadow: ScorePair = {
    incumbent: score('shadow', outcomes('s', 10, range(0, 4))),
    candidate: score('shadow', outcomes('s', 10, range(0, 9))),
  };

  it("tests optimization and shadow with McNemar's exact test and stores which test ran", async () => {
    const decision = await decide(input({ optimization, shadow, outcome: 'binary' }));
    expect(decision.accepted).toBe(true);
    const significance = decision.checks.find((check) => check.name === 'significance')!;
    // P(X ≥ 7), X ~ Bin(8, ½) = (8 + 1) / 256 (scipy.stats.binomtest(7, 8, 0.5, alternative='greater').pvalue).
    expect(significance.statistic).toBe(0.035156);
    expect(significance.data).toMatchObject({
      pairedTest: 'mcnemar-exact',
      test: "McNemar's exact test, one-sided (candidate right more often), per-example outcomes",
      b: 7,
      c: 1,
      discordant: 8,
      pValue: 9 / 256,
      improved: 7,
      worsened: 1,
    });
    expect(significance.detail).toBe(
      "McNemar's exact test: b = 7 (only the candidate right), c = 1 (only the incumbent right), p = 0.035156 < α = 0.05; 7 examples improved, 1 worsened",
    );
    const shadowCheck = decision.checks.find((check) => check.name === 'shadow')!;
    // P(X ≥ 5), X ~ Bin(5, ½) = 1 / 32.
    expect(shadowCheck.statistic).toBe(0.03125);
    expect(shadowCheck.data).toMatchObject({
      pairedTest: 'mcnemar-exact',
      b: 5,
      c: 0,
      discordant: 5,
      pValue: 1 / 32,
      delta: 0.5,
    });
  });

  it('refuses 4 fixes and no break of 20 (p = 1/16), which the paired t-test on the same values would accept', async () => {
    const fewFixes: ScorePair = {
      incumbent: score('optimization', outcomes('o', 20, range(0, 8))),
      candidate: score('optimization', outcomes('o', 20, range(0, 12))),
    };
    const binary = await decide(input({ optimization: fewFixes, shadow, outcome: 'binary' }));
    expect(binary).toMatchObject({ accepted: false, reason: 'not_significant' });
    const significance = binary.checks.find((check) => check.name === 'significance')!;
    expect(significance.data).toMatchObject({ pairedTest: 'mcnemar-exact', b: 4, c: 0, pValue: 0.0625 });
    expect(significance.statistic).toBe(0.0625);

    const continuous = await decide(input({ optimization: fewFixes, shadow }));
    const tTest = continuous.checks.find((check) => check.name === 'significance')!;
    expect(tTest.data).toMatchObject({
      pairedTest: 'paired-t',
      test: 'paired t-test, one-sided (candidate > incumbent), per-example composites',
      df: 19,
    });
    expect(tTest.passed).toBe(true);
    expect(tTest.statistic).toBeLessThan(0.05);
  });

  it('falls back to the paired t-test, and says so, when per-example means are not 0/1 (repeats of a sampled model)', async () => {
    const decision = await decide(input({ outcome: 'binary' }));
    const significance = decision.checks.find((check) => check.name === 'significance')!;
    expect(significance.data).toMatchObject({
      pairedTest: 'paired-t',
      binaryFallback: expect.stringContaining('not 0/1'),
    });
  });
});
