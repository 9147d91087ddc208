import { describe, expect, it } from 'vitest';
import { ALTERNATIVES } from './alternative.ts';
import { wilcoxonSignedRank } from './wilcoxon-signed-rank.ts';

// Reference values: printed by scripts/reference/stats_reference.py with
// scipy 1.17.1 and numpy 2.4.6 (see the script's docstring for each call).
// Regenerate with `python3 scripts/reference/stats_reference.py`.
// Call: scipy.stats.wilcoxon(a, b, alternative=...) with the defaults
// zero_method='wilcox', correction=False, method='auto'.
const WILCOXON_REFERENCE = {
  exact_no_ties_n10: {
    a: [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3, 2.01],
    b: [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29, 1.71],
    n: 10,
    zeros: 0,
    hasTies: false,
    'two-sided': { statistic: 5, pValue: 0.01953125 },
    greater: { statistic: 50, pValue: 0.009765625 },
    less: { statistic: 50, pValue: 0.9931640625 },
  },
  exact_no_ties_n4: {
    a: [1, 2, 3, 4],
    b: [0.5, 2.25, 2, 1],
    n: 4,
    zeros: 0,
    hasTies: false,
    'two-sided': { statistic: 1, pValue: 0.25 },
    greater: { statistic: 9, pValue: 0.125 },
    less: { statistic: 9, pValue: 0.9375 },
  },
  small_with_zeros_n9: {
    a: [5, 7, 3, 8, 6, 9, 4, 6, 7],
    b: [5, 4, 3, 6, 7, 5, 2, 6, 3],
    n: 9,
    zeros: 3,
    hasTies: true,
    'two-sided': { statistic: 1, pValue: 0.0625 },
    greater: { statistic: 20, pValue: 0.03125 },
    less: { statistic: 20, pValue: 0.984375 },
  },
  small_with_ties_n8: {
    a: [2, 4, 6, 1, 9, 3, 5, 8],
    b: [1, 2, 4, 2, 6, 1, 7, 5],
    n: 8,
    zeros: 0,
    hasTies: true,
    'two-sided': { statistic: 6, pValue: 0.125 },
    greater: { statistic: 30, pValue: 0.0625 },
    less: { statistic: 30, pValue: 0.96875 },
  },
  medium_ties_and_zeros_n20: {
    a: [3, 5, 2, 6, 4, 4, 7, 3, 5, 6, 2, 8, 4, 5, 3, 6, 7, 4, 5, 3],
    b: [2, 5, 3, 4, 2, 4, 5, 1, 5, 3, 2, 5, 3, 2, 3, 4, 4, 2, 6, 1],
    n: 20,
    zeros: 5,
    hasTies: true,
    'two-sided': { statistic: 5, pValue: 0.0015098501953748301 },
    greater: { statistic: 115, pValue: 0.0007549250976874151 },
    less: { statistic: 115, pValue: 0.9992450749023126 },
  },
  exact_no_ties_n30: {
    a: [
      0.47, 0.38, 1.03, 1.12, 0.65, 0.92, 1.93, 1.08, 0.97, 1.6, 1.67, 2.48, 1.43, 2.42, 1.55, 2.72, 2.03, 2.08, 2.87,
      3.1, 2.77, 3.18, 3.03, 3.62, 3.65, 3.12, 3.33, 2.98, 3.37, 3.2,
    ],
    b: [
      0.6499, 0.7498, 0.8497, 0.9496, 1.0495, 1.1494, 1.2493, 1.3492, 1.4491, 1.549, 1.6489, 1.7488, 1.8487, 1.9486,
      2.0485, 2.1484, 2.2483, 2.3482, 2.4481, 2.548, 2.6479, 2.7478, 2.8477, 2.9476, 3.0475, 3.1474, 3.2473, 3.3472,
      3.4471, 3.547,
    ],
    n: 30,
    zeros: 0,
    hasTies: false,
    'two-sided': { statistic: 196, pValue: 0.46454504504799843 },
    greater: { statistic: 269, pValue: 0.23227252252399921 },
    less: { statistic: 269, pValue: 0.7739178286865354 },
  },
  exact_no_ties_n50: {
    a: [
      -0.125, 3.25, 6.375, -1.375, 6, 0, 5.625, 2.125, -1.25, 8.375, 0.125, 8, 4.5, -1.125, 4.125, 0.25, 10.375, 6.875,
      -1, 6.5, 0.375, 6.125, 9.25, -0.875, 8.875, 0.5, 8.5, 11.625, 5.875, 11.25, 7.25, 10.875, 14, 6, 13.625, 7.375,
      13.25, 9.75, 6.125, 16, 7.5, 15.625, 12.125, 6.25, 11.75, 7.625, 18, 14.5, 6.375, 14.125,
    ],
    b: [
      0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5,
      5.75, 6, 6.25, 6.5, 6.75, 7, 7.25, 7.5, 7.75, 8, 8.25, 8.5, 8.75, 9, 9.25, 9.5, 9.75, 10, 10.25, 10.5, 10.75, 11,
      11.25, 11.5, 11.75, 12, 12.25,
    ],
    n: 50,
    zeros: 0,
    hasTies: false,
    'two-sided': { statistic: 484, pValue: 0.1406841997467243 },
    greater: { statistic: 791, pValue: 0.07034209987336215 },
    less: { statistic: 791, pValue: 0.9309635457376899 },
  },
  asymptotic_no_ties_n51: {
    a: [
      -0.125, 3.25, 6.375, -1.375, 6, 0, 5.625, 2.125, -1.25, 8.375, 0.125, 8, 4.5, -1.125, 4.125, 0.25, 10.375, 6.875,
      -1, 6.5, 0.375, 6.125, 9.25, -0.875, 8.875, 0.5, 8.5, 11.625, 5.875, 11.25, 7.25, 10.875, 14, 6, 13.625, 7.375,
      13.25, 9.75, 6.125, 16, 7.5, 15.625, 12.125, 6.25, 11.75, 7.625, 18, 14.5, 6.375, 14.125, 7.75,
    ],
    b: [
      0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5,
      5.75, 6, 6.25, 6.5, 6.75, 7, 7.25, 7.5, 7.75, 8, 8.25, 8.5, 8.75, 9, 9.25, 9.5, 9.75, 10, 10.25, 10.5, 10.75, 11,
      11.25, 11.5, 11.75, 12, 12.25, 12.5,
    ],
    n: 51,
    zeros: 0,
    hasTies: false,
    'two-sided': { statistic: 524, pValue: 0.19260484260317556 },
    greater: { statistic: 802, pValue: 0.09630242130158778 },
    less: { statistic: 802, pValue: 0.9036975786984123 },
  },
  asymptotic_n53_three_zeros: {
    a: [
      -0.125, 3.25, 6.375, -1.375, 1, 0, 5.625, 2.125, -1.25, 8.375, 0.125, 8, 4.5, -1.125, 4.125, 0.25, 10.375, 6.875,
      -1, 6.5, 5, 6.125, 9.25, -0.875, 8.875, 0.5, 8.5, 11.625, 5.875, 11.25, 7.25, 10.875, 14, 6, 13.625, 7.375, 13.25,
      9.75, 6.125, 16, 7.5, 10.25, 12.125, 6.25, 11.75, 7.625, 18, 14.5, 6.375, 14.125, 7.75, 13.75, 16.875,
    ],
    b: [
      0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5,
      5.75, 6, 6.25, 6.5, 6.75, 7, 7.25, 7.5, 7.75, 8, 8.25, 8.5, 8.75, 9, 9.25, 9.5, 9.75, 10, 10.25, 10.5, 10.75, 11,
      11.25, 11.5, 11.75, 12, 12.25, 12.5, 12.75, 13,
    ],
    n: 53,
    zeros: 3,
    hasTies: false,
    'two-sided': { statistic: 501, pValue: 0.18761329108286695 },
    greater: { statistic: 774, pValue: 0.09380664554143348 },
    less: { statistic: 774, pValue: 0.9061933544585665 },
  },
  asymptotic_ties_and_zeros_n60: {
    a: [
      -3, 5, 4, 4, 3, 11, 2, 10, 1, 0, 8, -1, 7, 6, 6, 5, 5, 4, 3, 3, 2, 10, 1, 9, 0, 8, 7, -2, 6, 5, 5, 4, 4, 3, 11, 2,
      1, 9, 0, 8, -1, 7, 6, 6, 5, 4, 4, 3, 3, 2, 10, 1, 9, 8, -1, 7, -2, 6, 5, 5,
    ],
    b: [
      0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5,
      1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7,
    ],
    n: 60,
    zeros: 8,
    hasTies: true,
    'two-sided': { statistic: 528.5, pValue: 0.14018297463849583 },
    greater: { statistic: 849.5, pValue: 0.07009148731924791 },
    less: { statistic: 849.5, pValue: 0.929908512680752 },
  },
} as const;

