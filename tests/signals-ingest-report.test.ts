/**
 * Loop D end to end: a generated stream of several thousand signals with
 * planted clusters, malformed lines and duplicates is ingested from JSON
 * Lines; the report finds exactly the planted clusters at or above the
 * minimum size, the malformed lines are refused (line and field) and the
 * duplicates are counted once. The CLI's `--json` report has the public fields.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../src/stats/index.ts';
import { ingestSignalFile } from '../src/signals/ingest.ts';
import { buildSignalReport } from '../src/signals/signal-report.ts';
import { countSignals } from '../src/signals/signal-store.ts';
import type { Signal } from '../src/signals/signal.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase } from '../src/storage/database.ts';
import { loadBuiltInPatternLibrary } from '../src/assembly/pattern-library.ts';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..');
const kloop = path.join(repo, 'bin', 'kloop.js');
const NOW = new Date('2025-03-10T00:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;
const random = createSeededRandom(20250310);

interface PlantedCluster {
  appClass: string;
  hasCommitments: boolean;
  entityCounts: number[];
  bucket: string;
  size: number;
  method: 'direct' | 'decomposed' | 'partial';
  confidence: [number, number];
  uncoveredEntities?: string[];
  uncoveredBehaviors?: Signal['uncoveredBehaviors'];
}

/** Clusters at or above the minimum size (5), largest first: the report must find exactly these. */
const PLANTED: PlantedCluster[] = [
  {
    appClass: 'booking',
    hasCommitments: true,
    entityCounts: [4, 5, 6],
    bucket: '4-6',
    size: 180,
    method: 'decomposed',
    confidence: [0.55, 0.69],
    uncoveredEntities: ['Pet', 'Kennel'],
    uncoveredBehaviors: ['rating'],
  },
  {
    appClass: 'crm',
    hasCommitments: false,
    entityCounts: [1, 2, 3],
    bucket: '1-3',
    size: 60,
    method: 'partial',
    confidence: [0.3, 0.5],
    uncoveredEntities: ['Territory'],
  },
  {
    appClass: 'helpdesk',
    hasCommitments: false,
    entityCounts: [11, 14],
    bucket: '11+',
    size: 25,
    method: 'direct',
    confidence: [0.5, 0.69],
  },
  {
    appClass: 'events',
    hasCommitments: true,
    entityCounts: [0],
    bucket: '0',
    size: 8,
    method: 'direct',
    confidence: [0, 0],
  },
  {
    appClass: 'inventory',
    hasCommitments: false,
    entityCounts: [7, 10],
    bucket: '7-10',
    size: 5,
    method: 'partial',
    confidence: [0.6, 0.9],
  },
];
const APP_CLASSES = [
  'booking',
  'crm',
  'helpdesk',
  'inventory',
  'events',
  'hr',
  'learning',
  'marketplace',
  'membership',
  'expenses',
];

let sequence = 0;
function pick<T>(values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}
function between(low: number, high: number): number {
  return Math.round((low + random() * (high - low)) * 1000) / 1000;
}
function timeInWindow(): string {
  return new Date(NOW.getTime() - Math.floor(1 + random() * (7 * DAY - 2))).toISOString();
}
function makeSignal(overrides: Partial<Signal>): Signal {
  sequence += 1;
  return {
    id: `sig-${String(sequence).padStart(6, '0')}`,
    time: timeInWindow(),
    assemblyMethod: 'direct',
    confidence: between(0.8, 1),
    appClass: pick(APP_CLASSES),
    hasCommitments: random() < 0.5,
    entityCount: 1 + Math.floor(random() * 12),
    artifactVersion: pick(['v1', 'v2']),
    goal: `goal number ${sequence}`,
    patterns: [pick(['booking', 'crm', 'helpdesk', 'inventory'])],
    ...overrides,
  };
}

interface Stream {
  lines: string[];
  valid: number;
  malformed: number;
  duplicates: number;
  inWindow: number;
}

