import { describe, expect, it } from 'vitest';
import { createSeededRandom, welchTTestFromMoments } from '../../stats/index.ts';
import { armDifference } from './arm-moments.ts';
import { mixtureSprt } from './mixture-sprt.ts';

// Reference: the paper's own form of Λ (Johari, Koomen, Pekelis & Walsh, KDD 2017, normal data with
// n units per arm and per-unit variance σ² in each arm), computed independently in Python:
//   lam = sqrt(2*s2/(2*s2+n*tau**2))*exp(n**2*tau**2*d**2/(4*s2*(2*s2+n*tau**2)))
//   V = 2*s2/n; hw = sqrt(V*(V+tau**2)/tau**2*(2*log(1/0.05)+log((V+tau**2)/V)))
// n=1000, s2=1, tau=0.1, d=0.15   → log Λ 3.7916202653859723, p 0.02255902062321889, hw 0.1366738367033226
// n=1000, s2=1, tau=0.1, d=0.05   → log Λ -0.3750464012806942, p 1
// n=20000, s2=0.0475, tau=0.01, d=0.01 → log Λ 8.502272850122088, p 0.00020300644104866389, hw 0.00672332046591762
describe('mixtureSprt', () => {
  it('matches the paper’s Λ, always-valid p-value and confidence sequence', () => {
    const first = mixtureSprt(0.15, 2 / 1000, { alpha: 0.05, mixingStandardDeviation: 0.1 });
    expect(first.logLikelihoodRatio).toBeCloseTo(3.7916202653859723, 12);
    expect(first.pValue).toBeCloseTo(0.02255902062321889, 12);
    expect(first.interval.lower).toBeCloseTo(0.15 - 0.1366738367033226, 12);
    expect(first.interval.upper).toBeCloseTo(0.15 + 0.1366738367033226, 12);
    const small = mixtureSprt(0.05, 2 / 1000, { alpha: 0.05, mixingStandardDeviation: 0.1 });
    expect(small.logLikelihoodRatio).toBeCloseTo(-0.3750464012806942, 12);
    expect(small.pValue).toBe(1);
    const binary = mixtureSprt(0.01, (2 * 0.0475) / 20_000, { alpha: 0.05, mixingStandardDeviation: 0.01 });
    expect(binary.logLikelihoodRatio).toBeCloseTo(8.502272850122088, 10);
    expect(binary.pValue).toBeCloseTo(0.00020300644104866389, 14);
    expect(binary.interval.upper - binary.delta).toBeCloseTo(0.00672332046591762, 14);
  });

  it('keeps the running minimum of earlier looks and is uninformative without variance', () => {
    expect(
      mixtureSprt(0.05, 2 / 1000, { alpha: 0.05, mixingStandardDeviation: 0.1, previousPValue: 0.03 }).pValue,
    ).toBe(0.03);
    expect(
      mixtureSprt(0.15, 2 / 1000, { alpha: 0.05, mixingStandardDeviation: 0.1, previousPValue: 0.5 }).pValue,
    ).toBeCloseTo(0.02255902062321889, 12);
    const none = mixtureSprt(0.2, 0, { alpha: 0.05, mixingStandardDeviation: 0.1 });
    expect(none).toEqual({
      delta: 0.2,
      varianceOfDelta: 0,
      logLikelihoodRatio: 0,
      pValue: 1,
      interval: { lower: -Infinity, upper: Infinity },
    });
  });

  it('tests against a null difference θ₀ and refuses bad settings', () => {
    // Shifting Δ̂ and θ₀ together changes nothing.
    expect(
      mixtureSprt(0.25, 2 / 1000, { alpha: 0.05, mixingStandardDeviation: 0.1, nullDifference: 0.1 })
        .logLikelihoodRatio,
    ).toBeCloseTo(3.7916202653859723, 12);
    expect(() => mixtureSprt(0.1, 0.001, { alpha: 1, mixingStandardDeviation: 0.1 })).toThrow(/alpha/);
    expect(() => mixtureSprt(0.1, 0.001, { alpha: 0.05, mixingStandardDeviation: 0 })).toThrow(
      /mixingStandardDeviation/,
    );
    expect(() => mixtureSprt(0.1, -1, { alpha: 0.05, mixingStandardDeviation: 0.1 })).toThrow(/varianceOfDelta/);
  });
});

/** Binomial(n, p) as a sum of Bernoulli draws (exact, seeded). */
function binomial(random: () => number, trials: number, probability: number): number {
  let count = 0;
  for (let index = 0; index < trials; index += 1) if (random() < probability) count += 1;
  return count;
}

