import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { asIntentExamples, type IntentExample } from '../../corpus/intent-example.ts';
import { readCorpusFile } from '../../corpus/importers/public-format.ts';
import { createSeededRandom } from '../../stats/seeded-random.ts';
import { defaultWeights } from '../task.ts';
import type { ExpectedIntent, Intent } from './intent.ts';
import { describeIntentDiagnostics } from './intent-feedback.ts';
import { createIntentTask, INTENT_COMPONENTS, intentTask } from './intent-task.ts';
import { OUTPUT_CONTRACT } from './llm/output-contract.ts';
import { createOfflineExecutor } from './offline/offline-executor.ts';
import { DEFAULT_WEIGHTS, SCORER_VERSION, scoreExample, scoreIntent } from './scorer.ts';

/** The seed playbook's mean composite over examples/intent (all 72, scoreExample with the seed weights). */
const SEED_MEAN_COMPOSITE = 0.6016195436507938;

const STUDY = fileURLToPath(new URL('../../../examples/intent/', import.meta.url));

function corpus(): IntentExample[] {
  const examples: IntentExample[] = [];
  for (const name of readdirSync(`${STUDY}corpus`).sort()) {
    const read = readCorpusFile(`${STUDY}corpus/${name}`);
    if (!read.ok) throw new Error(read.errors.map((error) => error.message).join('; '));
    examples.push(...asIntentExamples(read.examples));
  }
  return examples;
}

/** Seeded variants of one output: fewer entities, wrong roles, no behaviours, the gold itself. */
function variants(output: Intent, expected: ExpectedIntent, random: () => number): Intent[] {
  const roles = ['party', 'resource', 'transaction', 'commitment', 'document', 'reference'] as const;
  const gold: Intent = {
    appType: (Array.isArray(expected.appType) ? expected.appType[0] : expected.appType) ?? output.appType,
    entities: (expected.entities ?? []).map((entity) => ({ name: entity.name, role: entity.role ?? 'reference' })),
    relations: expected.relations ?? [],
    behaviors: expected.behaviors ?? [],
    projections: expected.projections ?? [],
  };
  return [
    output,
    gold,
    { ...output, entities: output.entities.filter(() => random() < 0.5) },
    {
      ...output,
      entities: output.entities.map((entity) => ({ ...entity, role: roles[Math.floor(random() * roles.length)]! })),
    },
    { ...output, behaviors: [], relations: [] },
    {
      ...gold,
      entities: gold.entities.filter(() => random() < 0.7),
      behaviors: gold.behaviors.filter(() => random() < 0.6),
    },
    { appType: 'other', entities: [], relations: [], behaviors: [], projections: [] },
  ];
}

describe("the intent task gives the scorer's figures, bit for bit", () => {
  it("on the 72 examples of examples/intent, for the seed playbook's outputs and seeded variants, under several weights", async () => {
    const examples = corpus();
    expect(examples).toHaveLength(72);
    const playbook = readFileSync(`${STUDY}playbook.yaml`, 'utf8');
    const executor = createOfflineExecutor();
    const random = createSeededRandom(12);
    const weightSets: Array<Record<string, number>> = [
      defaultWeights(intentTask),
      { ...DEFAULT_WEIGHTS },
      { ...defaultWeights(intentTask), appType: 0 },
      { appType: 1, entityRecall: 2, roleAccuracy: 0.5, behaviorCoverage: 0, entityPrecision: 0, relationRecall: 0 },
    ];
    let compared = 0;
    let oldSum = 0;
    let newSum = 0;
    for (const example of examples) {
      const result = await executor.execute({
        input: example.input,
        text: example.text,
        artifact: playbook,
        repeat: 0,
      });
      if (!result.ok) throw new Error(`${example.id}: ${result.message}`);
      for (const output of variants(result.output as Intent, example.expected, random)) {
        expect(intentTask.schemas.output.safeParse(output).success).toBe(true);
        for (const weights of weightSets) {
          const before = scoreIntent(example.expected, output, {
            appType: weights.appType!,
            entityRecall: weights.entityRecall!,
            roleAccuracy: weights.roleAccuracy!,
            behaviorCoverage: weights.behaviorCoverage!,
          });
          const after = intentTask.score(output, example.expected, example.input, weights);
          expect(Object.is(after.composite, before.composite)).toBe(true);
          expect(after.components).toEqual(before.components);
          expect(after.skipped).toEqual(before.skipped);
          expect(after.metrics).toEqual(before.metrics);
          expect(after.diagnostics).toEqual(before.diagnostics);
          compared += 1;
        }
      }
      const old = scoreExample(example.expected, result);
      if (!old.valid) throw new Error(`${example.id}: invalid`);
      oldSum += old.composite;
      newSum += intentTask.score(
        result.output as Intent,
        example.expected,
        example.input,
        defaultWeights(intentTask),
      ).composite;
    }
    expect(compared).toBe(72 * 7 * 4);
    // The seed playbook's mean composite over the 72 examples, the old way and the new.
    expect(Object.is(newSum, oldSum)).toBe(true);
    expect(newSum / 72).toBe(SEED_MEAN_COMPOSITE);
  });
});

