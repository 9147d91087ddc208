import { describe, expect, it } from 'vitest';
import type { Intent } from '../tasks/intent/intent.ts';
import { assembleIntent, CONFIDENCE_WEIGHTS } from './assemble.ts';
import { createPatternLibrary, loadBuiltInPatternLibrary } from './pattern-library.ts';

const library = createPatternLibrary([
  {
    id: 'clinic',
    title: 'Clinic',
    description: 'Patients book appointments with therapists in rooms.',
    appTypes: ['booking'],
    entities: [
      { name: 'Patient', role: 'party', aliases: ['client'], fields: [{ name: 'name', type: 'TEXT', required: true }] },
      { name: 'Therapist', role: 'party', fields: [{ name: 'name', type: 'TEXT', required: true }] },
      { name: 'Room', role: 'resource', roleFallback: true, fields: [{ name: 'name', type: 'TEXT' }] },
      {
        name: 'Appointment',
        role: 'commitment',
        aliases: ['session'],
        fields: [{ name: 'startsAt', type: 'DATETIME', required: true }],
      },
    ],
    relations: [
      { from: 'Patient', to: 'Appointment', cardinality: 'one_to_many' },
      { from: 'Therapist', to: 'Appointment', cardinality: 'one_to_many' },
      { from: 'Room', to: 'Appointment', cardinality: 'one_to_many' },
    ],
    behaviors: ['scheduling', 'notification'],
    projections: [
      { kind: 'calendar', entity: 'Appointment' },
      { kind: 'list', entity: 'Patient' },
    ],
  },
  {
    id: 'billing',
    title: 'Billing',
    description: 'Customers are invoiced and pay.',
    appTypes: ['other'],
    entities: [
      {
        name: 'Customer',
        role: 'party',
        aliases: ['patient'],
        fields: [{ name: 'name', type: 'TEXT', required: true }],
      },
      { name: 'Invoice', role: 'document', fields: [{ name: 'number', type: 'TEXT', required: true, unique: true }] },
      { name: 'Payment', role: 'transaction', fields: [{ name: 'amount', type: 'NUMERIC', required: true }] },
    ],
    relations: [
      { from: 'Customer', to: 'Invoice', cardinality: 'one_to_many' },
      { from: 'Invoice', to: 'Payment', cardinality: 'one_to_many', kind: 'composition' },
    ],
    behaviors: ['payment'],
    projections: [{ kind: 'dashboard', entity: 'Payment' }],
  },
]);

function intent(partial: Partial<Intent>): Intent {
  return { appType: 'booking', entities: [], relations: [], behaviors: [], projections: [], ...partial };
}