function generateStream(): Stream {
  const signals: Signal[] = [];
  // Background: confident direct assemblies, never low.
  for (let index = 0; index < 4_000; index += 1) signals.push(makeSignal({}));
  // Exactly at the threshold is not low.
  for (let index = 0; index < 40; index += 1) signals.push(makeSignal({ confidence: 0.7 }));
  for (const cluster of PLANTED) {
    for (let index = 0; index < cluster.size; index += 1) {
      signals.push(
        makeSignal({
          appClass: cluster.appClass,
          hasCommitments: cluster.hasCommitments,
          entityCount: pick(cluster.entityCounts),
          assemblyMethod: cluster.method,
          confidence: between(...cluster.confidence),
          ...(cluster.uncoveredEntities !== undefined
            ? { uncoveredEntities: cluster.uncoveredEntities.filter((_, position) => position === 0 || random() < 0.7) }
            : {}),
          ...(cluster.uncoveredBehaviors !== undefined ? { uncoveredBehaviors: cluster.uncoveredBehaviors } : {}),
        }),
      );
    }
  }
  // Noise below the minimum size: 1 to 4 low signals for shapes no planted cluster has.
  const noiseClasses = [
    'hr',
    'learning',
    'marketplace',
    'membership',
    'expenses',
    'field_service',
    'project_management',
  ];
  for (const appClass of noiseClasses) {
    for (const [bucketCount, size] of [
      [2, 4],
      [5, 3],
      [8, 1],
      [12, 2],
    ] as const) {
      for (let index = 0; index < size; index += 1) {
        signals.push(
          makeSignal({
            appClass,
            hasCommitments: false,
            entityCount: bucketCount,
            assemblyMethod: 'partial',
            confidence: 0.4,
          }),
        );
      }
    }
  }
  const inWindow = signals.length;
  // A big low-confidence cluster outside the window (older than 7 days, or in the future): never reported.
  for (let index = 0; index < 60; index += 1) {
    signals.push(
      makeSignal({
        appClass: 'events',
        hasCommitments: true,
        entityCount: 5,
        assemblyMethod: 'decomposed',
        confidence: 0.4,
        time: new Date(NOW.getTime() - 8 * DAY - index * 60_000).toISOString(),
      }),
    );
  }
  for (let index = 0; index < 10; index += 1) {
    signals.push(
      makeSignal({
        appClass: 'events',
        hasCommitments: true,
        entityCount: 5,
        assemblyMethod: 'decomposed',
        confidence: 0.4,
        time: new Date(NOW.getTime() + DAY).toISOString(),
      }),
    );
  }
  const lines = signals.map((signal) => JSON.stringify(signal));
  // Duplicates: exact repeats, and one repeat of an id with different content (the first one wins).
  const duplicateLines: string[] = [];
  for (let index = 0; index < 150; index += 1) duplicateLines.push(pick(lines));
  const first = JSON.parse(lines[0]!) as Signal;
  duplicateLines.push(
    JSON.stringify({
      ...first,
      assemblyMethod: 'partial',
      confidence: 0.1,
      appClass: 'booking',
      hasCommitments: true,
      entityCount: 5,
    }),
  );
  // Malformed lines.
  const base = JSON.parse(lines[1]!) as Record<string, unknown>;
  const malformedLines = [
    '{"id": "broken", "time": ',
    'not json at all',
    '[1, 2, 3]',
    JSON.stringify({ ...base, id: 'm-1', confidence: 1.5 }),
    JSON.stringify({ ...base, id: 'm-2', assemblyMethod: 'guessed' }),
    JSON.stringify({ ...base, id: 'm-3', time: 'last tuesday' }),
    JSON.stringify({ ...base, id: 'm-4', confidance: 0.5 }),
    JSON.stringify({ ...base, id: 'm-5', hasCommitments: 'yes' }),
    JSON.stringify({ ...base, id: 'm-6', entityCount: -1 }),
    JSON.stringify({ ...base, id: 'm-7', appClass: 'Booking Apps' }),
    JSON.stringify({ ...base, id: 'm-8', uncoveredBehaviors: ['flying'] }),
    JSON.stringify(Object.fromEntries(Object.entries(base).filter(([key]) => key !== 'artifactVersion'))),
  ];
  const malformed: string[] = [];
  for (let index = 0; index < 36; index += 1)
    malformed.push(malformedLines[index % malformedLines.length]!.replace('"m-', `"m${index}-`));
  // Shuffle everything but keep the first occurrence of each id before its repeats.
  const shuffled = [...lines, ...malformed];
  for (let index = shuffled.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
  }
  return {
    lines: [...shuffled, '', ...duplicateLines],
    valid: lines.length,
    malformed: malformed.length,
    duplicates: duplicateLines.length,
    inWindow,
  };
}

