/**
 * The task contract suite: every task kloop ships (and a custom scorer
 * module written as a user would) passes the same checks, on many seeded
 * outputs, valid ones and edge cases:
 *
 * - declarations: an id, components with weights ≥ 0 (one above 0), unique
 *   names, an outcome kind;
 * - every valid output scores a finite composite in [0, 1]; every component
 *   is in [0, 1] and named as declared; skipped components are declared and
 *   not scored; metrics are declared names (when declared) in [0, 1] or null;
 * - diagnostics (a JSON object) and feedback (text) are present; feedback is
 *   empty when the composite is 1 and every component 1, and says something
 *   when the composite is below 1;
 * - the composite equals `weightedComposite(components, weights)` under the
 *   defaults and under seeded random weights;
 * - outputs that do not fit the output schema are refused by
 *   `schemas.output.safeParse`, so they can never be scored;
 * - `score` is pure: it neither mutates its (frozen) arguments nor answers
 *   differently twice;
 * - a binary task scores 0 or 1 only.
 *
 * Adding a task: one entry in CASES.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Example } from '../corpus/example.ts';
import { readCorpusFile } from '../corpus/importers/public-format.ts';
import { createSeededRandom, type RandomSource } from '../stats/seeded-random.ts';
import { createClassificationTask } from './classification/index.ts';
import { loadCustomTask } from './custom/index.ts';
import { createExtractionTask } from './extraction/index.ts';
import type { Intent } from './intent/intent.ts';
import { intentTask } from './intent/intent-task.ts';
import { APP_TYPES, BEHAVIORS, CARDINALITIES, ENTITY_ROLES, PROJECTIONS, RELATION_KINDS } from './intent/vocabulary.ts';
import { defaultWeights, inputText, type Task, taskComponents, weightedComposite } from './task.ts';

/** How many outputs each example is scored with. */
const OUTPUTS_PER_EXAMPLE = 30;

interface ContractCase {
  name: string;
  load(): Task | Promise<Task>;
  /** Examples whose input and expected fit the task's schemas. */
  examples:
    | ReadonlyArray<{ input: unknown; expected: unknown }>
    | (() => ReadonlyArray<{ input: unknown; expected: unknown }>);
  /** Valid outputs for one example, seeded: random ones and edge cases. */
  outputs(random: RandomSource, expected: unknown): unknown[];
  /** Values the output schema must refuse. */
  invalidOutputs: unknown[];
}

