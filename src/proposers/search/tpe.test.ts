import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../stats/seeded-random.ts';
import { searchSpaceSchema, type Params, type SearchSpace } from './space.ts';
import { DEFAULT_SAMPLER_SETTINGS, splitTrials, suggest, type Trial } from './tpe.ts';

const space: SearchSpace = searchSpaceSchema.parse({
  rate: { type: 'float', low: 0.001, high: 1, log: true },
  depth: { type: 'int', low: 1, high: 12 },
  trees: { type: 'int', low: 1, high: 64, log: true },
  x: { type: 'float', low: -2, high: 2 },
  kind: { type: 'choice', choices: ['gini', 'entropy', true, 3] },
});

/** Runs `budget` sequential trials of `objective` (higher is better); returns the best score and the trial (1-based) that first reached it. */
function optimize(
  objective: (params: Params) => number,
  searchSpace: SearchSpace,
  seed: number,
  budget: number,
  tpe: boolean,
): { best: number; at: number; scores: number[] } {
  const random = createSeededRandom(seed);
  const trials: Trial[] = [];
  for (let index = 0; index < budget; index += 1) {
    const params = suggest(searchSpace, trials, random, { ...DEFAULT_SAMPLER_SETTINGS, tpe });
    trials.push({ params, score: objective(params) });
  }
  const scores = trials.map((trial) => trial.score);
  const best = Math.max(...scores);
  return { best: Number(best.toFixed(6)), at: scores.indexOf(best) + 1, scores };
}

describe('suggest', () => {
  it('is deterministic per seed, and another seed draws other values', () => {
    const trials: Trial[] = [];
    const first = [suggest(space, trials, createSeededRandom(11)), suggest(space, trials, createSeededRandom(11))];
    expect(first[0]).toEqual(first[1]);
    expect(suggest(space, trials, createSeededRandom(12))).not.toEqual(first[0]);
    const observed = Array.from({ length: 8 }, (_, index) => ({
      params: suggest(space, [], createSeededRandom(index)),
      score: index / 8,
    }));
    expect(suggest(space, observed, createSeededRandom(5))).toEqual(suggest(space, observed, createSeededRandom(5)));
  });

  it('draws inside every range, integers as integers, log scales log-uniformly, every choice', () => {
    const random = createSeededRandom(3);
    const draws = Array.from({ length: 4000 }, () => suggest(space, [], random));
    for (const draw of draws) {
      expect(draw.rate).toBeGreaterThanOrEqual(0.001);
      expect(draw.rate).toBeLessThanOrEqual(1);
      expect(Number.isInteger(draw.depth) && (draw.depth as number) >= 1 && (draw.depth as number) <= 12).toBe(true);
      expect(Number.isInteger(draw.trees) && (draw.trees as number) >= 1 && (draw.trees as number) <= 64).toBe(true);
    }
    // Log-uniform on [0.001, 1]: half the draws below the geometric mean 0.0316 (uniform would put 3% there).
    expect(draws.filter((draw) => (draw.rate as number) < Math.sqrt(0.001)).length / draws.length).toBeCloseTo(0.5, 1);
    // Every integer of [1, 12] gets the same width: about 1/12 each, the ends included.
    const ends = draws.filter((draw) => draw.depth === 1 || draw.depth === 12).length / draws.length;
    expect(ends).toBeCloseTo(2 / 12, 1);
    expect(new Set(draws.map((draw) => draw.kind))).toEqual(new Set(['gini', 'entropy', true, 3]));
    // With a TPE model too, every value stays in its domain.
    const trials = draws.slice(0, 20).map((params, index) => ({ params, score: (params.x as number) * index }));
    for (let index = 0; index < 200; index += 1) {
      const draw = suggest(space, trials, random);
      expect(draw.x as number).toBeGreaterThanOrEqual(-2);
      expect(draw.x as number).toBeLessThanOrEqual(2);
      expect(Number.isInteger(draw.trees)).toBe(true);
      expect(['gini', 'entropy', true, 3]).toContain(draw.kind);
    }
  });

  it('splits the top ⌈γ·n⌉ as good, at least one', () => {
    const trials = [0.1, 0.9, 0.5, 0.7, 0.3].map((score) => ({ params: {}, score }));
    expect(splitTrials(trials, 0.25).good.map((trial) => trial.score)).toEqual([0.9, 0.7]);
    expect(splitTrials(trials.slice(0, 1), 0.25).good.length).toBe(1);
  });
});

describe('TPE against random search (same seed, same budget)', () => {
  const summary = (run: {
    best: number;
    at: number;
    scores: number[];
  }): { best: number; at: number; meanAfterStartup: number } => {
    const late = run.scores.slice(10);
    return {
      best: run.best,
      at: run.at,
      meanAfterStartup: Number((late.reduce((sum, score) => sum + score, 0) / late.length).toFixed(6)),
    };
  };

  it('1-D: concentrates near the optimum of −(x − 1.3)² on [−5, 5] after the startup trials', () => {
    const oneD = searchSpaceSchema.parse({ x: { type: 'float', low: -5, high: 5 } });
    const objective = (params: Params): number => -(((params.x as number) - 1.3) ** 2);
    const tpe = summary(optimize(objective, oneD, 1, 40, true));
    const random = summary(optimize(objective, oneD, 1, 40, false));
    expect(tpe).toEqual({ best: -0.000211, at: 38, meanAfterStartup: -1.117255 });
    expect(random).toEqual({ best: -0.000856, at: 1, meanAfterStartup: -10.142975 });
  });

  it('2-D: reaches a better Branin value (optimum −0.397887) and samples the good region', () => {
    const twoD = searchSpaceSchema.parse({
      x: { type: 'float', low: -5, high: 10 },
      y: { type: 'float', low: 0, high: 15 },
    });
    const branin = (params: Params): number => {
      const x = params.x as number;
      const y = params.y as number;
      const b = 5.1 / (4 * Math.PI ** 2);
      const c = 5 / Math.PI;
      const t = 1 / (8 * Math.PI);
      return -((y - b * x * x + c * x - 6) ** 2 + 10 * (1 - t) * Math.cos(x) + 10);
    };
    const tpe = summary(optimize(branin, twoD, 1, 60, true));
    const random = summary(optimize(branin, twoD, 1, 60, false));
    expect(tpe).toEqual({ best: -0.426855, at: 19, meanAfterStartup: -6.105606 });
    expect(random).toEqual({ best: -0.688678, at: 37, meanAfterStartup: -58.892816 });
  });
});
