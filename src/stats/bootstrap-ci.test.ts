import { describe, expect, it } from 'vitest';
import { bootstrapCI } from './bootstrap-ci.ts';
import { mean, standardError } from './descriptive.ts';
import { createSeededRandom } from './seeded-random.ts';

/**
 * The reference sample of scripts/reference/stats_reference.py
 * (BOOTSTRAP_VALUES): integer-built, exactly reproducible, roughly
 * bell-shaped (sum of two sawtooth sequences), n = 200.
 */
const VALUES = Array.from({ length: 200 }, (_, index) => (((index * 37) % 101) + ((index * 53) % 103)) / 10);

// Printed (key "bootstrap") by scripts/reference/stats_reference.py with
// scipy 1.17.1 and numpy 2.4.6:
// - scipyLow/scipyHigh: scipy.stats.bootstrap((x,), np.mean, method='percentile',
//   confidence_level=0.95, n_resamples=10000, rng=12345) — a different random
//   stream, so compared loosely;
// - mulberry32*: the same percentile bootstrap re-implemented in Python on the
//   Mulberry32 stream with np.quantile(method='linear'), which bootstrapCI
//   must reproduce exactly.
const BOOTSTRAP_REFERENCE = {
  mean: 10.0415,
  standardError: 0.2977624069707677,
  scipyLow: 9.456475,
  scipyHigh: 10.6295125,
  mulberry32Seed2024: { low: 9.461000000000002, high: 10.61801250000001 },
  mulberry32Seed7Confidence90Resamples500: {
    low: 9.4682,
    high: 10.533049999999998,
  },
} as const;

describe('bootstrapCI', () => {
  it('reproduces the Mulberry32 percentile bootstrap of the reference script exactly', () => {
    const defaults = bootstrapCI(VALUES, { seed: 2024 });
    expect(defaults.low).toBeCloseTo(BOOTSTRAP_REFERENCE.mulberry32Seed2024.low, 9);
    expect(defaults.high).toBeCloseTo(BOOTSTRAP_REFERENCE.mulberry32Seed2024.high, 9);
    const custom = bootstrapCI(VALUES, { seed: 7, confidence: 0.9, resamples: 500 });
    expect(custom.low).toBeCloseTo(BOOTSTRAP_REFERENCE.mulberry32Seed7Confidence90Resamples500.low, 9);
    expect(custom.high).toBeCloseTo(BOOTSTRAP_REFERENCE.mulberry32Seed7Confidence90Resamples500.high, 9);
  });

  it('agrees loosely with scipy.stats.bootstrap(method="percentile") (different random streams)', () => {
    // Monte Carlo error of each endpoint is about 0.03 SE per implementation; allow 0.2 SE.
    const { low, high } = bootstrapCI(VALUES, { seed: 1 });
    const allowed = 0.2 * BOOTSTRAP_REFERENCE.standardError;
    expect(Math.abs(low - BOOTSTRAP_REFERENCE.scipyLow)).toBeLessThan(allowed);
    expect(Math.abs(high - BOOTSTRAP_REFERENCE.scipyHigh)).toBeLessThan(allowed);
  });

  it('contains the mean and spans roughly ±1.96 standard errors on a large bell-shaped sample', () => {
    expect(mean(VALUES)).toBeCloseTo(BOOTSTRAP_REFERENCE.mean, 12);
    const center = mean(VALUES);
    const error = standardError(VALUES);
    const { low, high } = bootstrapCI(VALUES, { seed: 3 });
    expect(low).toBeLessThan(center);
    expect(high).toBeGreaterThan(center);
    // The bootstrap SE of the mean is s·√((n−1)/n)/√n, so the half-width is ≈ 1.96 SE.
    expect((high - low) / 2 / (1.96 * error)).toBeGreaterThan(0.9);
    expect((high - low) / 2 / (1.96 * error)).toBeLessThan(1.1);
  });

  it('is close to the normal interval on a normal sample drawn with Box–Muller', () => {
    const random = createSeededRandom(11);
    const sample = Array.from({ length: 400 }, () => {
      const radius = Math.sqrt(-2 * Math.log(1 - random()));
      return 5 + 2 * radius * Math.cos(2 * Math.PI * random());
    });
    const center = mean(sample);
    const error = standardError(sample);
    const { low, high } = bootstrapCI(sample, { seed: 12, resamples: 5000 });
    expect(Math.abs(low - (center - 1.96 * error))).toBeLessThan(0.15 * error);
    expect(Math.abs(high - (center + 1.96 * error))).toBeLessThan(0.15 * error);
  });

  it('is reproducible: the same seed gives the same interval', () => {
    expect(bootstrapCI(VALUES, { seed: 42 })).toEqual(bootstrapCI(VALUES, { seed: 42 }));
    expect(bootstrapCI(VALUES, { seed: 42, confidence: 0.8, resamples: 300 })).toEqual(
      bootstrapCI(VALUES, { seed: 42, confidence: 0.8, resamples: 300 }),
    );
  });

  it('usually gives a different interval for a different seed', () => {
    const intervals = [1, 2, 3, 4, 5].map((seed) => bootstrapCI(VALUES, { seed, resamples: 2000 }));
    const distinct = new Set(intervals.map(({ low, high }) => `${low}/${high}`));
    expect(distinct.size).toBe(intervals.length);
  });

  it('narrows with a lower confidence level', () => {
    const wide = bootstrapCI(VALUES, { seed: 9, confidence: 0.99 });
    const narrow = bootstrapCI(VALUES, { seed: 9, confidence: 0.5 });
    expect(wide.low).toBeLessThan(narrow.low);
    expect(wide.high).toBeGreaterThan(narrow.high);
  });

  it('collapses to the value for a single or constant sample', () => {
    expect(bootstrapCI([0.7], { seed: 1 })).toEqual({ low: 0.7, high: 0.7 });
    expect(bootstrapCI([2, 2, 2, 2], { seed: 1, resamples: 50 })).toEqual({ low: 2, high: 2 });
  });

  it('rejects empty samples, non-finite values and bad options', () => {
    expect(() => bootstrapCI([], { seed: 1 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, Number.NaN], { seed: 1 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, 2], { seed: 1, confidence: 1 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, 2], { seed: 1, confidence: 0 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, 2], { seed: 1, resamples: 0 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, 2], { seed: 1, resamples: 2.5 })).toThrow(RangeError);
    expect(() => bootstrapCI([1, 2], { seed: 0.5 })).toThrow(RangeError);
  });
});