function pick<T>(random: RandomSource, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

function some<T>(random: RandomSource, values: readonly T[], share: number): T[] {
  return values.filter(() => random() < share);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

// ---------------------------------------------------------------------------
// intent: 12 examples of examples/intent (seeded sample), outputs built from the vocabularies
// ---------------------------------------------------------------------------

function intentExamples(): Array<{ input: unknown; expected: unknown }> {
  const folder = fileURLToPath(new URL('../../examples/intent/corpus/', import.meta.url));
  const examples: Example[] = [];
  for (const name of readdirSync(folder).sort()) {
    const read = readCorpusFile(`${folder}${name}`);
    if (read.ok) examples.push(...read.examples);
  }
  const random = createSeededRandom(3);
  const chosen = examples.filter(() => random() < 0.17).slice(0, 12);
  // Partial gold, as external corpora have it.
  chosen.push({ ...chosen[0]!, expected: { entities: [{ name: 'Flight' }, { name: 'Passenger' }] } });
  chosen.push({ ...chosen[0]!, expected: { appType: ['helpdesk', 'field_service'], behaviors: ['assignment'] } });
  return chosen.map((example) => ({ input: example.input, expected: example.expected }));
}

function intentOutputs(random: RandomSource, expected: unknown): Intent[] {
  const gold = expected as { entities?: Array<{ name: string; aliases?: string[] }> };
  const names = [
    ...(gold.entities ?? []).flatMap((entity) => [entity.name, `${entity.name}s`, ...(entity.aliases ?? [])]),
    'Clinic',
    'Widget',
    'user account',
  ];
  const roles = Object.keys(ENTITY_ROLES) as Intent['entities'][number]['role'][];
  const outputs: Intent[] = [];
  for (let index = 0; index < OUTPUTS_PER_EXAMPLE - 2; index += 1) {
    const entities = some(random, names, random()).map((name) => ({ name, role: pick(random, roles) }));
    outputs.push({
      appType: pick(random, Object.keys(APP_TYPES)) as Intent['appType'],
      entities,
      relations: entities.slice(1).map((entity, position) => ({
        from: entities[position]!.name,
        to: entity.name,
        ...(random() < 0.5
          ? {
              cardinality: pick(random, Object.keys(CARDINALITIES)) as never,
              kind: pick(random, Object.keys(RELATION_KINDS)) as never,
            }
          : {}),
      })),
      behaviors: some(random, Object.keys(BEHAVIORS), random()) as Intent['behaviors'],
      projections: some(random, Object.keys(PROJECTIONS), random()) as Intent['projections'],
    });
  }
  // Edge cases: nothing at all, and the same entity named three times.
  outputs.push({ appType: 'other', entities: [], relations: [], behaviors: [], projections: [] });
  outputs.push({
    appType: 'booking',
    entities: [1, 2, 3].map(() => ({ name: names[0]!, role: 'party' as const })),
    relations: [],
    behaviors: ['scheduling', 'scheduling'],
    projections: [],
  });
  return outputs;
}

// ---------------------------------------------------------------------------
// classification and extraction: small corpora written here
// ---------------------------------------------------------------------------

const LABELS = ['billing', 'technical', 'account', 'sales'];

const EXTRACTION_FIELDS = {
  vendor: { match: 'exact' as const },
  total: { match: 'number' as const, tolerance: 0.01, weight: 2 },
  items: { match: 'set-f1' as const },
  po_number: { match: 'exact' as const, weight: 0.5 },
  paid: { match: 'exact' as const, weight: 0 },
};

function extractionOutputs(random: RandomSource, expected: unknown): unknown[] {
  const gold = expected as Record<string, unknown>;
  const outputs: unknown[] = [
    {},
    { vendor: null, total: null, items: null, po_number: null, paid: null },
    clone(gold),
    { ...gold, extra: 'ignored' },
  ];
  const vendors = ['ACME Inc.', ' acme  inc. ', 'Globex', 'ÀCME', ''];
  const items = ['apple', 'Apple ', 'kiwi', 'pear', 'plum', 3, 3];
  while (outputs.length < OUTPUTS_PER_EXAMPLE) {
    const output: Record<string, unknown> = {};
    if (random() < 0.8) output.vendor = random() < 0.2 ? null : pick(random, vendors);
    if (random() < 0.8) output.total = random() < 0.2 ? null : Math.round((40 + random() * 4) * 1000) / 1000;
    if (random() < 0.8) output.items = some(random, items, random());
    if (random() < 0.5) output.po_number = random() < 0.3 ? null : pick(random, ['PO-1', 'po-1', 'PO-2', 7]);
    if (random() < 0.5) output.paid = random() < 0.5;
    outputs.push(output);
  }
  return outputs;
}

// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------

const CUSTOM_FIXTURES = fileURLToPath(new URL('./custom/fixtures/', import.meta.url));

const CASES: ContractCase[] = [
  {
    name: 'intent',
    load: () => intentTask as Task,
    examples: intentExamples,
    outputs: intentOutputs,
    invalidOutputs: [
      null,
      'booking',
      {},
      { appType: 'spaceship', entities: [], relations: [], behaviors: [], projections: [] },
      {
        appType: 'booking',
        entities: [{ name: 'Patient', role: 'hero' }],
        relations: [],
        behaviors: [],
        projections: [],
      },
      { appType: 'booking', entities: [{ name: '', role: 'party' }], relations: [], behaviors: [], projections: [] },
      { appType: 'booking', entities: [], relations: [], behaviors: ['teleportation'], projections: [] },
      { appType: 'booking', entities: [], relations: [], behaviors: [] },
      { appType: 'booking', entities: [], relations: [], behaviors: [], projections: [], confidence: 0.9 },
    ],
  },
  {
    name: 'classification',
    load: () =>
      createClassificationTask({ labels: LABELS, reportAs: 'misroute rate', fieldOrder: ['subject', 'body'] }) as Task,
    examples: [
      { input: 'I was charged twice for March', expected: { label: 'billing' } },
      {
        input: { subject: 'App crashes', body: 'Since the update the app closes at login.', customer: 'ACME' },
        expected: { label: 'technical' },
      },
      {
        input: { subject: 'hi', body: 'pls change my email and also my invoice is wrong??' },
        expected: { label: 'account' },
      },
      { input: 'Do you offer volume pricing for 500 seats?', expected: { label: 'sales' } },
    ],
    outputs: (random) => [
      ...LABELS.map((label) => ({ label })),
      ...Array.from({ length: OUTPUTS_PER_EXAMPLE - LABELS.length }, () => ({ label: pick(random, LABELS) })),
      { label: 'billing', reason: 'ignored' },
    ],
    invalidOutputs: [
      null,
      'billing',
      {},
      { label: 'refunds' },
      { label: 'Billing' },
      { label: ' billing' },
      { label: 3 },
      [{ label: 'billing' }],
    ],
  },
  {
    name: 'extraction',
    load: () => createExtractionTask({ fields: EXTRACTION_FIELDS }) as Task,
    examples: [
      {
        input: 'Invoice from ACME Inc.: apples and kiwis, total 42.00 EUR, PO-1, paid.',
        expected: { vendor: 'ACME Inc.', total: 42, items: ['apple', 'kiwi'], po_number: 'PO-1', paid: true },
      },
      {
        input: { subject: 'Globex order', body: 'pear x3, 41.5 total, no PO' },
        expected: { vendor: 'Globex', total: 41.5, items: ['pear'], po_number: null },
      },
      { input: 'Total due: 43.10', expected: { total: 43.1 } },
      { input: 'Nothing bought.', expected: { items: [] } },
    ],
    outputs: extractionOutputs,
    invalidOutputs: [
      null,
      'ACME',
      [],
      { total: '42' },
      { total: Number.NaN },
      { total: Number.POSITIVE_INFINITY },
      { items: 'apple' },
      { items: [{ name: 'apple' }] },
      { vendor: { name: 'ACME' } },
      { paid: [true] },
    ],
  },
  {
    name: 'custom (TypeScript module with zod schema and components)',
    load: () => loadCustomTask({ studyFolder: CUSTOM_FIXTURES, module: 'route-score.ts' }),
    examples: [
      { input: { subject: 'Refund', body: 'charged twice' }, expected: { label: 'billing', priority: 'high' } },
      { input: 'the app is slow', expected: { label: 'technical', priority: 'low' } },
    ],
    outputs: (random) =>
      Array.from({ length: OUTPUTS_PER_EXAMPLE }, () => ({
        label: pick(random, ['billing', 'technical', 'sales']),
        priority: pick(random, ['low', 'high']),
      })),
    invalidOutputs: [
      null,
      {},
      { label: 'billing' },
      { label: '', priority: 'low' },
      { label: 'billing', priority: 'urgent' },
      'billing',
    ],
  },
  {
    name: 'custom (JavaScript module returning a number, any JSON output)',
    load: () => loadCustomTask({ studyFolder: CUSTOM_FIXTURES, module: 'overlap-score.mjs' }),
    examples: [
      { input: 'tags for a ticket', expected: ['refund', 'billing'] },
      { input: 'no tags', expected: [] },
    ],
    outputs: (random) => [
      [],
      ['refund'],
      ['refund', 'billing'],
      'refund',
      7,
      null,
      { tags: ['x'] },
      ...Array.from({ length: OUTPUTS_PER_EXAMPLE }, () =>
        some(random, ['refund', 'billing', 'login', 'other'], random()),
      ),
    ],
    invalidOutputs: [undefined, Number.NaN, () => 1, { nested: undefined }, new Date(0)],
  },
];

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------

function isUnit(value: number): boolean {
  return Number.isFinite(value) && value >= 0 && value <= 1;
}

function randomWeights(random: RandomSource, names: readonly string[]): Record<string, number> {
  const weights = Object.fromEntries(
    names.map((name) => [name, random() < 0.2 ? 0 : Math.round(random() * 200) / 100]),
  );
  weights[names[0]!] = Math.max(weights[names[0]!]!, 0.5);
  return weights;
}

for (const contract of CASES) {
  describe(`task contract: ${contract.name}`, () => {
    let task: Task;
    let examples: ReadonlyArray<{ input: unknown; expected: unknown }>;
    beforeAll(async () => {
      task = await contract.load();
      examples = typeof contract.examples === 'function' ? contract.examples() : contract.examples;
    });

    it('declares an id, components with weights ≥ 0 (one above 0) and unique names, and an outcome kind', () => {
      expect(task.id).toMatch(/^[a-z][a-z-]*@\S+$/);
      const components = taskComponents(task);
      const names = components.map((component) => component.name);
      expect(new Set(names).size).toBe(names.length);
      for (const component of components) {
        expect(component.name).not.toBe('');
        expect(component.weight).toBeGreaterThanOrEqual(0);
        expect(component.description).not.toBe('');
      }
      expect(components.some((component) => component.weight > 0)).toBe(true);
      expect(['continuous', 'binary', undefined]).toContain(task.outcome);
      if (task.metrics !== undefined) expect(new Set(task.metrics).size).toBe(task.metrics.length);
      if (task.outputContract !== undefined) expect(task.outputContract().length).toBeGreaterThan(20);
    });

    it('its examples fit the input and expected schemas, have a text, and pass admission', () => {
      expect(examples.length).toBeGreaterThan(1);
      for (const example of examples) {
        expect(task.schemas.input.safeParse(example.input).success).toBe(true);
        expect(task.schemas.expected.safeParse(example.expected).success).toBe(true);
        expect(typeof inputText(task, example.input)).toBe('string');
        if (task.admit !== undefined) expect(Array.isArray(task.admit(example.input, example.expected))).toBe(true);
      }
    });

    it('refuses outputs that do not fit the output schema, so they are never scored', () => {
      for (const output of contract.invalidOutputs)
        expect(task.schemas.output.safeParse(output).success, JSON.stringify(output) ?? String(output)).toBe(false);
    });

    it('scores every generated output in [0, 1], with declared components, diagnostics and feedback, as the weighted mean of its components', () => {
      const random = createSeededRandom(2024);
      const components = taskComponents(task);
      const declared = new Set(components.map((component) => component.name));
      const weightSets = [
        defaultWeights(task),
        ...Array.from({ length: 3 }, () =>
          randomWeights(
            random,
            components.map((component) => component.name),
          ),
        ),
      ];
      let scored = 0;
      let belowOne = 0;
      for (const example of examples) {
        const expected = task.schemas.expected.parse(example.expected);
        const input = task.schemas.input.parse(example.input);
        for (const generated of contract.outputs(random, expected)) {
          const parsed = task.schemas.output.safeParse(generated);
          expect(parsed.success, `generated output ${JSON.stringify(generated)} must be valid`).toBe(true);
          if (!parsed.success) continue;
          const output = deepFreeze(parsed.data);
          for (const weights of weightSets) {
            const score = task.score(output, deepFreeze(clone(expected)), deepFreeze(clone(input)), weights);
            scored += 1;
            expect(isUnit(score.composite), `composite ${score.composite}`).toBe(true);
            expect(Object.keys(score.components).length).toBeGreaterThan(0);
            for (const [name, value] of Object.entries(score.components)) {
              expect(declared.has(name), `component ${name} is declared`).toBe(true);
              expect(isUnit(value), `${name} = ${value}`).toBe(true);
            }
            for (const name of score.skipped ?? []) {
              expect(declared.has(name)).toBe(true);
              expect(score.components[name]).toBeUndefined();
            }
            for (const [name, value] of Object.entries(score.metrics ?? {})) {
              if (task.metrics !== undefined) expect(task.metrics).toContain(name);
              if (value !== null) expect(isUnit(value), `metric ${name} = ${value}`).toBe(true);
            }
            expect(score.composite).toBeCloseTo(weightedComposite(score.components, weights), 15);
            expect(typeof score.feedback).toBe('string');
            expect(score.diagnostics).toBeTypeOf('object');
            expect(JSON.parse(JSON.stringify(score.diagnostics))).toEqual(score.diagnostics);
            if (score.composite < 1) belowOne += 1;
            if (score.composite < 1 && Object.values(score.components).some((value) => value < 1))
              expect(score.feedback, JSON.stringify(score)).not.toBe('');
            if (task.outcome === 'binary') expect([0, 1]).toContain(score.composite);
            expect(task.score(output, expected, input, weights)).toEqual(score);
          }
        }
      }
      expect(scored).toBeGreaterThanOrEqual(examples.length * OUTPUTS_PER_EXAMPLE * weightSets.length);
      expect(belowOne).toBeGreaterThan(0);
    });

    it('gives composite 1 and no feedback to a perfect output, when the gold is an output', () => {
      for (const example of examples) {
        const expected = task.schemas.expected.parse(example.expected);
        const parsed = task.schemas.output.safeParse(expected);
        if (!parsed.success) continue; // the gold is not in the output format (intent aliases, alternatives)
        const score = task.score(parsed.data, expected, task.schemas.input.parse(example.input), defaultWeights(task));
        expect(score.composite).toBe(1);
        expect(score.feedback).toBe('');
      }
    });
  });
}
