import { describe, expect, it } from 'vitest';
import type { Example, PartitionName } from './example.ts';
import {
  admitFileRecords,
  describeLeak,
  findStudyLeaks,
  minimumShadowExamples,
  partitionSizeWarnings,
} from './file-admission.ts';
import type { FileExample } from './lifecycle.ts';
import { createExampleFormat } from './example-format.ts';
import { createClassificationTask } from '../tasks/classification/classification-task.ts';

const FORMAT = createExampleFormat(createClassificationTask({ labels: ['billing', 'account'] }), 'input');

function record(id: string, text: string, partition: PartitionName, line: number): FileExample {
  const example: Example = { id, input: text, text, expected: { label: 'billing' }, tags: [], partition };
  return { example, file: 'corpus/tickets.jsonl', line };
}

const TICKETS = [
  record('t1', 'I was charged twice for my March invoice and want a refund', 'optimization', 1),
  record('t2', 'My password reset mail never arrives in the inbox', 'optimization', 2),
  record('t3', 'The app crashes when I open the settings page on Android', 'shadow', 3),
  record('t4', 'Please change the billing address on my company account', 'anchor', 4),
];

describe('leaks between partitions of the corpus files', () => {
  it('a near-duplicate in another partition is a leak naming both records by file:line, though admission refuses the later one', () => {
    const twin = record('t5', 'I was charged twice for my March invoice and want a refund now', 'shadow', 5);
    const admission = admitFileRecords([...TICKETS, twin], [], { format: FORMAT });
    expect(admission.refused.map((refused) => refused.id)).toEqual(['t5']);
    const leaks = findStudyLeaks(
      admission.accepted.map((entry) => entry.example),
      new Map(),
      admission,
    );
    expect(leaks).toHaveLength(1);
    expect(leaks[0]).toMatchObject({
      first: { id: 't1', partition: 'optimization', location: 'corpus/tickets.jsonl:1' },
      second: { id: 't5', partition: 'shadow', location: 'corpus/tickets.jsonl:5' },
    });
    expect(leaks[0]!.distance).toBeGreaterThan(0);
    expect(leaks[0]!.distance).toBeLessThan(0.3);
    expect(describeLeak(leaks[0]!, 'input')).toBe(
      `corpus/tickets.jsonl:1 "t1" (optimization) and corpus/tickets.jsonl:5 "t5" (shadow) have near-duplicate inputs (bigram Jaccard distance ${leaks[0]!.distance.toFixed(3)} < 0.3)`,
    );
  });

  it('a near-duplicate in the same partition is no leak (the later record is refused and left out)', () => {
    const twin = record('t5', 'I was charged twice for my March invoice and want a refund now', 'optimization', 5);
    const admission = admitFileRecords([...TICKETS, twin], [], { format: FORMAT });
    expect(admission.refused.map((refused) => refused.id)).toEqual(['t5']);
    expect(
      findStudyLeaks(
        admission.accepted.map((entry) => entry.example),
        new Map(),
        admission,
      ),
    ).toEqual([]);
  });

  it('lists a pair found both among the examples and among the file records once', () => {
    const corpus = [
      ...TICKETS.map((entry) => entry.example),
      { ...TICKETS[0]!.example, id: 't6', partition: 'shadow' as const },
    ];
    const files = [...TICKETS, { ...record('t6', TICKETS[0]!.example.text, 'shadow', 6) }];
    const admission = { initial: false, records: files, accepted: files, admitted: [], refused: [], deferred: [] };
    expect(
      findStudyLeaks(
        corpus,
        new Map([
          ['t1', 'a:1'],
          ['t6', 'a:6'],
        ]),
        admission,
      ),
    ).toEqual([
      {
        first: { id: 't1', partition: 'optimization', location: 'a:1' },
        second: { id: 't6', partition: 'shadow', location: 'a:6' },
        distance: 0,
      },
    ]);
  });
});

describe('partitions too small to mean anything', () => {
  it('needs ⌈log₂(1/shadowAlpha)⌉ shadow examples, and never fewer than the lifecycle floor of 5', () => {
    expect(minimumShadowExamples()).toBe(5);
    expect(minimumShadowExamples(0.05)).toBe(5);
    expect(minimumShadowExamples(0.01)).toBe(7);
    expect(minimumShadowExamples(0.2)).toBe(5);
    const partitions = (shadow: number, anchor: number) => ({
      optimization: [1, 2, 3],
      anchor: Array.from({ length: anchor }),
      shadow: Array.from({ length: shadow }),
    });
    expect(partitionSizeWarnings(partitions(6, 3), { shadowAlpha: 0.01 })).toEqual([
      {
        partition: 'shadow',
        size: 6,
        needed: 7,
        message:
          'the shadow partition holds 6 example(s): fewer than 7 paired differences cannot confirm a gain at shadowAlpha 0.01; add at least 1 (kloop corpus add: admitted examples enter shadow)',
      },
    ]);
    expect(partitionSizeWarnings(partitions(6, 3))).toEqual([]);
    expect(
      partitionSizeWarnings(partitions(1, 3)).map((warning) => [warning.partition, warning.size, warning.needed]),
    ).toEqual([['shadow', 1, 5]]);
    expect(
      partitionSizeWarnings(partitions(5, 2)).map((warning) => [warning.partition, warning.size, warning.needed]),
    ).toEqual([['anchor', 2, 3]]);
  });
});
