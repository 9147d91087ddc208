import { describe, expect, it } from 'vitest';
import { ALTERNATIVES } from './alternative.ts';
import { mcnemarExactTest, mcnemarExactTestFromCounts, mcnemarMinimumPairs } from './mcnemar.ts';

// Reference values: printed by scripts/reference/stats_reference.py with scipy 1.17.1.
// Call: scipy.stats.binomtest(b, b + c, 0.5, alternative=...) (statistic = k, n = b + c).
// Each case gives the 2 × 2 table of paired outcomes (first = candidate, second = incumbent):
// both right, b (first right, second wrong), c (first wrong, second right), both wrong.
const MCNEMAR_REFERENCE = {
  candidate_better: {
    bothRight: 30,
    b: 9,
    c: 2,
    bothWrong: 19,
    'two-sided': { statistic: 9, n: 11, pValue: 0.0654296875 },
    greater: { statistic: 9, n: 11, pValue: 0.03271484375 },
    less: { statistic: 9, n: 11, pValue: 0.994140625 },
  },
  candidate_worse: {
    bothRight: 25,
    b: 1,
    c: 7,
    bothWrong: 27,
    'two-sided': { statistic: 1, n: 8, pValue: 0.0703125 },
    greater: { statistic: 1, n: 8, pValue: 0.99609375 },
    less: { statistic: 1, n: 8, pValue: 0.03515625 },
  },
  no_difference: {
    bothRight: 40,
    b: 5,
    c: 5,
    bothWrong: 10,
    'two-sided': { statistic: 5, n: 10, pValue: 1.0 },
    greater: { statistic: 5, n: 10, pValue: 0.623046875 },
    less: { statistic: 5, n: 10, pValue: 0.623046875 },
  },
  one_discordant: {
    bothRight: 10,
    b: 1,
    c: 0,
    bothWrong: 9,
    'two-sided': { statistic: 1, n: 1, pValue: 1.0 },
    greater: { statistic: 1, n: 1, pValue: 0.5 },
    less: { statistic: 1, n: 1, pValue: 1.0 },
  },
  large_clear: {
    bothRight: 120,
    b: 40,
    c: 18,
    bothWrong: 22,
    'two-sided': { statistic: 40, n: 58, pValue: 0.005354859650800294 },
    greater: { statistic: 40, n: 58, pValue: 0.002677429825400147 },
    less: { statistic: 40, n: 58, pValue: 0.9988837241900286 },
  },
  large_borderline: {
    bothRight: 300,
    b: 31,
    c: 19,
    bothWrong: 50,
    'two-sided': { statistic: 31, n: 50, pValue: 0.11892045255943628 },
    greater: { statistic: 31, n: 50, pValue: 0.05946022627971814 },
    less: { statistic: 31, n: 50, pValue: 0.9675456764638639 },
  },
  tiny_p_value: {
    bothRight: 0,
    b: 60,
    c: 0,
    bothWrong: 0,
    'two-sided': { statistic: 60, n: 60, pValue: 1.734723475976807e-18 },
    greater: { statistic: 60, n: 60, pValue: 8.673617379884035e-19 },
    less: { statistic: 60, n: 60, pValue: 1.0 },
  },
  odd_total: {
    bothRight: 3,
    b: 4,
    c: 3,
    bothWrong: 1,
    'two-sided': { statistic: 4, n: 7, pValue: 1.0 },
    greater: { statistic: 4, n: 7, pValue: 0.5 },
    less: { statistic: 4, n: 7, pValue: 0.7734375 },
  },
} as const;

/** Paired outcome vectors with the case's counts, interleaved so the pairs are not sorted. */
function vectors(counts: { bothRight: number; b: number; c: number; bothWrong: number }): [number[], number[]] {
  const pairs: Array<[number, number]> = [];
  for (let index = 0; index < counts.bothRight; index += 1) pairs.push([1, 1]);
  for (let index = 0; index < counts.b; index += 1) pairs.push([1, 0]);
  for (let index = 0; index < counts.c; index += 1) pairs.push([0, 1]);
  for (let index = 0; index < counts.bothWrong; index += 1) pairs.push([0, 0]);
  const shuffled = pairs
    .map((pair, index) => ({ pair, key: (index * 37) % 101 }))
    .sort((left, right) => left.key - right.key);
  return [shuffled.map(({ pair }) => pair[0]), shuffled.map(({ pair }) => pair[1])];
}

