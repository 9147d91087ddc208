import { describe, expect, it } from 'vitest';
import { StorageError } from '../errors.ts';
import { parseStoredEvidence } from './evidence-schema.ts';

/** Evidence as src/loop/notebook.ts stores it for a refusal at the margin (NaN written as null by JSON). */
const MARGIN_REFUSAL = {
  checks: [
    { name: 'constraints', passed: true, statistic: 0, threshold: 0, detail: 'every mechanical constraint holds' },
    { name: 'validity', passed: true, statistic: 0, threshold: 0, detail: '0 invalid outputs (incumbent 0)' },
    {
      name: 'margin',
      passed: false,
      statistic: -0.01,
      threshold: 0.02,
      detail: 'Δoptimization = -0.01',
      data: { examples: 40, leftOut: [], tau: 0.02, thresholdK: 1, noiseSd: 0.02, repeats: 1 },
    },
  ],
  shadowConsulted: false,
  scores: { optimization: { candidate: 0.61, incumbent: 0.62 } },
  rebase: { onto: 3 },
};

describe('parseStoredEvidence', () => {
  it('reads stored evidence: its checks, whether shadow was consulted, the extra evidence as stored', () => {
    const evidence = parseStoredEvidence(JSON.stringify(MARGIN_REFUSAL), 4);
    expect(evidence.shadowConsulted).toBe(false);
    expect(evidence.checks.map((check) => check.name)).toEqual(['constraints', 'validity', 'margin']);
    expect(evidence.scores?.optimization?.candidate).toBe(0.61);
    expect(evidence.rebase).toEqual({ onto: 3 });
  });

  it('reads a NaN statistic stored as null', () => {
    const stored = structuredClone(MARGIN_REFUSAL);
    stored.checks[2]!.statistic = null as unknown as number;
    expect(parseStoredEvidence(JSON.stringify(stored), 4).checks[2]!.statistic).toBeNull();
  });

  it('refuses evidence without shadowConsulted, naming the experiment and the field (never "not consulted")', () => {
    const { shadowConsulted: _, ...stored } = MARGIN_REFUSAL;
    expect(() => parseStoredEvidence(JSON.stringify(stored), 12)).toThrow(
      /^experiment 12: stored evidence is malformed at evidence\.shadowConsulted: /,
    );
    try {
      parseStoredEvidence(JSON.stringify({ ...MARGIN_REFUSAL, shadowConsulted: 'yes' }), 12);
      expect.unreachable();
    } catch (error) {
      expect(StorageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ experimentId: '12', field: 'evidence.shadowConsulted' });
    }
  });

  it("refuses a check whose data is not its check's: the field is named down to the check's data", () => {
    const stored = structuredClone(MARGIN_REFUSAL);
    (stored.checks[2]!.data as Record<string, unknown>).leftOut = 'none';
    expect(() => parseStoredEvidence(JSON.stringify(stored), 7)).toThrow(
      /^experiment 7: stored evidence is malformed at evidence\.checks\.2\.data\.leftOut: /,
    );
  });

  it('refuses a check of no known name, and text that is not JSON', () => {
    const stored = { ...MARGIN_REFUSAL, checks: [{ ...MARGIN_REFUSAL.checks[0], name: 'vibes' }] };
    expect(() => parseStoredEvidence(JSON.stringify(stored), 3)).toThrow(
      /^experiment 3: stored evidence is malformed at evidence\.checks\.0\.name: /,
    );
    expect(() => parseStoredEvidence('{"checks": [', 3)).toThrow(/^experiment 3: stored evidence is not JSON: /);
  });
});
