import { describe, expect, it } from 'vitest';
import {
  bettingConfidenceBounds,
  differenceIsBelow,
  excludesMean,
  hedgedCapital,
  meanDifferenceBounds,
  predictablePlugInBets,
} from './betting-confidence-sequence.ts';
import { createSeededRandom } from './seeded-random.ts';

// Reference values: printed by scripts/reference/racing_reference.py (NumPy
// cumulative products of the hedged capital with predictable plug-in bets,
// Waudby-Smith & Ramdas 2024; bounds on a grid of 200 001 points, step 5e-6).
const SAMPLE_12 = [0.62, 0.71, 0.55, 0.8, 0.67, 0.74, 0.59, 0.66, 0.7, 0.64, 0.69, 0.73];
const BETS_12 = [
  6.524984655851606, 5.145947826530867, 4.493262573476084, 4.154230999129491, 3.7518360383088556, 3.5952343388417574,
  3.4365191630484597, 3.324897201774295, 3.24727715892923, 3.1710651856703707, 3.1142273048610347, 3.0594227741523796,
];
const CAPITAL_CASES = [
  {
    m: 0.5,
    alpha: 0.05,
    truncation: 0.5,
    theta: 0.5,
    capital: [
      0.56, 0.6776000000000001, 0.7114800000000001, 0.9249240000000002, 1.08216108, 1.3418797392000001, 1.462648915728,
      1.6966727422444803, 2.036007290693376, 2.321048311390449, 2.7620474905546346, 3.3973184133822003,
    ],
  },
  {
    m: 0.75,
    alpha: 0.05,
    truncation: 0.5,
    theta: 0.5,
    capital: [
      0.63, 0.6804, 0.95256, 0.8573039999999998, 0.9944726399999998, 1.0143620928, 1.338957962496, 1.57997039574528,
      1.737967435319808, 2.120320271090166, 2.374758703620986, 2.469749051765825,
    ],
  },
  {
    m: 0.68,
    alpha: 0.1,
    truncation: 0.75,
    theta: 0.5,
    capital: [
      0.5703125000000001, 0.5302124023437502, 0.6917614936828617, 0.4972035735845568, 0.5088567823404448,
      0.4933481819182915, 0.5295415123843131, 0.5543637707773278, 0.5283779690221406, 0.5779134036179663,
      0.5643685582206703, 0.49823161780418557,
    ],
  },
  {
    m: 0.6,
    alpha: 0.05,
    truncation: 0.5,
    theta: 1,
    capital: [
      1.0166666666666666, 1.109861111111111, 1.063616898148148, 1.2408863811728394, 1.3132714200745885,
      1.4664864190832905, 1.454265698924263, 1.5269789838704764, 1.6542272325263492, 1.7093681402772276,
      1.8375707507980197, 2.0366409154678053,
    ],
  },
];
const SAMPLE_40 = [
  0.6914, 0.658, 0.296, 0.5993, 0.5141, 0.6281, 0.4213, 0.4558, 0.7726, 0.7249, 0.6347, 0.6685, 0.4554, 0.6221, 0.7274,
  0.5604, 0.816, 0.3305, 0.7478, 0.4435, 0.4416, 0.4754, 0.6579, 0.7552, 0.831, 0.3928, 0.6896, 0.3624, 0.6191, 0.4323,
  0.5143, 0.7117, 0.5247, 0.5815, 0.6587, 0.3023, 0.3673, 0.6124, 0.5669, 0.5757,
];
const BOUNDS = [
  { sample: SAMPLE_12, alpha: 0.05, lower: 0.39129500000000006, upper: 0.81352 },
  { sample: SAMPLE_40, alpha: 0.05, lower: 0.47003500000000004, upper: 0.651625 },
  { sample: SAMPLE_40, alpha: 0.2, lower: 0.50516, upper: 0.6304850000000001 },
];

/** A paired difference of two noisy scores of the same true quality, clipped to [0, 1]: mean exactly 0 by symmetry. */
function nullDifference(random: () => number): number {
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const score = (): number => Math.min(1, Math.max(0, 0.6 + 0.12 * normal()));
  return score() - score();
}

