import { describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { defaultWeights, inputText } from '../task.ts';
import {
  classificationAccuracy,
  classificationOutcome,
  confusionTable,
  createClassificationTask,
  misrouteRate,
  perLabelRecall,
  summarizeClassification,
} from './index.ts';

const LABELS = ['billing', 'technical', 'account'];

describe('createClassificationTask', () => {
  const task = createClassificationTask({ labels: LABELS, reportAs: 'misroute rate', fieldOrder: ['subject', 'body'] });
  const weights = defaultWeights(task);

  it('scores the right label 1 and a wrong one 0, with diagnostics and feedback', () => {
    expect(task.score({ label: 'billing' }, { label: 'billing' }, 'charged twice', weights)).toEqual({
      composite: 1,
      components: { accuracy: 1 },
      diagnostics: { expected: 'billing', predicted: 'billing' },
      feedback: '',
    });
    expect(task.score({ label: 'technical' }, { label: 'billing' }, 'charged twice', weights)).toEqual({
      composite: 0,
      components: { accuracy: 0 },
      diagnostics: { expected: 'billing', predicted: 'technical' },
      feedback: 'expected billing, routed to technical',
    });
    const plain = createClassificationTask({ labels: LABELS });
    expect(plain.reportAs).toBe('accuracy');
    expect(plain.score({ label: 'account' }, { label: 'billing' }, 'x', weights).feedback).toBe(
      'expected billing, predicted account',
    );
  });

  it('is a binary task with one component, and an id that names the label set', () => {
    expect(task.outcome).toBe('binary');
    expect(weights).toEqual({ accuracy: 1 });
    expect(task.id).toMatch(/^classification@1:[0-9a-f]{8}$/);
    expect(createClassificationTask({ labels: LABELS }).id).toBe(task.id);
    expect(createClassificationTask({ labels: [...LABELS, 'sales'] }).id).not.toBe(task.id);
  });

  it('never scores a label outside the set: the output schema refuses it', () => {
    expect(task.schemas.output.safeParse({ label: 'sales' }).success).toBe(false);
    expect(task.schemas.output.safeParse({ label: 'Billing' }).success).toBe(false);
    expect(task.schemas.output.safeParse({}).success).toBe(false);
    expect(task.schemas.output.safeParse('billing').success).toBe(false);
    // Other keys of an answer are ignored.
    expect(task.schemas.output.safeParse({ label: 'billing', confidence: 0.9 })).toEqual({
      success: true,
      data: { label: 'billing' },
    });
    expect(task.schemas.expected.safeParse({ label: 'sales' }).success).toBe(false);
    expect(task.schemas.expected.safeParse({ label: 'billing', note: 'x' }).success).toBe(false);
  });

  it('reads a text or an object of text fields, and writes the fields in a stable order', () => {
    expect(task.schemas.input.safeParse('charged twice').success).toBe(true);
    expect(task.schemas.input.safeParse({ customer: 'ACME', body: 'charged twice', subject: 'Invoice' }).success).toBe(
      true,
    );
    expect(task.schemas.input.safeParse({}).success).toBe(false);
    expect(task.schemas.input.safeParse({ subject: 3 }).success).toBe(false);
    expect(task.schemas.input.safeParse('').success).toBe(false);
    expect(inputText(task, { customer: 'ACME', priority: 'high', body: 'charged\ntwice', subject: 'Invoice' })).toBe(
      'subject: Invoice\nbody: charged\ntwice\ncustomer: ACME\npriority: high',
    );
    // Without a field order, every field sorted by name.
    expect(inputText(createClassificationTask({ labels: LABELS }), { subject: 'S', body: 'B' })).toBe(
      'body: B\nsubject: S',
    );
    expect(inputText(task, 'just text')).toBe('just text');
  });

  it('admits an input with text, and refuses one whose fields are all blank', () => {
    expect(task.admit!({ subject: 'Invoice', body: '' }, { label: 'billing' })).toEqual([]);
    expect(task.admit!({ subject: ' ', body: '' }, { label: 'billing' })).toEqual([
      {
        reason: 'non_trivial_input',
        field: 'input',
        message: 'the input has no text to classify (every field is blank)',
      },
    ]);
  });

  it('appends an output contract naming the labels and the JSON Schema', () => {
    expect(task.outputContract!()).toBe(
      [
        '---',
        'Output format (fixed by kloop, not part of the prompt above):',
        'Answer with exactly one JSON value and nothing else: no prose, no code fence.',
        'It must be an object {"label": ...} whose label is exactly one of: billing, technical, account.',
        '{"type":"object","properties":{"label":{"type":"string","enum":["billing","technical","account"]}},"required":["label"],"additionalProperties":false}',
      ].join('\n'),
    );
  });

  it('refuses settings that are not a closed set of labels, with the field', () => {
    const cases: Array<[unknown, RegExp, string]> = [
      [{ labels: [] }, /no label/, 'labels'],
      [{ labels: ['a', 'a'] }, /unique/, 'labels'],
      [{ labels: ['a', ' b'] }, /spaces/, 'labels.1'],
      [{ labels: ['a', ''] }, /empty/, 'labels.1'],
      [{ labels: ['a'], reportAs: 'error rate' }, /./, 'reportAs'],
      [{ labels: ['a'], weights: {} }, /./, ''],
    ];
    for (const [options, message, field] of cases) {
      try {
        createClassificationTask(options as never);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        expect((error as InputError).message).toMatch(message);
        if (field !== '') expect((error as InputError).field).toBe(field);
      }
    }
  });
});

describe('classification reports', () => {
  // 10 outcomes over three labels; 'account' is never expected.
  const outcomes = [
    { expected: 'billing', predicted: 'billing' },
    { expected: 'billing', predicted: 'billing' },
    { expected: 'billing', predicted: 'technical' },
    { expected: 'billing', predicted: 'account' },
    { expected: 'technical', predicted: 'technical' },
    { expected: 'technical', predicted: 'technical' },
    { expected: 'technical', predicted: 'technical' },
    { expected: 'technical', predicted: 'billing' },
    { expected: 'technical', predicted: 'account' },
    { expected: 'billing', predicted: 'billing' },
  ];

  it('computes accuracy, misroute rate, per-label recall and the confusion table exactly', () => {
    expect(classificationAccuracy(outcomes)).toBe(0.6);
    expect(misrouteRate(outcomes)).toBe(0.4);
    expect(perLabelRecall(outcomes, LABELS)).toEqual([
      { label: 'billing', support: 5, correct: 3, recall: 0.6 },
      { label: 'technical', support: 5, correct: 3, recall: 0.6 },
      { label: 'account', support: 0, correct: 0, recall: null },
    ]);
    expect(confusionTable(outcomes, LABELS)).toEqual({
      labels: LABELS,
      counts: [
        [3, 1, 1],
        [1, 3, 1],
        [0, 0, 0],
      ],
      total: 10,
    });
  });

  it('keeps an undeclared label visible instead of dropping it', () => {
    const table = confusionTable([{ expected: 'sales', predicted: 'billing' }], ['billing']);
    expect(table).toEqual({
      labels: ['billing', 'sales'],
      counts: [
        [0, 0],
        [1, 0],
      ],
      total: 1,
    });
    expect(perLabelRecall([{ expected: 'sales', predicted: 'billing' }], ['billing'])).toEqual([
      { label: 'billing', support: 0, correct: 0, recall: null },
      { label: 'sales', support: 1, correct: 0, recall: 0 },
    ]);
  });

  it('says null, never 0, when there is no outcome', () => {
    expect(classificationAccuracy([])).toBeNull();
    expect(misrouteRate([])).toBeNull();
    expect(summarizeClassification([], { labels: LABELS, reportAs: 'misroute rate' }).headline).toEqual({
      name: 'misroute rate',
      value: null,
    });
  });

  it('names the headline as the study reports it', () => {
    expect(summarizeClassification(outcomes, { labels: LABELS, reportAs: 'misroute rate' }).headline).toEqual({
      name: 'misroute rate',
      value: 0.4,
    });
    const summary = summarizeClassification(outcomes, { labels: LABELS });
    expect(summary.headline).toEqual({ name: 'accuracy', value: 0.6 });
    expect(summary.total).toBe(10);
  });

  it('reads outcomes from task scores', () => {
    const task = createClassificationTask({ labels: LABELS });
    const scores = outcomes.map((outcome) =>
      task.score({ label: outcome.predicted }, { label: outcome.expected }, 'text', { accuracy: 1 }),
    );
    expect(scores.map(classificationOutcome)).toEqual(outcomes);
    expect(classificationOutcome({ diagnostics: { missedEntities: [] } })).toBeUndefined();
    expect(classificationOutcome({})).toBeUndefined();
  });
});
