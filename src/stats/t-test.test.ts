import { describe, expect, it } from 'vitest';
import { ALTERNATIVES } from './alternative.ts';
import { pairedTTest, welchTTest, welchTTestFromMoments } from './t-test.ts';

// Reference values: printed by scripts/reference/stats_reference.py with
// scipy 1.17.1 and numpy 2.4.6 (see the script's docstring for each call).
// Regenerate with `python3 scripts/reference/stats_reference.py`.
// Call: scipy.stats.ttest_ind(a, b, equal_var=False, alternative=...).
const WELCH_REFERENCE = {
  unequal_sizes_and_variances: {
    a: [12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 14.8],
    b: [10.2, 16.5, 9.1, 18.3, 11.7, 13, 8.4, 17.6, 12.2, 15.9, 10.8],
    'two-sided': { t: 0.41081746093987886, df: 13.960768899370388, pValue: 0.687442467327371 },
    greater: { t: 0.41081746093987886, df: 13.960768899370388, pValue: 0.3437212336636855 },
    less: { t: 0.41081746093987886, df: 13.960768899370388, pValue: 0.6562787663363145 },
  },
  small_clear_difference: {
    a: [1, 2, 3],
    b: [4, 5, 6, 7, 8],
    'two-sided': { t: -4.3817804600413295, df: 5.882352941176469, pValue: 0.004882634939494186 },
    greater: { t: -4.3817804600413295, df: 5.882352941176469, pValue: 0.9975586825302529 },
    less: { t: -4.3817804600413295, df: 5.882352941176469, pValue: 0.002441317469747093 },
  },
  one_group_constant: {
    a: [5, 5, 5, 5],
    b: [4.1, 5.2, 3.9, 4.8, 5.5],
    'two-sided': { t: 0.9733285267845745, df: 4, pValue: 0.38550492943440196 },
    greater: { t: 0.9733285267845745, df: 4, pValue: 0.19275246471720098 },
    less: { t: 0.9733285267845745, df: 4, pValue: 0.807247535282799 },
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
    'two-sided': { t: 2.466951215119644, df: 36.07175847549033, pValue: 0.01850846940407787 },
    greater: { t: 2.466951215119644, df: 36.07175847549033, pValue: 0.009254234702038936 },
    less: { t: 2.466951215119644, df: 36.07175847549033, pValue: 0.9907457652979611 },
  },
} as const;

// Call: scipy.stats.ttest_rel(a, b, alternative=...).
const PAIRED_REFERENCE = {
  scores_eight_examples: {
    a: [0.62, 0.71, 0.55, 0.8, 0.67, 0.74, 0.59, 0.66],
    b: [0.58, 0.69, 0.57, 0.71, 0.6, 0.7, 0.61, 0.62],
    'two-sided': { t: 2.3678334128671423, df: 7, pValue: 0.04976454087475291 },
    greater: { t: 2.3678334128671423, df: 7, pValue: 0.024882270437376456 },
    less: { t: 2.3678334128671423, df: 7, pValue: 0.9751177295626235 },
  },
  three_pairs: {
    a: [3, 4.5, 2],
    b: [2.5, 4, 2.75],
    'two-sided': { t: 0.19999999999999998, df: 2, pValue: 0.8599719915971991 },
    greater: { t: 0.19999999999999998, df: 2, pValue: 0.42998599579859953 },
    less: { t: 0.19999999999999998, df: 2, pValue: 0.5700140042014005 },
  },
  large_random: {
    a: [
      0.7094, 0.6941, 0.7275, 0.6305, 0.7342, 0.7039, 0.6837, 0.7249, 0.6224, 0.7121, 0.6834, 0.7405, 0.7421, 0.6736,
      0.6733, 0.6465, 0.6806, 0.736, 0.7629, 0.7314, 0.7217, 0.6766, 0.7298, 0.6792, 0.732,
    ],
    b: [
      0.6545, 0.671, 0.5287, 0.6214, 0.6869, 0.6881, 0.6404, 0.6996, 0.6538, 0.8056, 0.6272, 0.7053, 0.6559, 0.7769,
      0.6126, 0.7789, 0.5924, 0.577, 0.6506, 0.7083, 0.5631, 0.6546, 0.6996, 0.6968, 0.7788,
    ],
    'two-sided': { t: 2.0876204804157905, df: 24, pValue: 0.04762194545815876 },
    greater: { t: 2.0876204804157905, df: 24, pValue: 0.02381097272907938 },
    less: { t: 2.0876204804157905, df: 24, pValue: 0.9761890272709206 },
  },
} as const;

const TOLERANCE = 1e-6;

function expectClose(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(TOLERANCE);
}

