import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Example } from './example.ts';
import type { CandidateRecord } from './admission.ts';
import {
  NEAR_DUPLICATE_DISTANCE,
  checkAdmission,
  groundingKeys,
  isEntityGrounded,
  readCandidateRecords,
} from './admission.ts';
import { intentExample } from '../test-support/intent-examples.ts';
import { createClassificationTask } from '../tasks/classification/classification-task.ts';
import { createExampleFormat } from './example-format.ts';

const directory = mkdtempSync(path.join(tmpdir(), 'kloop-admission-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const EXISTING_RECORD = {
  id: 'booking-salon-01',
  goal: 'A booking app for our hair salon: clients book appointments with a stylist, pay a deposit and get an SMS reminder the day before.',
  expected: {
    appType: 'booking',
    entities: [
      { name: 'Client', role: 'party' },
      { name: 'Appointment', role: 'commitment' },
      { name: 'Stylist', role: 'party' },
    ],
  },
  tags: [],
  partition: 'optimization' as const,
};
const EXISTING = intentExample(EXISTING_RECORD);

function record(example: Example, index = 0): CandidateRecord {
  return { index, id: example.id, example, errors: [] };
}

describe('grounding', () => {
  it('accepts a name, an alias, a plural, camelCase and a name written as one word', () => {
    const keys = groundingKeys('Technicians log work orders, and each check-in records the customers on site.');
    for (const name of ['Technician', 'WorkOrder', 'work_orders', 'CheckIn', 'Customer'])
      expect(isEntityGrounded({ name }, keys), name).toBe(true);
    expect(isEntityGrounded({ name: 'Engineer', aliases: ['Technician'] }, keys)).toBe(true);
    expect(isEntityGrounded({ name: 'Invoice' }, keys)).toBe(false);
  });
});

describe('checkAdmission', () => {
  it('admits a grounded, non-trivial, new example into shadow', () => {
    const candidate = intentExample({
      id: 'helpdesk-school-it-09',
      goal: 'Teachers report broken laptops as tickets; the IT technician assigns each ticket a priority and closes it when fixed.',
      expected: {
        appType: 'helpdesk',
        entities: [{ name: 'Teacher', role: 'party' }, { name: 'Ticket', role: 'document' }, { name: 'Laptop' }],
      },
      partition: 'optimization',
    });
    const [verdict] = checkAdmission([record(candidate)], [EXISTING], new Set());
    expect(verdict).toMatchObject({ admitted: true, reasons: [], example: { partition: 'shadow' } });
    expect(verdict!.notes[0]).toMatch(/shadow first/);
  });

  it('refuses near-duplicates, ungrounded entities, trivial gold and duplicate ids, with every reason', () => {
    const near = intentExample({
      ...EXISTING_RECORD,
      id: 'booking-salon-02',
      goal: EXISTING_RECORD.goal.replace('hair salon', 'barber shop'),
    });
    const trivial = intentExample({
      ...EXISTING_RECORD,
      id: 'other-01',
      goal: 'Something for the Warehouse, with many things in it.',
      expected: { appType: 'other', entities: [{ name: 'Pallet' }] },
    });
    const taken = intentExample({
      ...EXISTING_RECORD,
      id: 'booking-salon-01',
      goal: 'A completely different request about garden plots that members rent.',
      expected: { appType: 'booking', entities: [{ name: 'Member' }] },
    });
    const verdicts = checkAdmission(
      [record(near, 0), record(trivial, 1), record(taken, 2)],
      [EXISTING],
      new Set(['booking-salon-01']),
    );
    expect(verdicts.map((verdict) => verdict.admitted)).toEqual([false, false, false]);
    expect(verdicts[0]!.reasons.map((reason) => reason.check)).toEqual(['near_duplicate']);
    expect(verdicts[0]!.reasons[0]!.statistic).toBeLessThan(NEAR_DUPLICATE_DISTANCE);
    expect(verdicts[0]!.reasons[0]!.relatedId).toBe('booking-salon-01');
    expect(verdicts[1]!.reasons.map((reason) => reason.check)).toEqual(['non_trivial_gold', 'grounding']);
    expect(verdicts[2]!.reasons.map((reason) => reason.check)).toEqual(['duplicate_id']);
    // A refused record goes to no partition: no placement note.
    expect(verdicts.map((verdict) => verdict.notes)).toEqual([[], [], []]);
  });

  it('treats an example admitted earlier in the batch as existing', () => {
    const first = intentExample({
      ...EXISTING_RECORD,
      id: 'events-choir-01',
      goal: 'Our choir sells tickets to concerts; singers see the rehearsal calendar and the venue of each concert.',
      expected: { appType: 'events', entities: [{ name: 'Concert' }, { name: 'Ticket' }] },
    });
    const second: Example = { ...first, id: 'events-choir-02' };
    const verdicts = checkAdmission([record(first, 0), record(second, 1)], [EXISTING], new Set());
    expect(verdicts.map((verdict) => verdict.admitted)).toEqual([true, false]);
    expect(verdicts[1]!.reasons[0]).toMatchObject({
      check: 'near_duplicate',
      relatedId: 'events-choir-01',
      statistic: 0,
    });
  });

  it('waives the app type for partial gold only when asked', () => {
    const partial = intentExample({
      ...EXISTING_RECORD,
      id: 'uml-01',
      goal: 'The library lends books to readers; each loan has a due date.',
      expected: { entities: [{ name: 'Book' }, { name: 'Reader' }, { name: 'Loan' }] },
    });
    expect(checkAdmission([record(partial)], [], new Set())[0]!.reasons.map((reason) => reason.check)).toEqual([
      'non_trivial_gold',
    ]);
    expect(checkAdmission([record(partial)], [], new Set(), { requireAppType: false })[0]!.admitted).toBe(true);
  });

  it("runs the task's own admission rules and compares the texts of any task (classification)", () => {
    const format = createExampleFormat(createClassificationTask({ labels: ['billing', 'technical'] }));
    const ticket = (id: string, input: unknown): CandidateRecord => {
      const parsed = format.parse({ id, input, expected: { label: 'billing' }, partition: 'optimization' });
      if (!parsed.success) throw new Error(parsed.issues[0]!.message);
      return { index: 0, id, example: parsed.example, errors: [] };
    };
    const existing = ticket('t-1', { subject: 'Refund', body: 'I was charged twice for the same invoice this month' })
      .example!;
    const verdicts = checkAdmission(
      [
        ticket('t-2', { subject: '  ', body: '' }),
        ticket('t-3', { body: 'I was charged twice for the same invoice this month', subject: 'Refund' }),
        ticket('t-4', 'The app crashes when I open settings'),
      ],
      [existing],
      new Set(),
      { format },
    );
    expect(verdicts[0]!.reasons.map((reason) => [reason.check, reason.field])).toEqual([
      ['non_trivial_input', 'input'],
    ]);
    // The same fields in another order are the same text (the task's text of the input): a near-duplicate, named by the input field.
    expect(verdicts[1]!.reasons).toMatchObject([
      { check: 'near_duplicate', field: 'input', relatedId: 't-1', statistic: 0 },
    ]);
    expect(verdicts[1]!.reasons[0]!.message).toMatch(/^the input is the same text as "t-1"/);
    expect(verdicts[2]!.admitted).toBe(true);
  });
});

describe('readCandidateRecords', () => {
  it('reads a JSONL file record by record, with the line and field of each problem', () => {
    const file = path.join(directory, 'batch.jsonl');
    const good = { ...EXISTING_RECORD, id: 'good-01' };
    writeFileSync(
      file,
      [
        JSON.stringify(good),
        '',
        '{not json',
        JSON.stringify({ ...good, id: 'bad-01', expected: { entities: [{ name: 'X', role: 'customer' }] } }),
      ].join('\n'),
    );
    const read = readCandidateRecords(file);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.records.map((item) => [item.line, item.id, item.example !== undefined])).toEqual([
      [1, 'good-01', true],
      [3, undefined, false],
      [4, 'bad-01', false],
    ]);
    expect(read.records[2]!.errors[0]).toMatchObject({ line: 4, field: 'expected.entities[0].role' });
  });

  it('reads a YAML list record by record', () => {
    const file = path.join(directory, 'batch.yaml');
    writeFileSync(
      file,
      [
        '- id: yaml-good-01',
        '  goal: Members rent garden plots each season.',
        '  expected: { appType: booking, entities: [{ name: Member }, { name: Plot }] }',
        '  partition: shadow',
        '- id: yaml-bad-01',
        '  goal: Members rent garden plots each season.',
        '  expected: { appType: booking, entities: [{ name: Member }] }',
        '  partition: shadow',
        '  colour: blue',
      ].join('\n'),
    );
    const read = readCandidateRecords(file);
    if (!read.ok) throw new Error('unreadable');
    expect(read.records.map((item) => item.example?.id ?? null)).toEqual(['yaml-good-01', null]);
    expect(read.records[1]!.errors[0]).toMatchObject({ line: 9, field: 'colour' });
  });

  it('refuses a file that cannot be read as a whole', () => {
    const file = path.join(directory, 'broken.yaml');
    writeFileSync(file, 'examples: [unclosed\n');
    expect(readCandidateRecords(file).ok).toBe(false);
    expect(readCandidateRecords(path.join(directory, 'missing.jsonl'))).toMatchObject({ ok: false });
  });
});