describe('betting confidence sequence (hedged capital, predictable plug-in bets)', () => {
  it('computes the bets and the capital process as the reference', () => {
    predictablePlugInBets(SAMPLE_12, 0.05).forEach((bet, index) => expect(bet).toBeCloseTo(BETS_12[index]!, 12));
    for (const { m, alpha, truncation, theta, capital } of CAPITAL_CASES) {
      hedgedCapital(SAMPLE_12, m, { alpha, truncation, theta }).forEach((value, index) =>
        expect(value).toBeCloseTo(capital[index]!, 10),
      );
    }
  });

  it('gives the bounds of the grid reference to its step', () => {
    for (const { sample, alpha, lower, upper } of BOUNDS) {
      const bounds = bettingConfidenceBounds(sample, { alpha });
      expect(Math.abs(bounds.lower - lower)).toBeLessThan(1e-5);
      expect(Math.abs(bounds.upper - upper)).toBeLessThan(1e-5);
    }
  });

  it('maps differences in [−1, 1] and tests "significantly below"', () => {
    const differences = SAMPLE_40.map((value) => 2 * value - 1);
    const bounds = meanDifferenceBounds(differences, { alpha: 0.05 });
    expect(bounds.lower).toBeCloseTo(2 * 0.47003500000000004 - 1, 4);
    expect(bounds.upper).toBeCloseTo(2 * 0.651625 - 1, 4);
    expect(differenceIsBelow(differences, 2 * 0.66 - 1)).toBe(true); // above the upper bound
    expect(differenceIsBelow(differences, 2 * 0.64 - 1)).toBe(false); // inside
    expect(differenceIsBelow([], 0)).toBe(false);
    expect(() => meanDifferenceBounds([1.5])).toThrow(RangeError);
  });

  it('a true zero effect, monitored after every observation, crosses the bound at most α of the time', () => {
    // 4 000 seeded sequences of 200 paired differences of mean 0, each looked at 200 times.
    const sequences = 4000;
    const length = 200;
    const alpha = 0.05;
    let crossedBetting = 0;
    let crossedPeeking = 0;
    for (let sequence = 0; sequence < sequences; sequence += 1) {
      const random = createSeededRandom(900_000 + sequence);
      const differences = Array.from({ length }, () => nullDifference(random));
      const unit = differences.map((difference) => (difference + 1) / 2);
      if (excludesMean(unit, 0.5, { alpha })) crossedBetting += 1;
      // The contrast: a fixed-n 95% z-interval re-checked after each observation (the peeking problem).
      let sum = 0;
      let squares = 0;
      for (let t = 1; t <= length; t += 1) {
        sum += differences[t - 1]!;
        squares += differences[t - 1]! ** 2;
        if (t < 10) continue;
        const mean = sum / t;
        const sd = Math.sqrt((squares - t * mean * mean) / (t - 1));
        if (Math.abs(mean) > (1.959964 * sd) / Math.sqrt(t)) {
          crossedPeeking += 1;
          break;
        }
      }
    }
    expect(crossedBetting / sequences).toBeLessThanOrEqual(alpha);
    // The same sequences do fool a fixed-n interval looked at every time: the simulation can tell.
    expect(crossedPeeking / sequences).toBeGreaterThan(3 * alpha);
  });

  it('a real difference is excluded from the bound once enough observations are in', () => {
    const random = createSeededRandom(5);
    const differences = Array.from({ length: 400 }, () => Math.max(-1, Math.min(1, nullDifference(random) + 0.05)));
    expect(
      differenceIsBelow(
        differences.map((difference) => -difference),
        0,
      ),
    ).toBe(true);
    expect(meanDifferenceBounds(differences).lower).toBeGreaterThan(0);
  });

  it('refuses observations outside [0, 1] and settings out of range', () => {
    expect(() => hedgedCapital([1.2], 0.5)).toThrow(RangeError);
    expect(() => hedgedCapital([0.2], 0.5, { alpha: 0 })).toThrow(RangeError);
    expect(() => hedgedCapital([0.2], 0.5, { truncation: 1 })).toThrow(RangeError);
    expect(bettingConfidenceBounds([])).toEqual({ lower: 0, upper: 1 });
  });
});
