import { describe, expect, it } from 'vitest';
import type { Example } from '../corpus/example.ts';
import { aggregate } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import { feedbackProblems, summarizeFeedback } from './feedback-summary.ts';
import { characterCount } from '../text/characters.ts';

const examples: Example[] = [
  {
    id: 't1',
    input: { subject: 'Refund', body: 'I was charged twice' },
    text: 'subject: Refund\nbody: I was charged twice',
    expected: { label: 'billing' },
    tags: [],
    partition: 'optimization',
  },
  {
    id: 't2',
    input: 'My password reset mail never arrives',
    text: 'My password reset mail never arrives',
    expected: { label: 'account' },
    tags: [],
    partition: 'optimization',
  },
  {
    id: 't3',
    input: 'Invoice shows the wrong VAT',
    text: 'Invoice shows the wrong VAT',
    expected: { label: 'billing' },
    tags: [],
    partition: 'optimization',
  },
  {
    id: 't4',
    input: 'Where is my parcel?',
    text: 'Where is my parcel?',
    expected: { label: 'shipping' },
    tags: [],
    partition: 'optimization',
  },
];

function record(exampleId: string, right: boolean, feedback: string): ExampleScoreRecord {
  return {
    exampleId,
    repeat: 0,
    valid: true,
    composite: right ? 1 : 0,
    components: { accuracy: right ? 1 : 0 },
    skipped: [],
    metrics: {},
    diagnostics: {},
    feedback,
  };
}

describe('the feedback summary a proposer reads', () => {
  it("names the component means, the problems most often named and worked examples, from the task's feedback only", () => {
    const records: ExampleScoreRecord[] = [
      record('t1', false, 'expected billing, routed to technical'),
      record('t2', true, ''),
      record('t3', false, 'expected billing, routed to technical'),
      {
        exampleId: 't4',
        repeat: 0,
        valid: false,
        invalidReason: 'schema',
        message: 'the output does not fit: label: invalid option',
      },
    ];
    const score = aggregate(
      'optimization',
      'h',
      'f',
      [{ records, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latencyMs: 0 }],
      { components: ['accuracy'], metrics: [] },
    );
    expect(summarizeFeedback(score, examples)).toBe(
      [
        'Composite 0.333 over 4 example-repeats; 1 invalid.',
        'Components (mean where scored, each in [0, 1]): accuracy 0.33.',
        'Invalid outputs by reason: schema (×1).',
        'Problems most often named: expected billing, routed to technical (×2).',
        'Examples (input shortened → what went wrong):',
        '- "Where is my parcel?" → invalid output (schema): the output does not fit: label: invalid option',
        '- "subject: Refund body: I was charged twice" → expected billing, routed to technical',
        '- "Invoice shows the wrong VAT" → expected billing, routed to technical',
      ].join('\n'),
    );
  });

  it('reads a feedback text as its "; "-separated problems, without the final full stop', () => {
    expect(feedbackProblems('missed entities Invoice; wrong roles: Session is commitment, not transaction.')).toEqual([
      'missed entities Invoice',
      'wrong roles: Session is commitment, not transaction',
    ]);
    expect(feedbackProblems('')).toEqual([]);
  });

  it('stays within its character cap', () => {
    const records = examples.map((example) => record(example.id, false, `expected ${'x'.repeat(300)}, routed to y`));
    const score = aggregate('optimization', 'h', 'f', [
      { records, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latencyMs: 0 },
    ]);
    const text = summarizeFeedback(score, examples, { maxCharacters: 300 });
    expect(text.length).toBeLessThanOrEqual(300);
    expect(text.endsWith('[… cut]')).toBe(true);
  });

  it('cuts an emoji input on whole characters: no lone surrogate reaches the proposer, and the cap counts characters', () => {
    const goal = '😀'.repeat(300);
    const emoji: Example[] = [
      { id: 'e1', input: goal, text: goal, expected: { label: 'billing' }, tags: [], partition: 'optimization' },
    ];
    const score = aggregate('optimization', 'h', 'f', [
      {
        records: [record('e1', false, 'expected billing, routed to technical')],
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        latencyMs: 0,
      },
    ]);
    const text = summarizeFeedback(score, emoji);
    expect(text).toContain(`- "${'😀'.repeat(239)}…" → expected billing, routed to technical`);
    expect(/[\uD800-\uDFFF]/u.test(text)).toBe(false);
    // The whole summary's cap is in characters too: 475 characters fit in 500, though they are 674 UTF-16 units.
    const capped = summarizeFeedback(score, emoji, { maxCharacters: 500, maxTextCharacters: 200 });
    expect([capped.length, characterCount(capped)]).toEqual([674, 475]);
    expect(capped).toContain(`"${'😀'.repeat(199)}…"`);
    expect(/[\uD800-\uDFFF]/u.test(capped)).toBe(false);
  });
});
