import { describe, expect, it } from 'vitest';
import { gateDelta, gatePValue, gateRepeats, gateWelchPValue, parseEvidence } from './evidence.ts';

describe('parseEvidence', () => {
  it('reads the gate evidence as stored', () => {
    const evidence = parseEvidence(
      JSON.stringify({
        checks: [
          { name: 'margin', passed: true, statistic: 0.0102, threshold: 0, detail: 'Δ', data: { repeats: 3 } },
          { name: 'significance', passed: true, statistic: 0.009488, threshold: 0.05, detail: 'paired', data: { pValue: 0.009487556, welch: { pValue: 0.02 } } },
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
    const nested = parseEvidence(JSON.stringify({ checks: [{ name: 'significance', passed: false, statistic: 0.3, threshold: 0.05, detail: '', data: { paired: { pValue: 0.31 } } }] }));
    expect(gatePValue(nested)).toBe(0.31);
    const bare = parseEvidence(JSON.stringify({ checks: [{ name: 'significance', passed: false, statistic: 0.3 }] }));
    expect(gatePValue(bare)).toBe(0.3);
  });

  it('never throws: unreadable JSON, missing fields and wrong types become empty values', () => {
    expect(parseEvidence('{not json')).toEqual({ checks: [], shadowConsulted: false, readable: false });
    const odd = parseEvidence(JSON.stringify({ checks: [{ passed: 'yes', statistic: 'NaN', threshold: null, data: [1] }, 7] }));
    expect(odd.checks[0]).toEqual({ name: 'unnamed', passed: false, statistic: null, threshold: null, detail: '', data: {} });
    expect(odd.checks).toHaveLength(2);
    expect(gatePValue(odd)).toBeNull();
    expect(gateDelta(odd)).toBeNull();
    expect(gateRepeats(odd)).toBeNull();
  });
});
