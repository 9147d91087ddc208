import { describe, expect, it } from 'vitest';
import type { ExpectedIntent, Intent } from './intent.ts';
import { DEFAULT_WEIGHTS, scoreExample, scoreIntent } from './scorer.ts';

const gold: ExpectedIntent = {
  appType: 'booking',
  entities: [
    { name: 'Patient', role: 'party' },
    { name: 'Therapist', role: 'party' },
    { name: 'TimeSlot', role: 'resource', aliases: ['slot'] },
    { name: 'Appointment', role: 'commitment' },
  ],
  relations: [
    { from: 'Patient', to: 'Appointment', cardinality: 'one_to_many', kind: 'association' },
    { from: 'Therapist', to: 'TimeSlot', cardinality: 'one_to_many', kind: 'association' },
  ],
  behaviors: ['scheduling', 'notification', 'payment'],
  projections: ['calendar', 'list'],
};

describe('scoreIntent: the seed composite, hand-computed', () => {
  it('scores a perfect prediction 1', () => {
    const predicted: Intent = {
      appType: 'booking',
      entities: gold.entities!.map((entity) => ({ name: entity.name, role: entity.role! })),
      relations: gold.relations!,
      behaviors: ['scheduling', 'notification', 'payment'],
      projections: ['calendar', 'list'],
    };
    const score = scoreIntent(gold, predicted);
    expect(score.composite).toBe(1);
    expect(score.skipped).toEqual([]);
    expect(score.metrics).toEqual({ entityPrecision: 1, relationRecall: 1, projectionCoverage: 1 });
  });

  it('computes each component and the weighted composite exactly', () => {
    // appType wrong (0); entities: "patients" matches Patient (plural), "slots" matches the alias
    // "slot"; Therapist and Appointment missed → recall 2/4 = 0.5; roles: Patient right, TimeSlot
    // wrong (party ≠ resource) → 1/2 = 0.5; behaviours 1 of 3 → 1/3.
    const predicted: Intent = {
      appType: 'crm',
      entities: [
        { name: 'patients', role: 'party' },
        { name: 'slots', role: 'party' },
        { name: 'Clinic', role: 'reference' },
      ],
      relations: [{ from: 'Patient', to: 'Slot' }],
      behaviors: ['scheduling', 'reporting'],
      projections: ['list'],
    };
    const score = scoreIntent(gold, predicted);
    expect(score.components).toEqual({ appType: 0, entityRecall: 0.5, roleAccuracy: 0.5, behaviorCoverage: 1 / 3 });
    // 0.25·0 + 0.35·0.5 + 0.20·0.5 + 0.20·(1/3) = 0.175 + 0.1 + 0.0666… = 0.341666…
    expect(score.composite).toBeCloseTo(0.175 + 0.1 + 0.2 / 3, 12);
    expect(score.diagnostics.appTypeMismatch).toEqual({ expected: ['booking'], predicted: 'crm' });
    expect(score.diagnostics.missedEntities).toEqual(['Therapist', 'Appointment']);
    expect(score.diagnostics.spuriousEntities).toEqual(['Clinic']);
    expect(score.diagnostics.wrongRoles).toEqual([{ entity: 'TimeSlot', expected: 'resource', predicted: 'party' }]);
    expect(score.diagnostics.missingBehaviors).toEqual(['notification', 'payment']);
    expect(score.diagnostics.extraBehaviors).toEqual(['reporting']);
    expect(score.metrics.entityPrecision).toBeCloseTo(2 / 3, 12);
    expect(score.metrics.relationRecall).toBe(0); // Patient–Slot is not a gold relation
    expect(score.metrics.projectionCoverage).toBe(0.5);
  });

  it('accepts a listed alternative app type', () => {
    const score = scoreIntent(
      { appType: ['helpdesk', 'field_service'], behaviors: ['assignment'] },
      { appType: 'field_service', entities: [], relations: [], behaviors: [], projections: [] },
    );
    // appType 1, behaviour 0; weights renormalised over 0.25 + 0.20.
    expect(score.components).toEqual({ appType: 1, behaviorCoverage: 0 });
    expect(score.composite).toBeCloseTo(0.25 / 0.45, 12);
    expect(score.skipped).toEqual(['entityRecall', 'roleAccuracy']);
  });

  it('partial gold: entities without roles (external corpora) skip roleAccuracy and behaviours', () => {
    const score = scoreIntent(
      { entities: [{ name: 'Flight' }, { name: 'Passenger' }, { name: 'Airport' }] },
      {
        appType: 'other',
        entities: [
          { name: 'flights', role: 'resource' },
          { name: 'Passenger', role: 'party' },
        ],
        relations: [],
        behaviors: [],
        projections: [],
      },
    );
    expect(score.skipped).toEqual(['appType', 'roleAccuracy', 'behaviorCoverage']);
    expect(score.components).toEqual({ entityRecall: 2 / 3 });
    expect(score.composite).toBeCloseTo(2 / 3, 12);
  });

  it('role accuracy is 0, not skipped, when the gold has roles but nothing matched', () => {
    const score = scoreIntent(
      { appType: 'crm', entities: [{ name: 'Lead', role: 'party' }], behaviors: ['reporting'] },
      { appType: 'crm', entities: [], relations: [], behaviors: ['reporting'], projections: [] },
    );
    expect(score.components).toEqual({ appType: 1, entityRecall: 0, roleAccuracy: 0, behaviorCoverage: 1 });
    expect(score.composite).toBeCloseTo(0.25 + 0.2, 12);
    expect(score.metrics.entityPrecision).toBeNull();
  });
});

describe('scoreExample: invalid outputs are never scored', () => {
  it('keeps an invalid output apart from a zero', () => {
    const invalid = scoreExample(gold, {
      ok: false,
      reason: 'unparsable',
      message: 'not JSON',
      raw: '{"appType": "boo',
    });
    expect(invalid).toEqual({
      valid: false,
      invalidReason: 'unparsable',
      message: 'not JSON',
      raw: '{"appType": "boo',
    });
    expect('composite' in invalid).toBe(false);
    const zero = scoreExample(gold, {
      ok: true,
      output: { appType: 'crm', entities: [], relations: [], behaviors: [], projections: [] },
    });
    expect(zero.valid).toBe(true);
    if (zero.valid) expect(zero.composite).toBe(0);
  });

  it('refuses a gold with nothing to score', () => {
    expect(() =>
      scoreIntent({}, { appType: 'crm', entities: [], relations: [], behaviors: [], projections: [] }),
    ).toThrow(/no scorable component/);
  });

  it('a configured zero weight means zero', () => {
    const weights = { ...DEFAULT_WEIGHTS, appType: 0 };
    const score = scoreIntent(
      { appType: 'crm', behaviors: ['reporting'] },
      { appType: 'booking', entities: [], relations: [], behaviors: ['reporting'], projections: [] },
      weights,
    );
    expect(score.composite).toBe(1);
  });
});