let dir: string;
let file: string;
let stream: Stream;
let db: StudyDatabase;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-signals-'));
  cpSync(path.join(repo, 'examples', 'intent'), dir, {
    recursive: true,
    filter: (source) => !source.includes('.kloop'),
  });
  stream = generateStream();
  file = path.join(dir, 'signals.jsonl');
  writeFileSync(file, `${stream.lines.join('\n')}\n`, 'utf8');
  db = await openDatabase(':memory:');
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('ingesting a stream of signals', () => {
  it('stores the valid signals once, refuses the malformed with line and field, counts the duplicates', async () => {
    expect(stream.valid + stream.duplicates).toBeGreaterThan(4_000);
    const report = await ingestSignalFile(db, file, { now: () => NOW });
    expect(report.records).toBe(stream.valid + stream.malformed + stream.duplicates);
    expect(report.malformed).toBe(stream.malformed);
    expect(report.valid).toBe(stream.valid + stream.duplicates);
    expect(report.stored).toBe(stream.valid);
    expect(report.duplicates).toBe(stream.duplicates);
    expect(await countSignals(db)).toBe(stream.valid);
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const issue of report.issues) {
      expect(issue.line).toBeGreaterThan(0);
      expect(lines[issue.line! - 1]).not.toBe('');
    }
    const fields = new Set(report.issues.map((issue) => issue.field));
    for (const field of [
      'confidence',
      'assemblyMethod',
      'time',
      'confidance',
      'hasCommitments',
      'entityCount',
      'appClass',
      'uncoveredBehaviors[0]',
      'artifactVersion',
    ]) {
      expect(fields).toContain(field);
    }
  });

  it('is idempotent: the same file again stores nothing new', async () => {
    const again = await ingestSignalFile(db, file, { now: () => NOW });
    expect(again.stored).toBe(0);
    expect(again.duplicates).toBe(stream.valid + stream.duplicates);
    expect(await countSignals(db)).toBe(stream.valid);
  });

  it('the report finds exactly the planted clusters at or above the minimum size', async () => {
    const library = loadBuiltInPatternLibrary();
    const report = await buildSignalReport(db, {
      now: NOW,
      settings: { minClusterSize: 5 },
      patterns: library.patterns,
    });
    expect(report.signals).toBe(stream.inWindow);
    const planted = PLANTED.reduce((sum, cluster) => sum + cluster.size, 0);
    const noise = 7 * (4 + 3 + 1 + 2);
    expect(report.lowConfidence).toBe(planted + noise);
    const found = report.clusters.map((cluster) => [
      cluster.appClass,
      cluster.hasCommitments,
      cluster.entityCountBucket,
      cluster.size,
    ]);
    const expected = PLANTED.map((cluster) => [cluster.appClass, cluster.hasCommitments, cluster.bucket, cluster.size]);
    expect(found).toEqual(expected);
    for (const cluster of report.clusters) expect(cluster.share).toBeCloseTo(cluster.size / stream.inWindow, 12);
    expect(report.belowMinimum).toEqual({ clusters: 7 * 4, signals: noise });
    const booking = report.clusters[0]!;
    expect(booking.uncoveredEntities[0]).toMatchObject({ name: 'Pet', count: 180, share: 1 });
    expect(booking.uncoveredBehaviors[0]).toMatchObject({ name: 'rating', count: 180 });
    expect(booking.exampleGoals).toHaveLength(3);
    expect(report.recurringGaps.map((gap) => gap.name)).toEqual(
      expect.arrayContaining(['Pet', 'Kennel', 'Territory', 'rating']),
    );
    // Only four patterns are ever used in this stream: the rest of the library are deprecation candidates.
    expect(report.deprecationCandidates.patterns).not.toContain('booking');
    expect(report.deprecationCandidates.patterns).toContain('learning');
    const candidate = report.candidatePatterns.find((entry) => entry.clusterKey === booking.key);
    expect(candidate?.draft?.valid).toBe(true);
    expect(candidate?.draft?.yaml).toContain('name: Pet');
  });

  it('the CLI ingests the file and prints the JSON report with its public fields', async () => {
    const ingest = await run(process.execPath, [kloop, 'signals', 'ingest', dir, file, '--json'], { cwd: repo }).catch(
      (error: { code: number; stdout: string }) => error,
    );
    expect((ingest as { code?: number }).code).toBe(2);
    const ingested = JSON.parse(ingest.stdout) as { stored: number; malformed: number; duplicates: number };
    expect(ingested).toMatchObject({
      stored: stream.valid,
      malformed: stream.malformed,
      duplicates: stream.duplicates,
    });
    const { stdout } = await run(
      process.execPath,
      [kloop, 'signals', 'report', dir, '--json', '--now', NOW.toISOString()],
      { cwd: repo },
    );
    const report = JSON.parse(stdout) as {
      window: { from: string; to: string };
      signals: number;
      lowConfidence: number;
      clusters: Array<{
        appClass: string;
        hasCommitments: boolean;
        entityCountBucket: string;
        size: number;
        share: number;
      }>;
    };
    expect(report.window).toMatchObject({ from: '2025-03-03T00:00:00.000Z', to: '2025-03-10T00:00:00.000Z' });
    expect(report.signals).toBe(stream.inWindow);
    expect(
      report.clusters.map(
        (cluster) => `${cluster.appClass}/${cluster.hasCommitments}/${cluster.entityCountBucket}/${cluster.size}`,
      ),
    ).toEqual(
      PLANTED.map((cluster) => `${cluster.appClass}/${cluster.hasCommitments}/${cluster.bucket}/${cluster.size}`),
    );
    for (const cluster of report.clusters) expect(typeof cluster.share).toBe('number');
  }, 180_000);

  it('honours signals.storeGoals: false and a larger minimum cluster size from kloop.yaml', async () => {
    const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8');
    const other = mkdtempSync(path.join(tmpdir(), 'kloop-signals-nogoal-'));
    try {
      cpSync(dir, other, { recursive: true, filter: (source) => !source.includes('.kloop') });
      writeFileSync(path.join(other, 'kloop.yaml'), `${config}\nsignals:\n  storeGoals: false\n  minClusterSize: 30\n`);
      await run(process.execPath, [kloop, 'signals', 'ingest', other, file], { cwd: repo }).catch(() => undefined);
      const { stdout } = await run(
        process.execPath,
        [kloop, 'signals', 'report', other, '--json', '--now', NOW.toISOString()],
        { cwd: repo },
      );
      const report = JSON.parse(stdout) as { clusters: Array<{ size: number; exampleGoals: string[] }> };
      expect(report.clusters.map((cluster) => cluster.size)).toEqual([180, 60]);
      for (const cluster of report.clusters) expect(cluster.exampleGoals).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 180_000);
});
