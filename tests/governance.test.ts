/**
 * Evidence and acceptance stay apart (DESIGN.md §5): no Loop C or Loop D
 * action — ingest, report, mine, enqueue, serve, or their scheduled runs —
 * changes the active artifact. The registry pointer, its history and every
 * artifact version are byte-for-byte the same before and after; the findings
 * are on the review queue, pending.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltInPatternLibrary } from '../src/assembly/pattern-library.ts';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { asIntentExamples, intentExample } from '../src/corpus/intent-example.ts';
import { enqueueMiningFindings, enqueueSignalFindings, hasCompleteGold } from '../src/signals/governance.ts';
import { ingestSignalFile } from '../src/signals/ingest.ts';
import { buildMiningReport, runLoopC, runLoopD } from '../src/signals/loops.ts';
import { buildSignalReport } from '../src/signals/signal-report.ts';
import { startSignalServer } from '../src/signals/server.ts';
import type { MiningReport } from '../src/signals/mining.ts';
import type { Signal } from '../src/signals/signal.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudyConfig } from '../src/config/config.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { listReviewItems } from '../src/review/review-queue.ts';
import { ensureSeedVersion } from '../src/loop/run-study.ts';
import { createManualScheduler, createStudyLoops, startSchedule } from '../src/schedule/schedule.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const repo = path.resolve(import.meta.dirname, '..');
const NOW = new Date('2025-03-10T00:00:00.000Z');
const TOKEN = 'governance-token-0123456789';
let dir: string;
let db: StudyDatabase;

async function snapshot(): Promise<unknown> {
  return {
    registry: await db.selectFrom('registry').selectAll().orderBy('name').execute(),
    registryEvents: await db.selectFrom('registry_events').selectAll().orderBy('id').execute(),
    versions: await db.selectFrom('artifact_versions').selectAll().orderBy('id').execute(),
    artifactFile: readFileSync(path.join(dir, 'playbook.yaml'), 'utf8'),
  };
}

function signalsFile(): string {
  const lines: string[] = [];
  let id = 0;
  const add = (overrides: Partial<Signal>, count: number): void => {
    for (let index = 0; index < count; index += 1) {
      id += 1;
      const signal: Signal = {
        id: `g-${id}`,
        time: new Date(NOW.getTime() - (1 + id) * 60_000).toISOString(),
        assemblyMethod: 'partial',
        confidence: 0.45,
        appClass: 'booking',
        hasCommitments: true,
        entityCount: 5,
        artifactVersion: 'seed',
        goal: `dog owners book overnight kennel stays and rate the carers, request ${id}`,
        uncoveredEntities: ['Kennel', 'Pet'],
        uncoveredBehaviors: ['rating'],
        patterns: ['booking'],
        roles: ['party', 'commitment', 'resource'],
        behaviors: ['scheduling', 'rating', 'time_tracking', 'inventory_tracking'],
        ...overrides,
      };
      lines.push(JSON.stringify(signal));
    }
  };
  add({}, 12);
  add(
    {
      appClass: 'helpdesk',
      hasCommitments: false,
      entityCount: 3,
      uncoveredEntities: [],
      uncoveredBehaviors: ['rating'],
      patterns: ['helpdesk'],
      roles: ['party', 'document'],
      behaviors: ['assignment', 'rating'],
    },
    8,
  );
  add(
    {
      assemblyMethod: 'direct',
      confidence: 0.95,
      uncoveredEntities: [],
      uncoveredBehaviors: [],
      roles: ['party', 'commitment'],
      behaviors: ['scheduling'],
    },
    20,
  );
  const file = path.join(dir, 'signals.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-governance-'));
  cpSync(path.join(repo, 'examples', 'intent'), dir, {
    recursive: true,
    filter: (source) => !source.includes('.kloop'),
  });
  db = await openDatabase(studyDatabasePath(dir));
  await ensureSeedVersion(openNotebook(db), loadStudy(dir), () => NOW);
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('Loops C and D never touch the active artifact', () => {
  it('ingest, report, mine, enqueue, serve and the scheduled slow loops leave the registry and artifact versions unchanged', async () => {
    const before = await snapshot();
    const config = loadStudyConfig(dir);
    const library = loadBuiltInPatternLibrary();
    const study = loadStudy(dir);
    const corpus: readonly IntentExample[] = asIntentExamples([
      ...study.partitions.optimization,
      ...study.partitions.anchor,
    ]);

    // Ingest.
    const ingest = await ingestSignalFile(db, signalsFile(), { now: () => NOW });
    expect(ingest.stored).toBe(40);

    // Report and mine (read-only), then enqueue their findings.
    const report = await buildSignalReport(db, { now: NOW, patterns: library.patterns });
    expect(report.clusters.length).toBeGreaterThan(0);
    expect(report.candidatePatterns.some((candidate) => candidate.draft?.valid === true)).toBe(true);
    const mining = await buildMiningReport({
      db,
      settings: config.signals!,
      patterns: library.patterns,
      corpus,
      now: () => NOW,
    });
    expect(mining.candidatePatterns.length).toBeGreaterThan(0);
    expect(mining.candidateExamples.length).toBeGreaterThan(0);
    const fromD = await enqueueSignalFindings(db, report, { now: () => NOW });
    expect(fromD.queued).toBeGreaterThan(0);
    const admitted: string[] = [];
    const fromC = await enqueueMiningFindings(db, mining, {
      now: () => NOW,
      admitExample: async (example) => {
        admitted.push(example.id);
        return { admitted: true };
      },
    });
    expect(fromC.queued).toBeGreaterThan(0);
    // Mined examples carry partial gold: they go to review, not straight into the corpus.
    expect(mining.candidateExamples.every((candidate) => !hasCompleteGold(candidate.example))).toBe(true);
    expect(admitted).toEqual([]);

    // Enqueueing again queues nothing new.
    const again = await runLoopD({ db, settings: config.signals!, patterns: library.patterns, corpus, now: () => NOW });
    expect(again.enqueued).toMatchObject({ queued: 0 });
    const againC = await runLoopC({
      db,
      settings: config.signals!,
      patterns: library.patterns,
      corpus,
      now: () => NOW,
    });
    expect(againC.enqueued).toMatchObject({ queued: 0 });

    // Serve: a batch posted to the endpoint.
    const server = await startSignalServer({ db, token: TOKEN, port: 0 });
    try {
      const response = await fetch(`${server.url}/signals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify([
          {
            id: 'served-1',
            time: NOW.toISOString(),
            assemblyMethod: 'partial',
            confidence: 0.2,
            appClass: 'crm',
            hasCommitments: false,
            entityCount: 2,
            artifactVersion: 'seed',
          },
        ]),
      });
      expect(response.status).toBe(200);
    } finally {
      await server.close();
    }

    // The slow loops as scheduled (C and D), with a fake clock.
    const scheduler = createManualScheduler(new Date('2025-03-10T02:30:00.000Z'), { timezone: 'UTC' });
    const loops = createStudyLoops(
      { db, loadStudy: () => loadStudy(dir) },
      { ...config.schedule!, slow: '0 3 * * 1', loops: { A: 'off', B: 'off' } },
    );
    const schedule = startSchedule({ db, loops, scheduler });
    await scheduler.advanceTo(new Date('2025-03-10T03:30:00.000Z'));
    await schedule.stop();
    const runs = await db.selectFrom('schedule_runs').select(['loop', 'outcome']).orderBy('id').execute();
    expect(runs).toEqual([
      { loop: 'C', outcome: 'ok' },
      { loop: 'D', outcome: 'ok' },
    ]);

    expect(await snapshot()).toEqual(before);

    const items = await listReviewItems(db, { status: 'all' });
    expect(items.every((item) => item.status === 'pending')).toBe(true);
    expect(new Set(items.map((item) => `${item.kind}/${item.source}`))).toEqual(
      new Set(['pattern/loop-d', 'pattern/loop-c', 'example/loop-c']),
    );
    expect(items.some((item) => item.kind === 'artifact')).toBe(false);
  }, 300_000);
});

describe('candidate examples: admission when the gold is complete, else review', () => {
  it('admits complete examples through the hook, queues partial ones, and queues what admission could not take', async () => {
    const memory = await openDatabase(':memory:');
    try {
      const complete = intentExample({
        id: 'c-1',
        goal: 'owners book kennel stays for their dogs',
        expected: { appType: 'booking' as const, entities: [{ name: 'Kennel', role: 'resource' as const }] },
        tags: [],
        partition: 'shadow' as const,
      });
      const partial = intentExample({
        id: 'c-2',
        goal: 'a pet hotel',
        expected: { appType: 'booking' as const, behaviors: ['scheduling' as const] },
        tags: ['needs-gold'],
        partition: 'shadow' as const,
      });
      const report: MiningReport = {
        signalsConsidered: 0,
        signalsWithoutShape: 0,
        corpusConsidered: 0,
        corpusWithoutShape: 0,
        settings: { minSupport: 5, thinCorpusBelow: 3, examplesPerShape: 3 },
        shapes: [],
        candidatePatterns: [],
        candidateExamples: [
          { shapeKey: 'k', signalId: 's1', example: complete },
          { shapeKey: 'k', signalId: 's2', example: partial },
        ],
      };
      const admitted: string[] = [];
      const first = await enqueueMiningFindings(memory, report, {
        admitExample: async (example) => (admitted.push(example.id), { admitted: true }),
      });
      expect(admitted).toEqual(['c-1']);
      expect(first).toMatchObject({ admitted: 1, queued: 1 });
      const failing = await enqueueMiningFindings(
        memory,
        { ...report, candidateExamples: [{ shapeKey: 'k', signalId: 's3', example: { ...complete, id: 'c-3' } }] },
        {
          admitExample: async () => {
            throw new Error('round 4 of this study is open');
          },
        },
      );
      expect(failing).toMatchObject({ admitted: 0, queued: 1 });
      const items = await listReviewItems(memory);
      expect(
        items.map((item) => [item.kind, item.source, (item.payload as { example: { id: string } }).example.id]),
      ).toEqual([
        ['example', 'loop-c', 'c-2'],
        ['example', 'loop-c', 'c-3'],
      ]);
      expect(items[1]!.evidence).toMatchObject({ admissionError: 'round 4 of this study is open' });
    } finally {
      await memory.destroy();
    }
  });
});
