import { describe, expect, it } from 'vitest';
import {
  analyzeSignals,
  entityCountBucket,
  entityCountBucketLabels,
  isLowConfidence,
  signalWindow,
} from './analysis.ts';
import type { StoredSignal } from './signal.ts';

const now = new Date('2025-03-10T00:00:00Z');
let counter = 0;

function signal(overrides: Partial<StoredSignal> = {}): StoredSignal {
  counter += 1;
  return {
    id: `s-${counter}`,
    time: '2025-03-09T12:00:00.000Z',
    assemblyMethod: 'direct',
    confidence: 0.95,
    appClass: 'booking',
    hasCommitments: true,
    entityCount: 4,
    artifactVersion: 'v1',
    goal: null,
    uncoveredEntities: [],
    uncoveredBehaviors: [],
    patterns: ['booking'],
    source: 'ingest',
    receivedAt: '2025-03-09T12:00:00.000Z',
    ...overrides,
  };
}

describe('entity-count buckets', () => {
  it('default bounds [3, 6, 10] give 0, 1-3, 4-6, 7-10, 11+', () => {
    expect(entityCountBucketLabels([3, 6, 10])).toEqual(['0', '1-3', '4-6', '7-10', '11+']);
    expect([0, 1, 3, 4, 6, 7, 10, 11, 200].map((count) => entityCountBucket(count, [3, 6, 10]))).toEqual([
      '0',
      '1-3',
      '1-3',
      '4-6',
      '4-6',
      '7-10',
      '7-10',
      '11+',
      '11+',
    ]);
    expect(entityCountBucket(1, [1, 5])).toBe('1');
  });
});

describe('low confidence', () => {
  const settings = {
    confidenceThreshold: 0.7,
    lowConfidenceMethods: ['decomposed', 'partial'] as Array<'decomposed' | 'partial'>,
  };
  it('is a decomposed or partial method, or confidence strictly below the threshold', () => {
    expect(isLowConfidence({ assemblyMethod: 'decomposed', confidence: 0.99 }, settings)).toBe(true);
    expect(isLowConfidence({ assemblyMethod: 'partial', confidence: 0.99 }, settings)).toBe(true);
    expect(isLowConfidence({ assemblyMethod: 'direct', confidence: 0.69 }, settings)).toBe(true);
    expect(isLowConfidence({ assemblyMethod: 'direct', confidence: 0.7 }, settings)).toBe(false);
  });
  it('a configured 0 threshold means only the methods count', () => {
    expect(isLowConfidence({ assemblyMethod: 'direct', confidence: 0 }, { ...settings, confidenceThreshold: 0 })).toBe(
      false,
    );
  });
});

