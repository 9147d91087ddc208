import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../stats/index.ts';
import { chiSquareGoodnessOfFit, sampleRatioMismatch } from './sample-ratio-mismatch.ts';

// Reference values: scipy 1.17.1, python3 -c "import scipy.stats as st; print(st.chisquare(...))"
// st.chisquare([50000,49000],[49500,49500])  → statistic=10.1010101010101,  pvalue=0.0014818807747203882
// st.chisquare([1010,990],[1000,1000])       → statistic=0.2,              pvalue=0.6547208460185768
// st.chisquare([8000,1900],[7920,1980])      → statistic=4.040404040404041, pvalue=0.044423184850005966
// st.chisquare([950,50,3900,1010,5000,4890],[950,50,3928,982,4945,4945],ddof=2)
//                                            → statistic=2.2214213785448487, pvalue=0.5277413617985691
// st.chisquare([10000,10000],[10000,10000])  → statistic=0.0,              pvalue=1.0
describe('chiSquareGoodnessOfFit', () => {
  it('matches scipy.stats.chisquare', () => {
    const cases: Array<[number[], number[], number, number, number]> = [
      [[50_000, 49_000], [49_500, 49_500], 0, 10.1010101010101, 0.0014818807747203882],
      [[1010, 990], [1000, 1000], 0, 0.2, 0.6547208460185768],
      [[8000, 1900], [7920, 1980], 0, 4.040404040404041, 0.044423184850005966],
      [[950, 50, 3900, 1010, 5000, 4890], [950, 50, 3928, 982, 4945, 4945], 2, 2.2214213785448487, 0.5277413617985691],
      [[10_000, 10_000], [10_000, 10_000], 0, 0, 1],
    ];
    for (const [observed, expected, ddof, statistic, pValue] of cases) {
      const result = chiSquareGoodnessOfFit(observed, expected, ddof);
      expect(result.statistic).toBeCloseTo(statistic, 10);
      expect(result.pValue).toBeCloseTo(pValue, 12);
      expect(result.degreesOfFreedom).toBe(observed.length - 1 - ddof);
    }
  });

  it('refuses impossible input', () => {
    expect(() => chiSquareGoodnessOfFit([1, 2], [1])).toThrow(/same number of cells/);
    expect(() => chiSquareGoodnessOfFit([-1, 2], [1, 1])).toThrow(/observed\[0\]/);
    expect(() => chiSquareGoodnessOfFit([1, 2], [0, 3])).toThrow(/expected\[0\]/);
  });
});

describe('sampleRatioMismatch', () => {
  it('sums the periods of a ramp into one χ² with one df per period (scipy values above)', () => {
    const one = sampleRatioMismatch([{ incumbent: 50_000, candidate: 49_000 }], { split: 0.5, mixingShareSd: 0.005 });
    expect(one.chiSquare.pValue).toBeCloseTo(0.0014818807747203882, 12);
    expect(one.expectedShare).toBe(0.5);
    const ramp = sampleRatioMismatch(
      [
        { incumbent: 950, candidate: 50, candidateShare: 0.05 },
        { incumbent: 0, candidate: 0, candidateShare: 0.1 },
        { incumbent: 3900, candidate: 1010, candidateShare: 0.2 },
        { incumbent: 5000, candidate: 4890 },
      ],
      { split: 0.5, mixingShareSd: 0.005 },
    );
    expect(ramp.chiSquare.statistic).toBeCloseTo(2.2214213785448487, 10);
    expect(ramp.chiSquare.degreesOfFreedom).toBe(3);
    expect(ramp.chiSquare.pValue).toBeCloseTo(0.5277413617985691, 12);
    expect([ramp.incumbent, ramp.candidate]).toEqual([9850, 5950]);
  });

  it('gives an always-valid p-value no smaller than the fixed one, as the mixture of the χ² statistic', () => {
    // One period: Λ = √(V/(V+τ²))·exp(τ²χ²/(2(V+τ²))), V = ¼/99 000, τ = 0.005, χ² = 10.1010…
    const result = sampleRatioMismatch([{ incumbent: 50_000, candidate: 49_000 }], {
      split: 0.5,
      mixingShareSd: 0.005,
    });
    const v = 0.25 / 99_000;
    const expected =
      1 / (Math.sqrt(v / (v + 0.000025)) * Math.exp((0.000025 * 10.1010101010101) / (2 * (v + 0.000025))));
    expect(result.sequentialPValue).toBeCloseTo(expected, 12);
    expect(result.sequentialPValue).toBeGreaterThan(result.chiSquare.pValue);
    expect(
      sampleRatioMismatch([{ incumbent: 50_000, candidate: 49_000 }], {
        split: 0.5,
        mixingShareSd: 0.005,
        previousPValue: 0.0001,
      }).sequentialPValue,
    ).toBe(0.0001);
    expect(sampleRatioMismatch([], { split: 0.5, mixingShareSd: 0.005 }).chiSquare).toEqual({
      statistic: 0,
      degreesOfFreedom: 0,
      pValue: 1,
    });
  });

  it('raises false alarms under daily looks with the fixed p-value, and far fewer with the always-valid one (seeded)', () => {
    // 1 000 A/A assignment streams, 40 daily looks of 2 000 units each (split ½): alarm at p < 0.001 at any look.
    const random = createSeededRandom(33);
    let fixedAlarms = 0;
    let sequentialAlarms = 0;
    for (let experiment = 0; experiment < 1000; experiment += 1) {
      let candidate = 0;
      let units = 0;
      let previousPValue = 1;
      let fixed = false;
      for (let day = 0; day < 40; day += 1) {
        for (let unit = 0; unit < 2000; unit += 1) if (random() < 0.5) candidate += 1;
        units += 2000;
        const result = sampleRatioMismatch([{ incumbent: units - candidate, candidate }], {
          split: 0.5,
          mixingShareSd: 0.005,
          previousPValue,
        });
        previousPValue = result.sequentialPValue;
        if (result.chiSquare.pValue < 0.001) fixed = true;
      }
      if (fixed) fixedAlarms += 1;
      if (previousPValue < 0.001) sequentialAlarms += 1;
    }
    expect({ fixedAlarms, sequentialAlarms }).toEqual({ fixedAlarms: 13, sequentialAlarms: 0 });
  });
});