describe('assembleIntent', () => {
  it('extends a pattern along the intent relations, hop by hop; an unrelated entity stays uncovered', () => {
    const entities = [
      { name: 'Patient', role: 'party' as const },
      { name: 'Session', role: 'commitment' as const },
      { name: 'Exercise', role: 'reference' as const },
      { name: 'Video', role: 'document' as const },
      { name: 'Parking', role: 'transaction' as const },
    ];
    const relations = [
      { from: 'Session', to: 'Exercise', cardinality: 'one_to_many' as const, kind: 'composition' as const },
      { from: 'Exercise', to: 'Video', cardinality: 'one_to_many' as const, kind: 'association' as const },
    ];
    const related = assembleIntent(
      intent({ entities: entities.slice(0, 4), relations, behaviors: ['scheduling'] }),
      library,
    );
    expect(related.method).toBe('direct');
    expect(related.extensions).toEqual([
      { entity: 'Exercise', relatedTo: 'Session', patternId: 'clinic' },
      { entity: 'Video', relatedTo: 'Exercise', patternId: 'clinic' },
    ]);
    expect(related.patterns[0]!.extendedEntities).toEqual(['Exercise', 'Video']);
    // Two names (1 each) and two extensions (extensionCredit each) of four entities, with the one behaviour covered.
    expect(related.confidence).toBeCloseTo(
      CONFIDENCE_WEIGHTS.entities * ((2 + 2 * CONFIDENCE_WEIGHTS.extensionCredit) / 4) + CONFIDENCE_WEIGHTS.behaviors,
      12,
    );
    const withOrphan = assembleIntent(intent({ entities, relations, behaviors: ['scheduling'] }), library);
    expect(withOrphan.method).toBe('partial');
    expect(withOrphan.uncovered.entities).toEqual(['Parking']);
  });

  it('is direct when one pattern covers every entity and behaviour', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patients', role: 'party' },
          { name: 'therapist', role: 'party' },
          { name: 'Session', role: 'commitment' },
        ],
        behaviors: ['scheduling'],
        projections: ['calendar'],
      }),
      library,
    );
    expect(assembly.method).toBe('direct');
    expect(assembly.confidence).toBe(1);
    expect(assembly.patterns).toEqual([
      {
        id: 'clinic',
        coveredEntities: ['Patients', 'therapist', 'Session'],
        extendedEntities: [],
        coveredBehaviors: ['scheduling'],
      },
    ]);
    expect(assembly.uncovered).toEqual({ entities: [], behaviors: [] });
    expect(assembly.app.entities.map((entity) => entity.source)).toEqual([
      { patternId: 'clinic', patternEntity: 'Patient', match: 'name' },
      { patternId: 'clinic', patternEntity: 'Therapist', match: 'name' },
      { patternId: 'clinic', patternEntity: 'Appointment', match: 'alias' },
    ]);
    expect(assembly.app.relations).toEqual([
      { from: 'Patients', to: 'Session', cardinality: 'one_to_many', kind: 'association', source: 'clinic' },
      { from: 'therapist', to: 'Session', cardinality: 'one_to_many', kind: 'association', source: 'clinic' },
    ]);
    expect(assembly.app.projections).toEqual([{ kind: 'calendar', entity: 'Session' }]);
  });

  it('fills a documented role slot, with half credit in the confidence', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Therapist', role: 'party' },
          { name: 'Tennis Court', role: 'resource' },
          { name: 'Appointment', role: 'commitment' },
        ],
        behaviors: ['scheduling'],
      }),
      library,
    );
    expect(assembly.method).toBe('direct');
    expect(assembly.app.entities[2]?.source).toEqual({ patternId: 'clinic', patternEntity: 'Room', match: 'role' });
    const expected =
      (CONFIDENCE_WEIGHTS.entities * (3 + CONFIDENCE_WEIGHTS.roleMatchCredit)) / 4 + CONFIDENCE_WEIGHTS.behaviors;
    expect(assembly.confidence).toBeCloseTo(expected, 12);
    expect(assembly.confidence).toBeCloseTo(0.9125, 12);
  });

  it('never falls back to an undocumented role slot', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Coach', role: 'party' },
        ],
      }),
      library,
    );
    expect(assembly.method).toBe('partial');
    expect(assembly.uncovered.entities).toEqual(['Coach']);
  });

  it('is decomposed when a greedy cover of several patterns covers everything', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Appointment', role: 'commitment' },
          { name: 'Invoice', role: 'document' },
          { name: 'Payment', role: 'transaction' },
        ],
        behaviors: ['scheduling', 'payment'],
        projections: ['calendar', 'dashboard'],
      }),
      library,
    );
    expect(assembly.method).toBe('decomposed');
    // Greedy: billing covers three entities (Patient is an alias of its Customer), clinic the rest.
    expect(assembly.patterns).toEqual([
      {
        id: 'billing',
        coveredEntities: ['Patient', 'Invoice', 'Payment'],
        extendedEntities: [],
        coveredBehaviors: ['payment'],
      },
      { id: 'clinic', coveredEntities: ['Appointment'], extendedEntities: [], coveredBehaviors: ['scheduling'] },
    ]);
    expect(assembly.confidence).toBeCloseTo(CONFIDENCE_WEIGHTS.extraPatternFactor, 12);
    expect(assembly.app.entities[0]?.source).toEqual({
      patternId: 'billing',
      patternEntity: 'Customer',
      match: 'alias',
    });
    // Patient also matches the clinic's Patient, so the clinic's relation links the two parts.
    expect(assembly.app.relations).toContainEqual({
      from: 'Patient',
      to: 'Appointment',
      cardinality: 'one_to_many',
      kind: 'association',
      source: 'clinic',
    });
    expect(assembly.app.relations).toContainEqual({
      from: 'Patient',
      to: 'Invoice',
      cardinality: 'one_to_many',
      kind: 'association',
      source: 'billing',
    });
    expect(assembly.app.relations).toContainEqual({
      from: 'Invoice',
      to: 'Payment',
      cardinality: 'one_to_many',
      kind: 'composition',
      source: 'billing',
    });
    expect(assembly.app.projections).toEqual([
      { kind: 'calendar', entity: 'Appointment' },
      { kind: 'dashboard', entity: 'Payment' },
    ]);
  });

  it('is partial when something stays uncovered, and still carries uncovered entities as plain tables', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Appointment', role: 'commitment' },
          { name: 'Spaceship', role: 'reference' },
        ],
        behaviors: ['scheduling', 'inventory_tracking'],
      }),
      library,
    );
    expect(assembly.method).toBe('partial');
    expect(assembly.uncovered).toEqual({ entities: ['Spaceship'], behaviors: ['inventory_tracking'] });
    expect(assembly.patterns.map((use) => use.id)).toEqual(['clinic']);
    expect(assembly.confidence).toBeCloseTo(0.7 * (2 / 3) + 0.3 * (1 / 2), 12);
    const spaceship = assembly.app.entities.find((entity) => entity.name === 'Spaceship');
    expect(spaceship).toEqual({
      name: 'Spaceship',
      role: 'reference',
      fields: [{ name: 'name', type: 'TEXT', required: true, unique: false }],
      source: { patternId: null },
    });
  });

  it('treats an intent without entities as partial with confidence 0', () => {
    const assembly = assembleIntent(intent({ behaviors: ['scheduling'], projections: ['list'] }), library);
    expect(assembly).toMatchObject({
      method: 'partial',
      confidence: 0,
      patterns: [],
      uncovered: { entities: [], behaviors: ['scheduling'] },
    });
    expect(assembly.app.entities).toEqual([]);
    expect(assembly.app.projections).toEqual([]);
  });

  it('deduplicates entities by normalised name and keeps the intent relation, completing it from the pattern', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'patients', role: 'party' },
          { name: 'Appointment', role: 'commitment' },
        ],
        relations: [{ from: 'appointments', to: 'Patient' }],
      }),
      library,
    );
    expect(assembly.app.entities.map((entity) => entity.name)).toEqual(['Patient', 'Appointment']);
    expect(assembly.app.relations).toEqual([
      { from: 'Appointment', to: 'Patient', cardinality: 'many_to_one', kind: 'association', source: 'intent' },
    ]);
  });

  it('keeps an intent relation to an unknown entity so the gates can report it', () => {
    const assembly = assembleIntent(
      intent({
        entities: [{ name: 'Patient', role: 'party' }],
        relations: [{ from: 'Patient', to: 'Wallet', cardinality: 'one_to_one' }],
      }),
      library,
    );
    expect(assembly.app.relations).toEqual([
      { from: 'Patient', to: 'Wallet', cardinality: 'one_to_one', kind: 'association', source: 'intent' },
    ]);
  });

  it('places a projection no pattern provides on the entity that suits it', () => {
    const assembly = assembleIntent(
      intent({
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Appointment', role: 'commitment' },
          { name: 'Invoice', role: 'document' },
        ],
        projections: ['kanban', 'map'],
      }),
      library,
    );
    expect(assembly.app.projections).toEqual([
      { kind: 'kanban', entity: 'Invoice' },
      { kind: 'map', entity: 'Patient' },
    ]);
  });

  it('prefers the pattern listing the intent app type among equal direct covers', () => {
    const builtIn = loadBuiltInPatternLibrary();
    const assembly = assembleIntent(
      {
        appType: 'ecommerce',
        entities: [{ name: 'Customer', role: 'party' }],
        relations: [],
        behaviors: [],
        projections: [],
      },
      builtIn,
    );
    expect(assembly.method).toBe('direct');
    expect(assembly.patterns[0]?.id).toBe('ecommerce');
  });

  it('keeps confidence in [0, 1] across the built-in library', () => {
    const builtIn = loadBuiltInPatternLibrary();
    const assembly = assembleIntent(
      {
        appType: 'booking',
        entities: [
          { name: 'Patient', role: 'party' },
          { name: 'Therapist', role: 'party' },
          { name: 'Session', role: 'commitment' },
          { name: 'Invoice', role: 'document' },
          { name: 'Warp Drive', role: 'resource' },
        ],
        relations: [],
        behaviors: ['scheduling', 'approval', 'payment', 'messaging', 'time_tracking'],
        projections: ['calendar'],
      },
      builtIn,
    );
    expect(assembly.confidence).toBeGreaterThanOrEqual(0);
    expect(assembly.confidence).toBeLessThanOrEqual(1);
    expect(assembly.patterns[0]?.id).toBe('booking');
  });
});