describe('the Loop D analysis', () => {
  it('clusters low-confidence signals by shape, keeps clusters of the minimum size and summarises them', () => {
    const signals: StoredSignal[] = [];
    for (let index = 0; index < 6; index += 1) {
      signals.push(
        signal({
          assemblyMethod: 'decomposed',
          confidence: 0.6,
          uncoveredEntities: index < 4 ? ['Pet', 'pets'] : ['Kennel'],
          uncoveredBehaviors: ['rating'],
          goal: `goal ${index}`,
          time: `2025-03-0${index + 4}T00:00:00.000Z`,
        }),
      );
    }
    for (let index = 0; index < 4; index += 1)
      signals.push(signal({ assemblyMethod: 'partial', appClass: 'crm', hasCommitments: false }));
    for (let index = 0; index < 10; index += 1) signals.push(signal());
    signals.push(signal({ assemblyMethod: 'partial', time: '2025-03-01T00:00:00.000Z' }));
    const analysis = analyzeSignals(signals, {
      now,
      settings: { minClusterSize: 5, exampleGoals: 2 },
      knownPatterns: ['booking', 'crm'],
    });
    expect(analysis.signals).toBe(20);
    expect(analysis.outsideWindow).toBe(1);
    expect(analysis.lowConfidence).toBe(10);
    expect(analysis.clusters).toHaveLength(1);
    const cluster = analysis.clusters[0]!;
    expect(cluster).toMatchObject({
      appClass: 'booking',
      hasCommitments: true,
      entityCountBucket: '4-6',
      size: 6,
      share: 6 / 20,
    });
    expect(cluster.uncoveredEntities[0]).toMatchObject({ count: 4 });
    expect(cluster.uncoveredBehaviors).toEqual([{ name: 'rating', count: 6, share: 1 }]);
    expect(cluster.exampleGoals).toEqual(['goal 5', 'goal 4']);
    expect(analysis.belowMinimum).toEqual({ clusters: 1, signals: 4 });
    expect(analysis.recurringGaps.map((gap) => `${gap.kind}:${gap.name}`)).toEqual(['behavior:rating']);
    expect(analysis.deprecationCandidates.patterns).toEqual(['crm']);
    expect(analysis.candidatePatterns).toHaveLength(1);
    expect(analysis.candidatePatterns[0]!.entities.map((entry) => entry.count)).toEqual([4]);
  });

  it('keeps in a candidate pattern the uncovered entities and behaviours at signals.typicalShare or above', () => {
    // One cluster of 6: "Pet" uncovered in 4 (share 2/3), "rating" in all 6 (share 1).
    const signals = Array.from({ length: 6 }, (_, index) =>
      signal({
        assemblyMethod: 'decomposed',
        confidence: 0.6,
        uncoveredEntities: index < 4 ? ['Pet'] : [],
        uncoveredBehaviors: ['rating'],
      }),
    );
    const sketch = (typicalShare: number) =>
      analyzeSignals(signals, { now, settings: { minClusterSize: 5, typicalShare } }).candidatePatterns;
    expect(sketch(0.5)[0]).toMatchObject({
      entities: [{ name: 'Pet', count: 4 }],
      behaviors: [{ name: 'rating', count: 6 }],
    });
    expect(sketch(0.7)[0]).toMatchObject({ entities: [], behaviors: [{ name: 'rating', count: 6 }] });
    expect(sketch(1)[0]!.entities).toEqual([]);
    expect(
      analyzeSignals(signals, { now, settings: { minClusterSize: 5, typicalShare: 0.7 } }).settings.typicalShare,
    ).toBe(0.7);
  });

  it('does not depend on the order of the signals', () => {
    const signals = Array.from({ length: 30 }, (_, index) =>
      signal({
        assemblyMethod: index % 2 === 0 ? 'partial' : 'direct',
        confidence: 0.5,
        entityCount: index % 12,
        goal: `g${index % 7}`,
        time: new Date(now.getTime() - index * 3_600_000).toISOString(),
      }),
    );
    const forward = analyzeSignals(signals, { now, settings: { minClusterSize: 2 } });
    const backward = analyzeSignals([...signals].reverse(), { now, settings: { minClusterSize: 2 } });
    expect(backward).toEqual(forward);
  });

  it('says when there is too little evidence for deprecation', () => {
    const analysis = analyzeSignals([signal()], {
      now,
      knownPatterns: ['booking', 'crm'],
      knownSections: ['appTypeCues'],
    });
    expect(analysis.deprecationCandidates.patterns).toEqual([]);
    expect(analysis.deprecationCandidates.notes).toHaveLength(2);
  });

  it('the window is (now − days, now]', () => {
    expect(signalWindow(now, 7)).toEqual({ from: '2025-03-03T00:00:00.000Z', to: '2025-03-10T00:00:00.000Z', days: 7 });
    const edge = analyzeSignals(
      [signal({ time: '2025-03-03T00:00:00.000Z' }), signal({ time: '2025-03-10T00:00:00.000Z' })],
      { now },
    );
    expect(edge.signals).toBe(1);
  });
});