const TOLERANCE = 1e-6;

/** The branch of SciPy's method='auto' each reference case exercises. */
const EXPECTED_METHOD: Record<keyof typeof WILCOXON_REFERENCE, 'exact' | 'normal-approximation'> = {
  exact_no_ties_n10: 'exact',
  exact_no_ties_n4: 'exact',
  small_with_zeros_n9: 'exact', // n ≤ 13 with zeros: sign-flip enumeration
  small_with_ties_n8: 'exact', // n ≤ 13 with ties: sign-flip enumeration
  medium_ties_and_zeros_n20: 'normal-approximation',
  exact_no_ties_n30: 'exact',
  exact_no_ties_n50: 'exact',
  asymptotic_no_ties_n51: 'normal-approximation',
  asymptotic_n53_three_zeros: 'normal-approximation', // 50 nonzero, but n counts zeros
  asymptotic_ties_and_zeros_n60: 'normal-approximation',
};

describe('wilcoxonSignedRank', () => {
  for (const [name, reference] of Object.entries(WILCOXON_REFERENCE)) {
    for (const alternative of ALTERNATIVES) {
      const title = `${name} (n = ${reference.n}, ${reference.zeros} zeros), ${alternative}`;
      it(`matches scipy.stats.wilcoxon on ${title}`, () => {
        const result = wilcoxonSignedRank(reference.a, reference.b, { alternative });
        const expected = reference[alternative];
        expect(Math.abs(result.statistic - expected.statistic)).toBeLessThanOrEqual(TOLERANCE);
        expect(Math.abs(result.pValue - expected.pValue)).toBeLessThanOrEqual(TOLERANCE);
        expect(result.method).toBe(EXPECTED_METHOD[name as keyof typeof WILCOXON_REFERENCE]);
      });
    }
  }

  it('defaults to the two-sided alternative and returns min(R+, R−)', () => {
    const { a, b } = WILCOXON_REFERENCE.exact_no_ties_n10;
    const result = wilcoxonSignedRank(a, b);
    expect(result).toEqual(wilcoxonSignedRank(a, b, { alternative: 'two-sided' }));
    // n = 10: R+ + R− = 55, R+ = 50.
    expect(result.statistic).toBe(5);
  });

  it('gives statistic 0 and p = 1 when every difference is zero, at any n', () => {
    for (const length of [1, 5, 13, 20, 60]) {
      const values = Array.from({ length }, (_, index) => index / 3);
      for (const alternative of ALTERNATIVES) {
        const result = wilcoxonSignedRank(values, values, { alternative });
        expect(result.statistic).toBe(0);
        expect(result.pValue).toBe(1);
      }
    }
  });

  it('gives the exact one-pair distribution for a single nonzero difference', () => {
    // R+ is 0 or 1 with probability ½ each (scipy: statistic 0, p 1 two-sided).
    expect(wilcoxonSignedRank([2], [1])).toEqual({ statistic: 0, pValue: 1, method: 'exact' });
    expect(wilcoxonSignedRank([2], [1], { alternative: 'greater' })).toEqual({
      statistic: 1,
      pValue: 0.5,
      method: 'exact',
    });
    expect(wilcoxonSignedRank([2], [1], { alternative: 'less' })).toEqual({ statistic: 1, pValue: 1, method: 'exact' });
  });

  it('is antisymmetric: swapping the samples swaps greater and less', () => {
    const { a, b } = WILCOXON_REFERENCE.asymptotic_ties_and_zeros_n60;
    expect(wilcoxonSignedRank(b, a, { alternative: 'less' }).pValue).toBeCloseTo(
      wilcoxonSignedRank(a, b, { alternative: 'greater' }).pValue,
      12,
    );
  });

  it('rejects unequal lengths, empty samples, non-finite values and unknown alternatives', () => {
    expect(() => wilcoxonSignedRank([1, 2], [1])).toThrow(RangeError);
    expect(() => wilcoxonSignedRank([], [])).toThrow(RangeError);
    expect(() => wilcoxonSignedRank([1, Number.NaN], [1, 2])).toThrow(RangeError);
    // @ts-expect-error — runtime check for untyped callers
    expect(() => wilcoxonSignedRank([1, 2], [2, 1], { alternative: 'up' })).toThrow(RangeError);
  });
});