describe('false accepts under continuous monitoring (seeded A/A simulation)', () => {
  it('the mSPRT stays at or below α over 30 looks while a peeking Welch test is far above it', () => {
    // 400 A/A experiments of a 5% reply rate; each look adds 200 units per arm (6 000 per arm at the 30th).
    // "Accept" = the candidate significantly better at some look, one-sided: mSPRT p < α with Δ̂ > 0
    // (τ = 0.05 per-unit SDs, the gate's default), Welch's t-test one-sided p < α.
    const random = createSeededRandom(20_261_207);
    const experiments = 400;
    const alpha = 0.05;
    let msprtAccepts = 0;
    let welchAccepts = 0;
    for (let experiment = 0; experiment < experiments; experiment += 1) {
      const incumbent = { units: 0, sum: 0, sumOfSquares: 0 };
      const candidate = { units: 0, sum: 0, sumOfSquares: 0 };
      let msprtAccepted = false;
      let welchAccepted = false;
      let previousPValue = 1;
      for (let look = 0; look < 30; look += 1) {
        for (const arm of [incumbent, candidate]) {
          const replies = binomial(random, 200, 0.05);
          arm.units += 200;
          arm.sum += replies;
          arm.sumOfSquares += replies;
        }
        const difference = armDifference({ incumbent, candidate }, 'binary', 'increase');
        const sd = Math.sqrt((difference.incumbent.variance + difference.candidate.variance) / 2);
        if (sd === 0) continue;
        const test = mixtureSprt(difference.delta, difference.varianceOfDelta, {
          alpha,
          mixingStandardDeviation: 0.05 * sd,
        });
        // The running minimum over the looks where the candidate led (as the online gate keeps it).
        if (difference.delta > 0) previousPValue = Math.min(previousPValue, test.pValue);
        if (previousPValue < alpha && difference.delta > 0) msprtAccepted = true;
        const welch = welchTTestFromMoments(
          { size: candidate.units, mean: difference.candidate.mean, variance: difference.candidate.sampleVariance },
          { size: incumbent.units, mean: difference.incumbent.mean, variance: difference.incumbent.sampleVariance },
          { alternative: 'greater' },
        );
        if (welch.pValue < alpha) welchAccepted = true;
      }
      if (msprtAccepted) msprtAccepts += 1;
      if (welchAccepted) welchAccepts += 1;
    }
    expect({ msprtAccepts, welchAccepts }).toEqual({ msprtAccepts: 2, welchAccepts: 86 });
    expect(msprtAccepts / experiments).toBeLessThanOrEqual(alpha);
    expect(welchAccepts / experiments).toBeGreaterThan(2 * alpha);
  });

  it('its confidence sequence covers the true difference at every look at once, where a peeked fixed interval does not (seeded, a true +20% lift)', () => {
    // 300 experiments, 5% vs 6% replies, 30 looks of 200 units per arm: count those whose 95% sequence ever misses Δ = 0.01.
    const random = createSeededRandom(7);
    let misses = 0;
    let fixedMisses = 0;
    for (let experiment = 0; experiment < 300; experiment += 1) {
      const incumbent = { units: 0, sum: 0, sumOfSquares: 0 };
      const candidate = { units: 0, sum: 0, sumOfSquares: 0 };
      let missed = false;
      let fixedMissed = false;
      for (let look = 0; look < 30; look += 1) {
        for (const [arm, rate] of [
          [incumbent, 0.05],
          [candidate, 0.06],
        ] as const) {
          const replies = binomial(random, 200, rate);
          arm.units += 200;
          arm.sum += replies;
          arm.sumOfSquares += replies;
        }
        const difference = armDifference({ incumbent, candidate }, 'binary', 'increase');
        const sd = Math.sqrt((difference.incumbent.variance + difference.candidate.variance) / 2);
        if (sd === 0) continue;
        const { interval } = mixtureSprt(difference.delta, difference.varianceOfDelta, {
          alpha: 0.05,
          mixingStandardDeviation: 0.05 * sd,
        });
        if (interval.lower > 0.01 || interval.upper < 0.01) missed = true;
        // The fixed-horizon 95% interval Δ̂ ± 1.96·√V, looked at after every batch.
        if (Math.abs(difference.delta - 0.01) > 1.959963984540054 * Math.sqrt(difference.varianceOfDelta))
          fixedMissed = true;
      }
      if (missed) misses += 1;
      if (fixedMissed) fixedMisses += 1;
    }
    expect({ misses, fixedMisses }).toEqual({ misses: 0, fixedMisses: 81 });
    expect(misses / 300).toBeLessThanOrEqual(0.05);
  });
});
