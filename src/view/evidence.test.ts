import { describe, expect, it } from 'vitest';
import { gateDelta, gatePValue, gateRepeats, gateRepeatsOfSides, gateWelchPValue, parseEvidence } from './evidence.ts';

describe('parseEvidence', () => {
  it('reads the gate evidence as stored', () => {
    const evidence = parseEvidence(
      JSON.stringify({
        checks: [
          { name: 'margin', passed: true, statistic: 0.0102, threshold: 0, detail: 'Δ', data: { repeats: 3 } },
          {
            name: 'significance',
            passed: true,
            statistic: 0.009488,
            threshold: 0.05,
            detail: 'paired',
            data: { pValue: 0.009487556, welch: { pValue: 0.02 } },
          },
        ],
        shadowConsulted: true,
      }),
    );
    expect(evidence.readable).toBe(true);
    expect(evidence.shadowConsulted).toBe(true);
    expect(gateDelta(evidence)).toBe(0.0102);
    expect(gatePValue(evidence)).toBe(0.009487556);
    expect(gateWelchPValue(evidence)).toBe(0.02);
    expect(gateRepeats(evidence)).toBe(3);
  });

  it('reads a paired test nested under data.paired, and falls back to the statistic', () => {
    const nested = parseEvidence(
      JSON.stringify({
        checks: [
          {
            name: 'significance',
            passed: false,
            statistic: 0.3,
            threshold: 0.05,
            detail: '',
            data: { paired: { pValue: 0.31 } },
          },
        ],
      }),
    );
    expect(gatePValue(nested)).toBe(0.31);
    const bare = parseEvidence(JSON.stringify({ checks: [{ name: 'significance', passed: false, statistic: 0.3 }] }));
    expect(gatePValue(bare)).toBe(0.3);
  });

  it('never throws: unreadable JSON, missing fields and wrong types become empty values', () => {
    expect(parseEvidence('{not json')).toEqual({
      checks: [],
      shadowConsulted: false,
      readable: false,
      scores: null,
      rebased: null,
    });
    const odd = parseEvidence(
      JSON.stringify({ checks: [{ passed: 'yes', statistic: 'NaN', threshold: null, data: [1] }, 7] }),
    );
    expect(odd.checks[0]).toEqual({
      name: 'unnamed',
      passed: false,
      statistic: null,
      threshold: null,
      detail: '',
      data: {},
    });
    expect(odd.checks).toHaveLength(2);
    expect(gatePValue(odd)).toBeNull();
    expect(gateDelta(odd)).toBeNull();
    expect(gateRepeats(odd)).toBeNull();
    expect(odd.scores).toBeNull();
    expect(odd.rebased).toBeNull();
  });

  it("reads the scores the gate compared, the rebase, and a topped-up incumbent's repeats", () => {
    const evidence = parseEvidence(
      JSON.stringify({
        checks: [
          { name: 'margin', passed: true, statistic: 0.05, threshold: 0.01, detail: '', data: { repeats: '5+20' } },
          // The statistic is the deciding p (the larger of the two tests); the paired one is data.pValue.
          {
            name: 'significance',
            passed: true,
            statistic: 0.031,
            threshold: 0.05,
            detail: '',
            data: { pValue: 0.0042, welch: { pValue: 0.031 } },
          },
        ],
        shadowConsulted: false,
        rebased: { method: 'three-way-merge', conflicts: 0, proposedHash: 'abc' },
        scores: {
          optimization: {
            incumbent: 0.6,
            candidate: 0.65,
            evaluated: 20,
            examples: { ids: ['a', 'b'], incumbent: [0.5, 0.7], candidate: [0.6, 0.7], leftOut: ['c'] },
          },
          anchor: {
            incumbent: null,
            candidate: 0.8,
            evaluated: 10,
            examples: { ids: [], incumbent: [], candidate: [], leftOut: [] },
          },
          usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.0042 },
          repeats: { candidate: 5, incumbent: 20 },
        },
      }),
    );
    expect(evidence.scores).toEqual({
      optimization: {
        incumbent: 0.6,
        candidate: 0.65,
        evaluated: 20,
        examples: { ids: ['a', 'b'], incumbent: [0.5, 0.7], candidate: [0.6, 0.7], leftOut: ['c'] },
      },
      anchor: {
        incumbent: null,
        candidate: 0.8,
        evaluated: 10,
        examples: { ids: [], incumbent: [], candidate: [], leftOut: [] },
      },
      shadow: null,
      usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.0042 },
      repeats: { candidate: 5, incumbent: 20 },
    });
    expect(evidence.rebased).toEqual({ method: 'three-way-merge', conflicts: 0, proposedHash: 'abc' });
    expect(gatePValue(evidence)).toBe(0.0042);
    expect(gateWelchPValue(evidence)).toBe(0.031);
    expect(gateRepeatsOfSides(evidence)).toEqual({ candidate: 5, incumbent: 20 });
    // Without scores, the margin check's "candidate+incumbent" repeats.
    const margin = parseEvidence(
      JSON.stringify({
        checks: [{ name: 'margin', passed: false, statistic: 0, threshold: 0, detail: '', data: { repeats: '5+20' } }],
      }),
    );
    expect(gateRepeatsOfSides(margin)).toEqual({ candidate: 5, incumbent: 20 });
    expect(gateRepeats(margin)).toBe(5);
    // Per-example arrays that do not line up with their ids are dropped, not misread.
    const ragged = parseEvidence(
      JSON.stringify({
        scores: {
          optimization: {
            incumbent: 0.5,
            candidate: 0.6,
            evaluated: 2,
            examples: { ids: ['a', 'b'], incumbent: [0.5], candidate: [0.6, 0.7] },
          },
        },
      }),
    );
    expect(ragged.scores?.optimization?.examples).toEqual({ ids: [], incumbent: [], candidate: [], leftOut: [] });
    expect(ragged.scores?.repeats).toEqual({ candidate: null, incumbent: null });
  });
});