describe('welchTTest', () => {
  for (const [name, reference] of Object.entries(WELCH_REFERENCE)) {
    for (const alternative of ALTERNATIVES) {
      it(`matches scipy.stats.ttest_ind(equal_var=False) on ${name}, ${alternative}`, () => {
        const result = welchTTest(reference.a, reference.b, { alternative });
        const expected = reference[alternative];
        expectClose(result.t, expected.t);
        expectClose(result.df, expected.df);
        expectClose(result.pValue, expected.pValue);
      });
    }
  }

  it('defaults to the two-sided alternative', () => {
    const { a, b } = WELCH_REFERENCE.unequal_sizes_and_variances;
    expect(welchTTest(a, b)).toEqual(welchTTest(a, b, { alternative: 'two-sided' }));
  });

  it('is antisymmetric in its samples', () => {
    const { a, b } = WELCH_REFERENCE.large_random;
    const forward = welchTTest(a, b, { alternative: 'greater' });
    const backward = welchTTest(b, a, { alternative: 'less' });
    expectClose(backward.t, -forward.t);
    expectClose(backward.pValue, forward.pValue);
  });

  it('gives t = 0 and p = 1 for two constant samples with equal means', () => {
    for (const alternative of ALTERNATIVES) {
      expect(welchTTest([3, 3, 3], [3, 3], { alternative })).toEqual({ t: 0, df: 3, pValue: 1 });
    }
  });

  it('gives t = ±Infinity and p in {0, 1} for two constant samples with different means', () => {
    expect(welchTTest([5, 5, 5], [4, 4], { alternative: 'greater' })).toEqual({ t: Infinity, df: 3, pValue: 0 });
    expect(welchTTest([5, 5, 5], [4, 4], { alternative: 'less' })).toEqual({ t: Infinity, df: 3, pValue: 1 });
    expect(welchTTest([5, 5, 5], [4, 4], { alternative: 'two-sided' })).toEqual({ t: Infinity, df: 3, pValue: 0 });
    expect(welchTTest([4, 4], [5, 5, 5], { alternative: 'less' })).toEqual({ t: -Infinity, df: 3, pValue: 0 });
    expect(welchTTest([4, 4], [5, 5, 5], { alternative: 'greater' })).toEqual({ t: -Infinity, df: 3, pValue: 1 });
  });

  it('rejects samples shorter than 2, non-finite values and unknown alternatives', () => {
    expect(() => welchTTest([1], [1, 2])).toThrow(RangeError);
    expect(() => welchTTest([1, 2], [])).toThrow(RangeError);
    expect(() => welchTTest([1, Number.NaN], [1, 2])).toThrow(RangeError);
    expect(() => welchTTest([1, 2], [1, Infinity])).toThrow(RangeError);
    // @ts-expect-error — runtime check for untyped callers
    expect(() => welchTTest([1, 2], [1, 3], { alternative: 'bigger' })).toThrow(RangeError);
  });
});

describe('pairedTTest', () => {
  for (const [name, reference] of Object.entries(PAIRED_REFERENCE)) {
    for (const alternative of ALTERNATIVES) {
      it(`matches scipy.stats.ttest_rel on ${name}, ${alternative}`, () => {
        const result = pairedTTest(reference.a, reference.b, { alternative });
        const expected = reference[alternative];
        expectClose(result.t, expected.t);
        expect(result.df).toBe(expected.df);
        expectClose(result.pValue, expected.pValue);
      });
    }
  }

  it('gives t = 0 and p = 1 when every paired difference is zero', () => {
    for (const alternative of ALTERNATIVES) {
      expect(pairedTTest([0.5, 0.7, 0.9], [0.5, 0.7, 0.9], { alternative })).toEqual({ t: 0, df: 2, pValue: 1 });
    }
  });

  it('gives t = ±Infinity when every paired difference is the same nonzero value', () => {
    expect(pairedTTest([2, 3, 4], [1, 2, 3], { alternative: 'greater' })).toEqual({ t: Infinity, df: 2, pValue: 0 });
    expect(pairedTTest([2, 3, 4], [1, 2, 3], { alternative: 'less' })).toEqual({ t: Infinity, df: 2, pValue: 1 });
    expect(pairedTTest([1, 2, 3], [2, 3, 4])).toEqual({ t: -Infinity, df: 2, pValue: 0 });
  });

  it('rejects unequal lengths, fewer than 2 pairs and non-finite values', () => {
    expect(() => pairedTTest([1, 2, 3], [1, 2])).toThrow(RangeError);
    expect(() => pairedTTest([1], [2])).toThrow(RangeError);
    expect(() => pairedTTest([1, Number.NaN], [2, 3])).toThrow(RangeError);
  });
});

// Call: scipy.stats.ttest_ind_from_stats(0.062, (0.062*0.938*10000/9999)**0.5, 10000,
//   0.05, (0.05*0.95*10000/9999)**0.5, 10000, equal_var=False, alternative='greater')
//   → statistic=3.691581388863307, pvalue=0.0001117311200659501
describe('welchTTestFromMoments', () => {
  it('matches scipy.stats.ttest_ind_from_stats', () => {
    const result = welchTTestFromMoments(
      { size: 10_000, mean: 0.062, variance: (0.062 * 0.938 * 10_000) / 9999 },
      { size: 10_000, mean: 0.05, variance: (0.05 * 0.95 * 10_000) / 9999 },
      { alternative: 'greater' },
    );
    expect(result.t).toBeCloseTo(3.691581388863307, 10);
    expect(result.pValue).toBeCloseTo(0.0001117311200659501, 12);
  });

  it('gives what welchTTest gives on the observations', () => {
    const { a, b } = WELCH_REFERENCE.large_random;
    const moments = (values: readonly number[]) => {
      const center = values.reduce((sum, value) => sum + value, 0) / values.length;
      return {
        size: values.length,
        mean: center,
        variance: values.reduce((sum, value) => sum + (value - center) ** 2, 0) / (values.length - 1),
      };
    };
    const fromMoments = welchTTestFromMoments(moments(a), moments(b), { alternative: 'greater' });
    expect(fromMoments.t).toBeCloseTo(WELCH_REFERENCE.large_random.greater.t, 12);
    expect(fromMoments.df).toBeCloseTo(WELCH_REFERENCE.large_random.greater.df, 10);
    expect(fromMoments.pValue).toBeCloseTo(WELCH_REFERENCE.large_random.greater.pValue, 12);
    expect(() => welchTTestFromMoments({ size: 1, mean: 0, variance: 0 }, moments(b))).toThrow(/a.size/);
    expect(() => welchTTestFromMoments(moments(a), { size: 5, mean: 0, variance: -1 })).toThrow(/b.variance/);
  });
});
