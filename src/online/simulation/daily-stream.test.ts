import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../stats/index.ts';
import { createAudienceWorld, DAY_MS, HOUR_MS } from './audience-world.ts';
import { binomialDraw, simulateDailyStream } from './daily-stream.ts';

describe('binomialDraw', () => {
  it('has the binomial mean and variance (seeded) and the edge cases', () => {
    const random = createSeededRandom(5);
    for (const [trials, probability] of [
      [200, 0.05],
      [1000, 0.5],
      [300, 0.9],
    ] as const) {
      const draws = Array.from({ length: 4000 }, () => binomialDraw(random, trials, probability));
      const mean = draws.reduce((sum, value) => sum + value, 0) / draws.length;
      const variance = draws.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (draws.length - 1);
      // Within 4 standard errors of np and np(1 − p).
      expect(Math.abs(mean - trials * probability)).toBeLessThan(
        4 * Math.sqrt((trials * probability * (1 - probability)) / draws.length),
      );
      expect(Math.abs(variance / (trials * probability * (1 - probability)) - 1)).toBeLessThan(
        4 * Math.sqrt(2 / draws.length),
      );
      expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...draws)).toBeLessThanOrEqual(trials);
    }
    expect([binomialDraw(random, 0, 0.5), binomialDraw(random, 10, 0), binomialDraw(random, 10, 1)]).toEqual([
      0, 0, 10,
    ]);
  });
});

describe('simulateDailyStream (simulated)', () => {
  it('draws per-day assignments and in-window outcomes, seeded, with dropped candidate exposures', () => {
    const options = {
      world: createAudienceWorld({ seed: 3 }),
      incumbentText: '# strategy',
      candidateText: '# strategy\n- End with a single yes-or-no question.',
      start: Date.UTC(2026, 0, 5),
      days: 7,
      meanDailyUnits: 10_000,
      split: 0.5,
      attributionWindowMs: 72 * HOUR_MS,
    };
    const stream = simulateDailyStream({ ...options, random: createSeededRandom(11) });
    expect(stream.incumbent.units.map((units, day) => units + stream.candidate.units[day]!)).toEqual([
      12_000, 12_000, 12_000, 12_000, 10_000, 6000, 6000,
    ]);
    expect(simulateDailyStream({ ...options, random: createSeededRandom(11) })).toEqual(stream);
    const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
    expect([
      total(stream.incumbent.replies),
      total(stream.candidate.replies),
      total(stream.incumbent.unsubscribes),
      total(stream.candidate.unsubscribes),
    ]).toEqual([1744, 2225, 207, 190]);
    // Truth: about 35 000 units per arm × 5% × 94% (window) × weekday mix; the candidate × 1.3.
    const dropped = simulateDailyStream({ ...options, droppedCandidateShare: 0.02, random: createSeededRandom(11) });
    expect([total(dropped.incumbent.units), total(dropped.candidate.units)]).toEqual([34_976, 34_352]); // about 2% of the candidate’s ~35 000 exposures lost
    expect(stream.start + 7 * DAY_MS).toBe(Date.UTC(2026, 0, 12));
  });
});
