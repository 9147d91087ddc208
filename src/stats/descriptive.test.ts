import { describe, expect, it } from 'vitest';
import { mean, standardDeviation, standardError, variance } from './descriptive.ts';

// Reference values: printed by scripts/reference/stats_reference.py with
// scipy 1.17.1 and numpy 2.4.6 (see the script's docstring for each call).
// Regenerate with `python3 scripts/reference/stats_reference.py`.
// Calls: np.mean(x), np.var(x, ddof=1), np.std(x, ddof=1), np.std(x, ddof=1) / sqrt(n).
const DESCRIPTIVE_REFERENCE = {
  small: {
    values: [2, 4, 4, 4, 5, 5, 7, 9],
    mean: 5,
    variance: 4.571428571428571,
    standardDeviation: 2.138089935299395,
    standardError: 0.7559289460184544,
  },
  large_random: {
    values: [
      0.7094, 0.6941, 0.7275, 0.6305, 0.7342, 0.7039, 0.6837, 0.7249, 0.6224, 0.7121, 0.6834, 0.7405, 0.7421, 0.6736,
      0.6733, 0.6465, 0.6806, 0.736, 0.7629, 0.7314, 0.7217, 0.6766, 0.7298, 0.6792, 0.732, 0.7099, 0.7628, 0.7301,
      0.7884, 0.6996, 0.7578, 0.7313, 0.8048, 0.6219, 0.7637, 0.6688, 0.6766, 0.7191, 0.6445, 0.6603,
    ],
    mean: 0.7072975,
    variance: 0.0019108212756410263,
    standardDeviation: 0.04371294174087379,
    standardError: 0.006911622956370352,
  },
} as const;

const TOLERANCE = 1e-6;

describe('descriptive statistics', () => {
  for (const [name, reference] of Object.entries(DESCRIPTIVE_REFERENCE)) {
    it(`match numpy on ${name}`, () => {
      expect(Math.abs(mean(reference.values) - reference.mean)).toBeLessThanOrEqual(TOLERANCE);
      expect(Math.abs(variance(reference.values) - reference.variance)).toBeLessThanOrEqual(TOLERANCE);
      expect(Math.abs(standardDeviation(reference.values) - reference.standardDeviation)).toBeLessThanOrEqual(
        TOLERANCE,
      );
      expect(Math.abs(standardError(reference.values) - reference.standardError)).toBeLessThanOrEqual(TOLERANCE);
    });
  }

  it('computes exact values on small hand cases', () => {
    expect(mean([1, 2, 3, 6])).toBe(3);
    expect(mean([7])).toBe(7);
    expect(variance([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(32 / 7, 14);
    expect(variance([5, 5, 5])).toBe(0);
    expect(standardDeviation([1, 3])).toBeCloseTo(Math.SQRT2, 14);
    expect(standardError([1, 3])).toBeCloseTo(1, 14);
  });

  it('throws RangeError where the statistic is undefined', () => {
    expect(() => mean([])).toThrow(RangeError);
    expect(() => variance([1])).toThrow(/at least 2/);
    expect(() => standardDeviation([])).toThrow(RangeError);
    expect(() => standardError([4])).toThrow(RangeError);
    expect(() => mean([1, Number.NaN])).toThrow(/finite/);
    expect(() => variance([1, Infinity])).toThrow(RangeError);
  });
});
