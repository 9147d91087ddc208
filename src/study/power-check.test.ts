import { describe, expect, it } from 'vitest';
import { minimumFixesForMcNemar, powerWarnings } from './power-check.ts';

const scores = (values: number[]): Map<string, number> => new Map(values.map((value, index) => [`e${index}`, value]));

describe('power check', () => {
  it('needs ⌈log2(1/α)⌉ fixes for McNemar: 0.5^5 = 0.03125 ≤ 0.05 < 0.5^4 = 0.0625', () => {
    expect(minimumFixesForMcNemar(0.05)).toBe(5);
    expect(minimumFixesForMcNemar(0.01)).toBe(7); // 0.5^7 = 0.0078
    expect(minimumFixesForMcNemar(0.5)).toBe(1);
    expect(() => minimumFixesForMcNemar(0)).toThrow(RangeError);
  });

  it('warns a binary study whose incumbent gets too few examples wrong, per partition', () => {
    const warnings = powerWarnings({
      outcome: 'binary',
      alpha: 0.05,
      shadowAlpha: 0.05,
      optimization: scores([1, 1, 1, 0, 0, 1, 1, 1]),
      shadow: scores([0, 0, 0, 0, 0, 1]),
      optimizationSize: 9, // one invalid example: wrong too
      shadowSize: 6,
    });
    expect(warnings).toEqual([
      {
        partition: 'optimization',
        have: 3,
        needed: 5,
        message:
          "no change can reach significance on optimization: the incumbent gets 3 of its 9 examples wrong, and McNemar's exact test needs at least 5 fixed with none broken (p = 0.5^5 = 0.031 ≤ α = 0.05); add at least 2 optimization example(s) the incumbent gets wrong",
      },
    ]);
  });

  it('says nothing of a continuous study before any candidate was measured, and the median need after', () => {
    const base = { outcome: 'continuous' as const, alpha: 0.05, shadowAlpha: 0.05, optimization: scores([0.5]), shadow: scores([0.5]), optimizationSize: 6, shadowSize: 3 };
    expect(powerWarnings(base)).toEqual([]);
    // d_z = 0.408: 19 examples (the one-sided paired t-test; checked in stuck-advice.test.ts against SciPy).
    const [warning] = powerWarnings({ ...base, observedEffectSizes: [0.2, 0.408, 0.9] });
    expect(warning?.needed).toBe(19);
    expect(warning?.have).toBe(6);
  });
});
