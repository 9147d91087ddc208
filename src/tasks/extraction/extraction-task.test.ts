import { describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { defaultWeights, inputText, weightedComposite } from '../task.ts';
import { createExtractionTask, matchExact, matchNumber, matchSet, normalizeText } from './index.ts';

describe('field match rules', () => {
  it('exact: strings trimmed, case-folded, white space collapsed; other types by ===; null means absent', () => {
    expect(normalizeText('  ACME\u00a0 Inc.\n')).toBe('acme inc.');
    expect(matchExact('ACME Inc.', ' acme   inc. ').score).toBe(1);
    expect(matchExact('ACME Inc.', 'ACME Ltd').score).toBe(0);
    expect(matchExact(42, 42).score).toBe(1);
    expect(matchExact(42, '42').score).toBe(0);
    expect(matchExact(true, true).score).toBe(1);
    expect(matchExact('PO-1', undefined)).toEqual({
      match: 'exact',
      expected: 'PO-1',
      predicted: null,
      score: 0,
      missing: true,
    });
    expect(matchExact(null, undefined).score).toBe(1);
    expect(matchExact(null, null).score).toBe(1);
    expect(matchExact(null, 'PO-1')).toEqual({
      match: 'exact',
      expected: null,
      predicted: 'PO-1',
      score: 0,
      unexpected: true,
    });
  });

  it('set-f1: harmonic mean of precision and recall over normalised, de-duplicated items', () => {
    // gold {apple, kiwi, pear}, predicted {apple, pear, plum}: 2 common → F1 = 4/6.
    const set = matchSet(['Apple', 'kiwi', 'pear'], ['apple ', 'PEAR', 'plum', 'pear']);
    expect(set.score).toBe(4 / 6);
    expect(set.precision).toBe(2 / 3);
    expect(set.recall).toBe(2 / 3);
    expect(set.missingItems).toEqual(['kiwi']);
    expect(set.extraItems).toEqual(['plum']);
    expect(matchSet([], []).score).toBe(1);
    expect(matchSet([], ['x']).score).toBe(0);
    const missing = matchSet(['x'], undefined);
    expect(missing.score).toBe(0);
    expect(missing.missing).toBe(true);
    expect(missing.precision).toBeNull();
    expect(matchSet([1, 2], [2, '1']).score).toBe(0.5); // the number 1 is not the text "1"
  });

  it('number: within an absolute tolerance, allowing for floating-point rounding', () => {
    expect(matchNumber(42, 41.99, 0.01).score).toBe(1);
    expect(matchNumber(42, 41.98, 0.01).score).toBe(0);
    expect(matchNumber(0.3, 0.1 + 0.2, 0).score).toBe(1);
    expect(matchNumber(42, 42.5, 0)).toEqual({
      match: 'number',
      expected: 42,
      predicted: 42.5,
      tolerance: 0,
      difference: 0.5,
      score: 0,
    });
    expect(matchNumber(42, null, 1).missing).toBe(true);
    expect(matchNumber(null, undefined, 1).score).toBe(1);
    expect(matchNumber(null, 3, 1).unexpected).toBe(true);
  });
});

describe('createExtractionTask', () => {
  const task = createExtractionTask({
    fields: {
      vendor: { match: 'exact' },
      total: { match: 'number', tolerance: 0.01, weight: 2 },
      items: { match: 'set-f1' },
      po_number: { match: 'exact', weight: 0.5 },
    },
  });
  const weights = defaultWeights(task);

  it('declares one component per field, with the default weights', () => {
    expect(weights).toEqual({ vendor: 1, total: 2, items: 1, po_number: 0.5 });
    expect(task.components!.map((component) => component.name)).toEqual(['vendor', 'total', 'items', 'po_number']);
    expect(task.id).toMatch(/^extraction@1:[0-9a-f]{8}$/);
    expect(task.outcome).toBe('continuous');
  });

  it('scores each gold field, renormalises over the fields the gold has, and names the wrong ones in words', () => {
    const score = task.score(
      { vendor: 'ACME', total: 41.5, items: ['apple', 'pear'], extra: 'ignored' },
      { vendor: ' acme', total: 42, items: ['apple', 'kiwi'] },
      'invoice text',
      weights,
    );
    expect(score.components).toEqual({ vendor: 1, total: 0, items: 0.5 });
    expect(score.skipped).toEqual(['po_number']);
    // (1·1 + 2·0 + 1·0.5) / (1 + 2 + 1) = 0.375
    expect(score.composite).toBe(0.375);
    expect(score.composite).toBe(weightedComposite(score.components, weights));
    expect(score.feedback).toBe('total is 41.5, expected 42 (tolerance 0.01); items misses "kiwi", has extra "pear".');
    expect(score.diagnostics!.wrong).toEqual(['total', 'items']);
    expect((score.diagnostics!.fields as Record<string, unknown>).total).toEqual({
      match: 'number',
      expected: 42,
      predicted: 41.5,
      tolerance: 0.01,
      difference: 0.5,
      score: 0,
    });
  });

  it('scores a missing and an unexpected value 0, and a right output 1 with no feedback', () => {
    const score = task.score({ total: 42 }, { vendor: 'ACME', total: 42, po_number: null }, 'text', weights);
    expect(score.components).toEqual({ vendor: 0, total: 1, po_number: 1 });
    expect(score.composite).toBe(2.5 / 3.5);
    expect(score.feedback).toBe('vendor is missing, expected "ACME".');
    const unexpected = task.score({ po_number: 'PO-7' }, { po_number: null }, 'text', weights);
    expect(unexpected.composite).toBe(0);
    expect(unexpected.feedback).toBe('po_number should be absent (the text has none), got "PO-7".');
    const right = task.score(
      { vendor: 'ACME', total: 42.004, items: ['Kiwi'] },
      { vendor: 'acme', total: 42, items: ['kiwi'] },
      'text',
      weights,
    );
    expect(right.composite).toBe(1);
    expect(right.feedback).toBe('');
  });

  it("honours the study's weights, and a 0 means 0", () => {
    const score = task.score({ vendor: 'x', total: 42 }, { vendor: 'ACME', total: 42 }, 'text', {
      ...weights,
      vendor: 0,
    });
    expect(score.components).toEqual({ vendor: 0, total: 1 });
    expect(score.composite).toBe(1);
  });

  it('schemas: partial gold with at least one field and no unknown key; outputs of the declared types', () => {
    expect(task.schemas.expected.safeParse({ total: 3 }).success).toBe(true);
    expect(task.schemas.expected.safeParse({}).success).toBe(false);
    expect(task.schemas.expected.safeParse({ totl: 3 }).success).toBe(false);
    expect(task.schemas.expected.safeParse({ items: 'apple' }).success).toBe(false);
    expect(task.schemas.output.safeParse({}).success).toBe(true);
    expect(task.schemas.output.safeParse({ total: '42' }).success).toBe(false);
    expect(task.schemas.output.safeParse({ total: Number.NaN }).success).toBe(false);
    expect(task.schemas.output.safeParse({ items: [{ name: 'x' }] }).success).toBe(false);
    expect(task.schemas.output.safeParse({ items: null, vendor: null }).success).toBe(true);
    expect(task.schemas.output.safeParse('ACME').success).toBe(false);
    expect(inputText(task, { subject: 'Invoice', body: 'Total 42' })).toBe('body: Total 42\nsubject: Invoice');
  });

  it('writes an output contract naming every field', () => {
    const contract = task.outputContract!();
    expect(contract).toContain('- total: a number; a number within the tolerance.');
    expect(contract).toContain('- items: a list; F1 of the predicted items against the gold items (a set).');
    expect(contract.split('\n').at(-1)).toBe(JSON.stringify(JSON.parse(contract.split('\n').at(-1)!)));
  });

  it('refuses settings that do nothing or cannot work, naming the field', () => {
    const cases: Array<[unknown, RegExp, string]> = [
      [{ fields: {} }, /no field/, 'fields'],
      [{ fields: { a: { match: 'fuzzy' } } }, /./, 'fields.a.match'],
      [{ fields: { a: { match: 'exact', tolerance: 1 } } }, /number fields only/, 'fields.a.tolerance'],
      [{ fields: { a: { match: 'number', weight: -1 } } }, /./, 'fields.a.weight'],
      [{ fields: { a: { match: 'number', weight: 0 } } }, /more than 0/, 'fields'],
    ];
    for (const [options, message, field] of cases) {
      try {
        createExtractionTask(options as never);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        expect((error as InputError).message).toMatch(message);
        expect((error as InputError).field).toBe(field);
      }
    }
  });
});
