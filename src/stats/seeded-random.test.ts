import { describe, expect, it } from 'vitest';
import { createSeededRandom } from './seeded-random.ts';

// First five outputs of Mulberry32 per seed, printed (key "mulberry32") by
// scripts/reference/stats_reference.py, which re-implements the generator in
// Python from https://github.com/bryc/code/blob/master/jshash/PRNGs.md
// (run with scipy 1.17.1 / numpy 2.4.6; no SciPy call involved here).
const MULBERRY32_REFERENCE: Record<string, readonly number[]> = {
  '0': [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111, 0.46732782293111086],
  '1': [0.6270739405881613, 0.002735721180215478, 0.5274470399599522, 0.9810509674716741, 0.9683778982143849],
  '12345': [0.9797282677609473, 0.3067522644996643, 0.484205421525985, 0.817934412509203, 0.5094283693470061],
  '4294979641': [0.9797282677609473, 0.3067522644996643, 0.484205421525985, 0.817934412509203, 0.5094283693470061],
  '-1': [0.8964226141106337, 0.189478256739676, 0.7156526781618595, 0.9440599093213677, 0.8452364315744489],
};

describe('createSeededRandom (Mulberry32)', () => {
  for (const [seed, expected] of Object.entries(MULBERRY32_REFERENCE)) {
    it(`reproduces the reference stream for seed ${seed}`, () => {
      const random = createSeededRandom(Number(seed));
      expect(Array.from({ length: expected.length }, () => random())).toEqual(expected);
    });
  }

  it('returns numbers in [0, 1) with a roughly uniform mean', () => {
    const random = createSeededRandom(99);
    let sum = 0;
    for (let draw = 0; draw < 100_000; draw += 1) {
      const value = random();
      expect(value >= 0 && value < 1).toBe(true);
      sum += value;
    }
    expect(Math.abs(sum / 100_000 - 0.5)).toBeLessThan(0.005);
  });

  it('gives independent streams per generator and different streams per seed', () => {
    const first = createSeededRandom(5);
    const second = createSeededRandom(5);
    first();
    expect(second()).not.toBe(first());
    expect(createSeededRandom(5)()).not.toBe(createSeededRandom(6)());
  });

  it('rejects seeds that are not safe integers', () => {
    expect(() => createSeededRandom(1.5)).toThrow(RangeError);
    expect(() => createSeededRandom(Number.NaN)).toThrow(RangeError);
    expect(() => createSeededRandom(2 ** 60)).toThrow(RangeError);
  });
});