describe('intentTask', () => {
  const gold: ExpectedIntent = {
    appType: 'booking',
    entities: [
      { name: 'Patient', role: 'party' },
      { name: 'Therapist', role: 'party' },
      { name: 'TimeSlot', role: 'resource', aliases: ['slot'] },
      { name: 'Appointment', role: 'commitment' },
    ],
    relations: [
      { from: 'Patient', to: 'Appointment' },
      { from: 'Therapist', to: 'TimeSlot' },
    ],
    behaviors: ['scheduling', 'notification', 'payment'],
    projections: ['calendar', 'list'],
  };
  const predicted: Intent = {
    appType: 'crm',
    entities: [
      { name: 'patients', role: 'party' },
      { name: 'slots', role: 'party' },
      { name: 'Clinic', role: 'reference' },
    ],
    relations: [{ from: 'Patient', to: 'Appointment' }],
    behaviors: ['scheduling', 'reporting'],
    projections: ['list'],
  };

  it('keeps the scorer version, the seed weights and the metrics', () => {
    expect(intentTask.id).toBe(SCORER_VERSION);
    expect(intentTask.id).toBe('intent-scorer@1');
    expect(defaultWeights(intentTask)).toEqual({
      appType: 0.25,
      entityRecall: 0.35,
      roleAccuracy: 0.2,
      behaviorCoverage: 0.2,
      entityPrecision: 0,
      relationRecall: 0,
    });
    expect(INTENT_COMPONENTS.map((component) => component.name)).toEqual([
      'appType',
      'entityRecall',
      'roleAccuracy',
      'behaviorCoverage',
      'entityPrecision',
      'relationRecall',
    ]);
    expect(intentTask.metrics).toEqual(['entityPrecision', 'relationRecall', 'projectionCoverage']);
    expect(intentTask.outcome).toBe('continuous');
    expect(intentTask.outputContract!()).toBe(OUTPUT_CONTRACT);
    expect(intentTask.text!('A clinic books patients.')).toBe('A clinic books patients.');
  });

  it('scores the hand-computed example exactly, with feedback in words', () => {
    const score = intentTask.score(predicted, gold, 'goal', defaultWeights(intentTask));
    expect(score.components).toEqual({ appType: 0, entityRecall: 0.5, roleAccuracy: 0.5, behaviorCoverage: 1 / 3 });
    // 0.25·0 + 0.35·0.5 + 0.20·0.5 + 0.20·(1/3), over a total weight of 1.
    expect(score.composite).toBeCloseTo(0.175 + 0.1 + 0.2 / 3, 15);
    expect(score.skipped).toEqual([]);
    expect(score.metrics).toEqual({ entityPrecision: 2 / 3, relationRecall: 0.5, projectionCoverage: 0.5 });
    expect(score.feedback).toBe(
      'app type crm, expected booking; missed entities Therapist, Appointment; wrong roles: TimeSlot is resource, not party; missing behaviours notification, payment; entities not in the gold: Clinic.',
    );
    const perfect = intentTask.score(
      {
        appType: 'booking',
        entities: gold.entities!.map((entity) => ({ name: entity.name, role: entity.role! })),
        relations: gold.relations!,
        behaviors: gold.behaviors!,
        projections: ['calendar', 'list'],
      },
      gold,
      'goal',
      defaultWeights(intentTask),
    );
    expect(perfect.composite).toBe(1);
    expect(perfect.feedback).toBe('');
  });

  it('weighs entityPrecision and relationRecall when a study chooses to', () => {
    const weights = { ...defaultWeights(intentTask), entityPrecision: 0.1, relationRecall: 0.1 };
    const score = intentTask.score(predicted, gold, 'goal', weights);
    expect(score.components).toEqual({
      appType: 0,
      entityRecall: 0.5,
      roleAccuracy: 0.5,
      behaviorCoverage: 1 / 3,
      entityPrecision: 2 / 3,
      relationRecall: 0.5,
    });
    // (0.175 + 0.1 + 0.0666… + 0.1·2/3 + 0.1·0.5) / 1.2
    expect(score.composite).toBeCloseTo((0.175 + 0.1 + 0.2 / 3 + 0.1 * (2 / 3) + 0.05) / 1.2, 15);
    expect(score.feedback).toContain('missed relations Therapist -> TimeSlot');
    // Nothing predicted: precision is 0 (the metric stays null, 0/0).
    const empty = intentTask.score(
      { appType: 'booking', entities: [], relations: [], behaviors: [], projections: [] },
      gold,
      'goal',
      weights,
    );
    expect(empty.components.entityPrecision).toBe(0);
    expect(empty.metrics!.entityPrecision).toBeNull();
    // A gold without relations or entities skips them, and says so.
    const partial = intentTask.score(predicted, { appType: 'crm', behaviors: ['reporting'] }, 'goal', weights);
    expect(partial.components).toEqual({ appType: 1, behaviorCoverage: 1 });
    expect(partial.skipped).toEqual(['entityRecall', 'roleAccuracy', 'entityPrecision', 'relationRecall']);
    expect(partial.composite).toBe(1);
  });

  it('refuses a gold with nothing to score in its expected schema, and an output outside the vocabularies', () => {
    expect(intentTask.schemas.expected.safeParse({}).success).toBe(false);
    expect(intentTask.schemas.expected.safeParse({ projections: ['list'] }).success).toBe(false);
    expect(intentTask.schemas.expected.safeParse({ appType: 'crm' }).success).toBe(true);
    expect(intentTask.schemas.expected.safeParse({ appType: ['crm', 'booking'] }).success).toBe(true);
    // An unknown gold app type names the values (the union's own message was a bare "Invalid input").
    for (const appType of ['spaceship', ['crm', 'spaceship']]) {
      const parsed = intentTask.schemas.expected.safeParse({ appType });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(
        /^Invalid option: expected one of "[a-z_]+"(\|"[a-z_]+")+, or a list of them/,
      );
      expect(parsed.error?.issues[0]?.message).toContain('"crm"');
    }
    expect(intentTask.schemas.output.safeParse({ ...predicted, appType: 'spaceship' }).success).toBe(false);
    expect(intentTask.schemas.output.safeParse({ ...predicted, behaviors: undefined }).success).toBe(false);
  });

  it('admits with the intent rules: non-trivial gold and grounding', () => {
    expect(
      intentTask.admit!('Patients book sessions with therapists.', {
        appType: 'booking',
        entities: [{ name: 'Patient' }, { name: 'Therapist' }],
      }),
    ).toEqual([]);
    expect(intentTask.admit!('Patients book sessions.', { appType: 'other', entities: [{ name: 'Invoice' }] })).toEqual(
      [
        {
          reason: 'non_trivial_gold',
          field: 'expected.appType',
          message: 'the gold app type is only "other", which is not a known app type',
        },
        {
          reason: 'grounding',
          field: 'expected.entities[0].name',
          message: 'gold entity "Invoice" does not appear in the goal text, by name, alias or lemma',
        },
      ],
    );
    expect(intentTask.admit!('Flights carry passengers.', { entities: [{ name: 'Flight' }] })[0]?.field).toBe(
      'expected.appType',
    );
    expect(
      createIntentTask({ requireAppType: false }).admit!('Flights carry passengers.', {
        entities: [{ name: 'Flight' }],
      }),
    ).toEqual([]);
    expect(intentTask.admit!('Anything at all.', { appType: 'crm', behaviors: ['reporting'] })).toEqual([
      { reason: 'non_trivial_gold', field: 'expected.entities', message: 'the gold names no entity' },
    ]);
  });
});

describe('describeIntentDiagnostics', () => {
  it('caps long lists with "and N more"', () => {
    const diagnostics = {
      missedEntities: ['A', 'B', 'C', 'D'],
      spuriousEntities: [],
      wrongRoles: [],
      missingBehaviors: [],
      extraBehaviors: [],
      missedRelations: ['A -> B'],
      missingProjections: [],
    };
    expect(describeIntentDiagnostics(diagnostics, { maxItems: 2 })).toBe('missed entities A, B and 2 more.');
    expect(describeIntentDiagnostics(diagnostics, { maxItems: 2, relations: true })).toBe(
      'missed entities A, B and 2 more; missed relations A -> B.',
    );
  });
});
