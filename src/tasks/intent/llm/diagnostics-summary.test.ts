import { describe, expect, it } from 'vitest';
import type { Example } from '../../../corpus/example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../../../evaluator/partition-score.ts';
import { summarizeDiagnostics } from './diagnostics-summary.ts';

function record(exampleId: string, composite: number, missed: string[]): ExampleScoreRecord {
  return {
    exampleId,
    repeat: 0,
    valid: true,
    composite,
    components: { entityRecall: composite },
    skipped: [],
    metrics: { entityPrecision: 1, relationRecall: null, projectionCoverage: null },
    diagnostics: {
      missedEntities: missed,
      spuriousEntities: ['System'],
      wrongRoles: [{ entity: 'Booking', expected: 'commitment', predicted: 'transaction' }],
      missingBehaviors: ['notification'],
      extraBehaviors: [],
      missedRelations: [],
      missingProjections: [],
      appTypeMismatch: { expected: ['booking'], predicted: 'other' },
    },
  };
}

const examples: Example[] = Array.from({ length: 30 }, (_unused, index) => ({
  id: `ex-${index}`,
  goal: `A clinic number ${index} wants patients to book sessions with therapists and get reminders. `.repeat(5),
  expected: { appType: 'booking' },
  tags: [],
  partition: 'optimization',
}));

const score: PartitionScore = {
  partition: 'optimization',
  artifactHash: 'h',
  fingerprint: 'f',
  repeats: 1,
  composite: 0.5,
  components: { entityRecall: 0.5 },
  metrics: { entityPrecision: 1, relationRecall: null, projectionCoverage: null },
  invalid: 1,
  transient: 0,
  total: 31,
  runComposites: [0.5],
  examples: [
    ...examples.map((example, index) => record(example.id, index / 30, [`Entity${index % 12}`, 'Invoice'])),
    { exampleId: 'ex-0', repeat: 1, valid: false, invalidReason: 'schema', message: 'appType: invalid' },
  ],
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  latencyMs: 0,
};

describe('summarizeDiagnostics', () => {
  it('lists what goes wrong most often, with a few short examples', () => {
    const text = summarizeDiagnostics(score, examples);
    expect(text).toContain('Invoice (×30)');
    expect(text).toContain('Booking given transaction, should be commitment (×30)');
    expect(text).toContain('booking read as other');
    expect(text).toContain('notification (×30)');
    expect(text).toContain('schema (×1)');
    expect(text.match(/^- "/gm)?.length).toBe(4);
  });

  it('stays within its character cap', () => {
    for (const maxCharacters of [200, 800, 2000]) {
      expect(summarizeDiagnostics(score, examples, { maxCharacters }).length).toBeLessThanOrEqual(maxCharacters);
    }
  });
});
