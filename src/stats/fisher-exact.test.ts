import { describe, expect, it } from 'vitest';
import { ALTERNATIVES } from './alternative.ts';
import { fisherExactTest } from './fisher-exact.ts';

// Reference values: printed by scripts/reference/stats_reference.py with scipy 1.17.1.
// Call: scipy.stats.fisher_exact(table, alternative=...).
const FISHER_REFERENCE = {
  candidate_worse: {
    table: [
      [10, 240],
      [2, 498],
    ],
    'two-sided': { oddsRatio: 10.375, pValue: 0.0004923897885680823 },
    greater: { oddsRatio: 10.375, pValue: 0.0004923897885680823 },
    less: { oddsRatio: 10.375, pValue: 0.999958958472564 },
  },
  slightly_worse: {
    table: [
      [5, 245],
      [2, 498],
    ],
    'two-sided': { oddsRatio: 5.081632653061225, pValue: 0.0444982995921863 },
    greater: { oddsRatio: 5.081632653061225, pValue: 0.0444982995921863 },
    less: { oddsRatio: 5.081632653061225, pValue: 0.9933703331530572 },
  },
  noise: {
    table: [
      [3, 247],
      [1, 499],
    ],
    'two-sided': { oddsRatio: 6.060728744939271, pValue: 0.11051693404634579 },
    greater: { oddsRatio: 6.060728744939271, pValue: 0.11051693404634579 },
    less: { oddsRatio: 6.060728744939271, pValue: 0.9878514985716745 },
  },
  equal: {
    table: [
      [2, 48],
      [2, 48],
    ],
    'two-sided': { oddsRatio: 1.0, pValue: 1.0 },
    greater: { oddsRatio: 1.0, pValue: 0.6913464542330522 },
    less: { oddsRatio: 1.0, pValue: 0.6913464542330522 },
  },
  small_table: {
    table: [
      [7, 3],
      [2, 8],
    ],
    'two-sided': { oddsRatio: 9.333333333333334, pValue: 0.06977851869492736 },
    greater: { oddsRatio: 9.333333333333334, pValue: 0.03488925934746368 },
    less: { oddsRatio: 9.333333333333334, pValue: 0.9972612526792093 },
  },
  first_better: {
    table: [
      [1, 99],
      [9, 91],
    ],
    'two-sided': { oddsRatio: 0.10213243546576879, pValue: 0.018487679877476362 },
    greater: { oddsRatio: 0.10213243546576879, pValue: 0.9992289739372822 },
    less: { oddsRatio: 0.10213243546576879, pValue: 0.009243839938738181 },
  },
} as const;

describe('fisherExactTest', () => {
  for (const [name, reference] of Object.entries(FISHER_REFERENCE)) {
    for (const alternative of ALTERNATIVES) {
      it(`matches scipy on ${name} (${alternative})`, () => {
        const table = reference.table as unknown as [[number, number], [number, number]];
        const result = fisherExactTest(table, alternative);
        expect(result.pValue).toBeCloseTo(reference[alternative].pValue, 9);
        expect(result.oddsRatio).toBeCloseTo(reference[alternative].oddsRatio, 9);
      });
    }
  }

  it('gives p = 1 when no group has an event, and refuses counts that are not whole numbers', () => {
    expect(
      fisherExactTest(
        [
          [0, 250],
          [0, 500],
        ],
        'greater',
      ).pValue,
    ).toBe(1);
    expect(() =>
      fisherExactTest([
        [1.5, 2],
        [3, 4],
      ]),
    ).toThrow(RangeError);
    expect(() =>
      fisherExactTest([
        [-1, 2],
        [3, 4],
      ]),
    ).toThrow(RangeError);
  });
});
