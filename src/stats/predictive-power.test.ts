import { describe, expect, it } from 'vitest';
import { normalQuantile, predictivePower } from './predictive-power.ts';

// Reference values: printed by scripts/reference/racing_reference.py with
// scipy 1.17.1 (scipy.stats.norm.ppf and scipy.stats.norm.cdf of the
// flat-prior predictive z, see the script's docstring).
const QUANTILES: Record<string, number> = {
  '0.5': 0,
  '0.8': 0.8416212335729143,
  '0.9': 1.2815515655446004,
  '0.95': 1.6448536269514722,
  '0.975': 1.959963984540054,
  '0.99': 2.3263478740408408,
  '0.01': -2.3263478740408408,
  '0.2': -0.8416212335729142,
};

const PREDICTIVE = [
  { mean: 0.0, variance: 0.01, observed: 40, planned: 200, critical: 0.02, power: 0.07864960352514251 },
  { mean: 0.015, variance: 0.0104, observed: 80, planned: 200, critical: 0.016, power: 0.45492501637364224 },
  { mean: -0.01, variance: 0.02, observed: 20, planned: 250, critical: 0.012, power: 0.23412832307670317 },
  { mean: 0.05, variance: 0.0064, observed: 150, planned: 200, critical: 0.01, power: 1.0 },
];

describe('normalQuantile', () => {
  it('matches scipy.stats.norm.ppf', () => {
    for (const [p, expected] of Object.entries(QUANTILES)) expect(normalQuantile(Number(p))).toBeCloseTo(expected, 10);
  });
  it('refuses p outside (0, 1)', () => {
    expect(() => normalQuantile(0)).toThrow(RangeError);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});

describe('predictivePower', () => {
  it('matches the flat-prior formula computed with scipy', () => {
    for (const { power, ...input } of PREDICTIVE) expect(predictivePower(input)).toBeCloseTo(power, 10);
  });
  it('is the final verdict when nothing is left to observe or the variance is 0', () => {
    expect(predictivePower({ mean: 0.03, variance: 0.01, observed: 200, planned: 200, critical: 0.02 })).toBe(1);
    expect(predictivePower({ mean: 0.01, variance: 0.01, observed: 200, planned: 200, critical: 0.02 })).toBe(0);
    expect(predictivePower({ mean: 0, variance: 0, observed: 10, planned: 200, critical: 0.02 })).toBe(0);
  });
  it('falls as the evidence against the gain accumulates at the same mean', () => {
    const at = (observed: number): number =>
      predictivePower({ mean: 0, variance: 0.01, observed, planned: 200, critical: 0.02 });
    expect(at(20)).toBeGreaterThan(at(80));
    expect(at(80)).toBeGreaterThan(at(160));
  });
  it('refuses impossible inputs', () => {
    expect(() => predictivePower({ mean: 0, variance: 0.01, observed: 0, planned: 10, critical: 0 })).toThrow(
      RangeError,
    );
    expect(() => predictivePower({ mean: 0, variance: 0.01, observed: 11, planned: 10, critical: 0 })).toThrow(
      RangeError,
    );
    expect(() => predictivePower({ mean: 0, variance: -1, observed: 1, planned: 10, critical: 0 })).toThrow(RangeError);
  });
});