/** |actual − expected| within a relative 1e-12 (p-values as small as 1e-18 keep their digits). */
function expectRelativelyClose(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12 * Math.abs(expected));
}

describe('mcnemarExactTest', () => {
  for (const [name, reference] of Object.entries(MCNEMAR_REFERENCE)) {
    for (const alternative of ALTERNATIVES) {
      it(`matches scipy on ${name} (${alternative})`, () => {
        const [first, second] = vectors(reference);
        const result = mcnemarExactTest(first as Array<0 | 1>, second as Array<0 | 1>, alternative);
        expect(result.b).toBe(reference.b);
        expect(result.c).toBe(reference.c);
        expect(result.bothRight).toBe(reference.bothRight);
        expect(result.bothWrong).toBe(reference.bothWrong);
        expect(result.statistic).toBe(reference[alternative].statistic);
        expect(result.discordant).toBe(reference[alternative].n);
        expect(result.pairs).toBe(first.length);
        expectRelativelyClose(result.pValue, reference[alternative].pValue);
        expect(mcnemarExactTestFromCounts(reference, alternative).pValue).toBe(result.pValue);
      });
    }
  }

  it('returns the evidence: test, alternative, counts, statistic', () => {
    expect(mcnemarExactTest([true, true, true, false], [true, false, false, false], 'greater')).toEqual({
      test: 'mcnemar-exact',
      alternative: 'greater',
      b: 2,
      c: 0,
      bothRight: 1,
      bothWrong: 1,
      pairs: 4,
      discordant: 2,
      statistic: 2,
      pValue: 0.25,
    });
    expect(mcnemarExactTestFromCounts({ b: 9, c: 2 }).alternative).toBe('two-sided');
  });

  it('gives p = 1 when no pair is discordant (no evidence either way)', () => {
    for (const alternative of ALTERNATIVES) {
      expect(mcnemarExactTest([1, 0, 1], [1, 0, 1], alternative).pValue).toBe(1);
      expect(mcnemarExactTest([], [], alternative).pValue).toBe(1);
    }
  });

  it('refuses unpaired or non-binary outcomes and bad counts', () => {
    expect(() => mcnemarExactTest([1, 0], [1])).toThrow(/equal length/);
    expect(() => mcnemarExactTest([1, 0.5 as never], [1, 0])).toThrow(/first\[1\] is 0.5/);
    expect(() => mcnemarExactTest([1, 0], [1, 2 as never])).toThrow(/second\[1\] is 2/);
    expect(() => mcnemarExactTestFromCounts({ b: -1, c: 2 })).toThrow(RangeError);
    expect(() => mcnemarExactTestFromCounts({ b: 1.5, c: 2 })).toThrow(RangeError);
    expect(() => mcnemarExactTestFromCounts({ b: 1, c: 2 }, 'bigger' as never)).toThrow(RangeError);
  });
});

describe('mcnemarMinimumPairs', () => {
  it('is ⌈log₂(1/α)⌉: the fewest pairs, all in favour, whose exact one-sided p-value reaches α', () => {
    // p = 0.5^n: 0.5^4 = 0.0625 > 0.05 ≥ 0.5^5 = 0.03125; 0.5^6 = 0.015625 > 0.01 ≥ 0.5^7 = 0.0078125
    expect(mcnemarMinimumPairs(0.05)).toBe(5);
    expect(mcnemarMinimumPairs(0.01)).toBe(7);
    expect(mcnemarMinimumPairs(0.5)).toBe(1);
    expect(mcnemarExactTestFromCounts({ b: 5, c: 0 }, 'greater').pValue).toBeLessThanOrEqual(0.05);
    expect(mcnemarExactTestFromCounts({ b: 4, c: 0 }, 'greater').pValue).toBeGreaterThan(0.05);
    expect(() => mcnemarMinimumPairs(0)).toThrow(RangeError);
  });
});
