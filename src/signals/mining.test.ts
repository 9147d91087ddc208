import { describe, expect, it } from 'vitest';
import { loadBuiltInPatternLibrary } from '../assembly/pattern-library.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import { createRoleIndex, draftPattern } from './candidate-pattern.ts';
import { createShape, libraryCoverage, mineShapes, shapeContains } from './mining.ts';
import type { StoredSignal } from './signal.ts';

const library = loadBuiltInPatternLibrary();
let counter = 0;

function signal(overrides: Partial<StoredSignal>): StoredSignal {
  counter += 1;
  return {
    id: `m-${counter}`,
    time: '2025-03-09T12:00:00.000Z',
    assemblyMethod: 'partial',
    confidence: 0.5,
    appClass: 'booking',
    hasCommitments: true,
    entityCount: 4,
    artifactVersion: 'v1',
    goal: null,
    uncoveredEntities: [],
    uncoveredBehaviors: [],
    patterns: [],
    source: 'ingest',
    receivedAt: '2025-03-09T12:00:00.000Z',
    ...overrides,
  };
}

function example(id: string, appType: string, entities: Array<[string, string]>, behaviors: string[]): IntentExample {
  return {
    id,
    input: `goal of ${id}`,
    text: `goal of ${id}`,
    expected: { appType, entities: entities.map(([name, role]) => ({ name, role })), behaviors },
    tags: [],
    partition: 'optimization',
  } as IntentExample;
}

describe('shapes and library coverage', () => {
  it('a shape contains another of the same type with fewer roles and behaviours', () => {
    const big = createShape('booking', ['party', 'commitment', 'resource'], ['scheduling', 'payment']);
    expect(shapeContains(big, createShape('booking', ['party'], ['payment']))).toBe(true);
    expect(shapeContains(big, createShape('crm', ['party'], []))).toBe(false);
  });

  it('the booking pattern covers a plain booking shape; nothing covers a booking with inventory tracking and time tracking', () => {
    expect(
      libraryCoverage(createShape('booking', ['party', 'commitment'], ['scheduling']), library.patterns).status,
    ).toBe('covered');
    const odd = libraryCoverage(
      createShape('booking', ['party', 'commitment'], ['inventory_tracking', 'time_tracking', 'rating']),
      library.patterns,
    );
    expect(odd.status).toBe('missing');
    expect(odd.bestPattern).not.toBeNull();
  });
});

describe('Loop C mining', () => {
  it('finds a planted shape frequent in signals, missing from the library and thin in the corpus, and drafts a pattern and examples', () => {
    const planted = {
      appClass: 'booking',
      roles: ['party', 'commitment', 'resource'],
      behaviors: ['scheduling', 'inventory_tracking', 'time_tracking'],
    };
    const signals: StoredSignal[] = [];
    for (let index = 0; index < 12; index += 1) {
      signals.push(
        signal({
          ...planted,
          uncoveredEntities: ['Kennel', ...(index % 2 === 0 ? ['Pet'] : [])],
          goal: `owners book kennel stays for their pets ${index}`,
        }),
      );
    }
    // Frequent but covered: no finding.
    for (let index = 0; index < 12; index += 1)
      signals.push(signal({ roles: ['party', 'commitment'], behaviors: ['scheduling'] }));
    // Rare: below minSupport.
    for (let index = 0; index < 3; index += 1)
      signals.push(
        signal({ appClass: 'crm', roles: ['party'], behaviors: ['messaging', 'time_tracking', 'inventory_tracking'] }),
      );
    // Signals without roles and behaviours have no shape.
    signals.push(signal({}));
    const corpus = [
      example(
        'kennel-1',
        'booking',
        [
          ['Kennel', 'resource'],
          ['Owner', 'party'],
        ],
        ['scheduling'],
      ),
    ];
    const report = mineShapes({
      signals,
      corpus,
      patterns: library.patterns,
      settings: { minSupport: 5, thinCorpusBelow: 3, examplesPerShape: 2 },
      roleIndex: createRoleIndex(corpus, library.patterns),
    });
    expect(report.signalsWithoutShape).toBe(1);
    expect(report.shapes.map((shape) => shape.key)).toEqual([
      'booking|commitment+party+resource|inventory_tracking+scheduling+time_tracking',
    ]);
    expect(report.shapes[0]).toMatchObject({
      signals: 12,
      corpusExamples: 0,
      reasons: ['missing-in-library', 'thin-in-corpus'],
    });
    expect(report.candidatePatterns).toHaveLength(1);
    const draft = report.candidatePatterns[0]!.draft;
    expect(draft.valid).toBe(true);
    expect(draft.yaml).toContain('name: Kennel');
    expect(draft.yaml).toContain('role: resource');
    expect(report.candidateExamples).toHaveLength(2);
    expect(report.candidateExamples[0]!.example).toMatchObject({
      partition: 'shadow',
      expected: { appType: 'booking' },
    });
    expect(report.candidateExamples[0]!.example.tags).toContain('needs-gold');
  });

  it('reports a common core of corpus shapes that the library lacks (intersections), not its sub-shapes', () => {
    const behaviors = ['approval', 'time_tracking', 'rating'];
    const corpus = [
      example(
        'a',
        'events',
        [
          ['Volunteer', 'party'],
          ['Shift', 'commitment'],
        ],
        [...behaviors, 'scheduling'],
      ),
      example(
        'b',
        'events',
        [
          ['Volunteer', 'party'],
          ['Shift', 'commitment'],
          ['Venue', 'reference'],
        ],
        behaviors,
      ),
      example(
        'c',
        'events',
        [
          ['Volunteer', 'party'],
          ['Shift', 'commitment'],
        ],
        [...behaviors, 'notification'],
      ),
      example(
        'd',
        'events',
        [
          ['Volunteers', 'party'],
          ['Shifts', 'commitment'],
          ['Badge', 'document'],
        ],
        [...behaviors, 'reporting'],
      ),
      example(
        'e',
        'events',
        [
          ['Volunteer', 'party'],
          ['Shift', 'commitment'],
        ],
        [...behaviors, 'payment'],
      ),
    ];
    const report = mineShapes({
      signals: [],
      corpus,
      patterns: library.patterns,
      settings: { minSupport: 5, thinCorpusBelow: 3 },
    });
    expect(report.shapes.map((shape) => shape.key)).toEqual(['events|commitment+party|approval+rating+time_tracking']);
    expect(report.shapes[0]).toMatchObject({ corpusExamples: 5, reasons: ['missing-in-library'] });
    const draft = report.candidatePatterns[0]!.draft;
    expect(draft.valid).toBe(true);
    expect(draft.guessedRoles).toEqual([]);
    expect(draft.yaml).toMatch(/name: Shift\n\s+role: commitment/);
    expect(draft.yaml).toMatch(/name: Volunteer\n\s+role: party/);
    expect(draft.yaml).not.toContain('*a1');
  });

  it('never drafts from nothing', () => {
    expect(
      draftPattern({ idWords: ['x'], title: 'x', description: 'x', appType: 'booking', entities: [], behaviors: [] })
        .valid,
    ).toBe(false);
  });
});
