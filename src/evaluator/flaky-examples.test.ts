import { describe, expect, it } from 'vitest';
import { FLAKY_RANGE, describeFlakyExamples, findFlakyExamples } from './flaky-examples.ts';

const valid = (exampleId: string, repeat: number, composite: number) => ({ exampleId, repeat, valid: true, composite });
const invalid = (exampleId: string, repeat: number, transient?: true) => ({
  exampleId,
  repeat,
  valid: false,
  ...(transient ? { transient } : {}),
});

describe('findFlakyExamples', () => {
  it('names an example right in some repeats and wrong in others, and one valid in some and invalid in others', () => {
    const flaky = findFlakyExamples([
      valid('a', 0, 1),
      valid('a', 1, 0),
      valid('a', 2, 1),
      valid('b', 0, 1),
      valid('b', 1, 1),
      valid('b', 2, 1),
      valid('c', 0, 0.5),
      invalid('c', 1),
      valid('c', 2, 0.5),
    ]);
    expect(flaky).toEqual({
      level: FLAKY_RANGE,
      repeats: 3,
      count: 2,
      ids: ['a', 'c'],
      examples: [
        { id: 'a', repeats: 3, valid: 3, min: 0, max: 1, why: 'range' },
        { id: 'c', repeats: 3, valid: 2, min: 0.5, max: 0.5, why: 'validity' },
      ],
    });
  });

  it('takes a composite range of 0.2 or more as flaky, and less as the wobble of a partial score', () => {
    // 0.75 − 0.55 is 0.19999999999999996 in binary floating point: still 0.2.
    expect(findFlakyExamples([valid('a', 0, 0.55), valid('a', 1, 0.75)]).ids).toEqual(['a']);
    expect(findFlakyExamples([valid('a', 0, 0.6), valid('a', 1, 0.79)]).ids).toEqual([]);
    expect(findFlakyExamples([valid('a', 0, 0.6), valid('a', 1, 0.79)], 0.1).ids).toEqual(['a']);
  });

  it('leaves out transient failures, consistently invalid examples and single repeats', () => {
    expect(findFlakyExamples([valid('a', 0, 1), invalid('a', 1, true), valid('a', 2, 1)]).ids).toEqual([]);
    expect(findFlakyExamples([invalid('a', 0), invalid('a', 1)]).ids).toEqual([]);
    const single = findFlakyExamples([valid('a', 0, 1), valid('b', 0, 0)]);
    expect(single).toMatchObject({ repeats: 1, count: 0, ids: [] });
    expect(describeFlakyExamples(single)).toBeNull();
  });

  it('says in one line which examples are flaky, or that none is', () => {
    expect(
      describeFlakyExamples(
        findFlakyExamples([valid('a', 0, 1), valid('a', 1, 0), valid('b', 0, 1), valid('b', 1, 1)]),
      ),
    ).toBe(
      'flaky examples (outcome varies across 2 repeats: valid in some and invalid in others, or a composite range ≥ 0.2): 1 — a',
    );
    expect(describeFlakyExamples(findFlakyExamples([valid('b', 0, 1), valid('b', 1, 1)]))).toBe(
      'flaky examples (outcome varies across 2 repeats: valid in some and invalid in others, or a composite range ≥ 0.2): none',
    );
    const many = findFlakyExamples(
      Array.from({ length: 3 }, (_, index) => [valid(`x${index}`, 0, 0), valid(`x${index}`, 1, 1)]).flat(),
    );
    expect(describeFlakyExamples(many, 2)).toMatch(/: 3 — x0, x1 and 1 more$/);
  });
});
