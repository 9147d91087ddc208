import { describe, expect, it } from 'vitest';
import { cohensD, hedgesG, pooledStandardDeviation } from './effect-size.ts';

// Reference values: printed by scripts/reference/stats_reference.py with
// scipy 1.17.1 and numpy 2.4.6 (see the script's docstring for each call).
// Regenerate with `python3 scripts/reference/stats_reference.py`.
// Computed directly with numpy: d = (mean(a) - mean(b)) / pooled SD (var ddof=1);
// g = d * (1 - 3 / (4 * (n1 + n2) - 9)); hedgesGExactJ uses the gamma-function J.
const EFFECT_SIZE_REFERENCE = {
  unequal_sizes_and_variances: {
    a: [12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 14.8],
    b: [10.2, 16.5, 9.1, 18.3, 11.7, 13, 8.4, 17.6, 12.2, 15.9, 10.8],
    cohensD: 0.1667784579209189,
    hedgesG: 0.1588366265913513,
    hedgesGExactJ: 0.15881542611795124,
  },
  small_clear_difference: {
    a: [1, 2, 3],
    b: [4, 5, 6, 7, 8],
    cohensD: -2.82842712474619,
    hedgesG: -2.4595018476053823,
    hedgesGExactJ: -2.4568472851294967,
  },
  large_random: {
    a: [
      0.7094, 0.6941, 0.7275, 0.6305, 0.7342, 0.7039, 0.6837, 0.7249, 0.6224, 0.7121, 0.6834, 0.7405, 0.7421, 0.6736,
      0.6733, 0.6465, 0.6806, 0.736, 0.7629, 0.7314, 0.7217, 0.6766, 0.7298, 0.6792, 0.732, 0.7099, 0.7628, 0.7301,
      0.7884, 0.6996, 0.7578, 0.7313, 0.8048, 0.6219, 0.7637, 0.6688, 0.6766, 0.7191, 0.6445, 0.6603,
    ],
    b: [
      0.6545, 0.671, 0.5287, 0.6214, 0.6869, 0.6881, 0.6404, 0.6996, 0.6538, 0.8056, 0.6272, 0.7053, 0.6559, 0.7769,
      0.6126, 0.7789, 0.5924, 0.577, 0.6506, 0.7083, 0.5631, 0.6546, 0.6996, 0.6968, 0.7788,
    ],
    cohensD: 0.6959998801692563,
    hedgesG: 0.6876811565018947,
    hedgesGExactJ: 0.6876756131289126,
  },
} as const;

const TOLERANCE = 1e-6;

describe('cohensD and hedgesG', () => {
  for (const [name, reference] of Object.entries(EFFECT_SIZE_REFERENCE)) {
    it(`match the numpy reference on ${name}`, () => {
      expect(Math.abs(cohensD(reference.a, reference.b) - reference.cohensD)).toBeLessThanOrEqual(TOLERANCE);
      expect(Math.abs(hedgesG(reference.a, reference.b) - reference.hedgesG)).toBeLessThanOrEqual(TOLERANCE);
    });
  }

  it('uses the approximate correction 1 − 3/(4(n1+n2) − 9), not the exact gamma-function J', () => {
    const { a, b, hedgesG: approximate, hedgesGExactJ } = EFFECT_SIZE_REFERENCE.small_clear_difference;
    expect(hedgesG(a, b)).toBeCloseTo(approximate, 12);
    expect(Math.abs(hedgesG(a, b) - hedgesGExactJ)).toBeGreaterThan(1e-3);
    // n1 + n2 = 8 → J = 1 − 3/23.
    expect(hedgesG(a, b) / cohensD(a, b)).toBeCloseTo(20 / 23, 14);
  });

  it('computes the pooled SD with n − 1 denominators', () => {
    // Variances 1 and 2.5, pooled (2·1 + 4·2.5) / 6 = 2.
    expect(pooledStandardDeviation([1, 2, 3], [4, 5, 6, 7, 8])).toBeCloseTo(Math.SQRT2, 14);
    expect(cohensD([1, 2, 3], [4, 5, 6, 7, 8])).toBeCloseTo(-4 / Math.SQRT2, 14);
  });

  it('is antisymmetric in its samples', () => {
    const { a, b } = EFFECT_SIZE_REFERENCE.large_random;
    expect(cohensD(b, a)).toBeCloseTo(-cohensD(a, b), 14);
    expect(hedgesG(b, a)).toBeCloseTo(-hedgesG(a, b), 14);
  });

  it('gives 0 or ±Infinity when both samples are constant', () => {
    expect(cohensD([2, 2], [2, 2, 2])).toBe(0);
    expect(hedgesG([2, 2], [2, 2, 2])).toBe(0);
    expect(cohensD([3, 3], [2, 2, 2])).toBe(Infinity);
    expect(hedgesG([1, 1], [2, 2, 2])).toBe(-Infinity);
  });

  it('rejects samples shorter than 2 and non-finite values', () => {
    expect(() => cohensD([1], [1, 2])).toThrow(RangeError);
    expect(() => hedgesG([1, 2], [3])).toThrow(RangeError);
    expect(() => cohensD([1, Number.NaN], [1, 2])).toThrow(RangeError);
  });
});
