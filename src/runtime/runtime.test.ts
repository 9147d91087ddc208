import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { kloop } from '../../tests/cli-in-process.ts';
import { contentHash } from '../artifact/content-hash.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { getRegistryVersion, putVersion, setRegistryVersion, withArtifactOverride } from '../storage/registry.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { loadStudy } from '../study/load-study.ts';
import type { Executor } from '../executors/executor.ts';
import type { Intent } from '../tasks/intent/intent.ts';
import { createRuntime } from './runtime.ts';
import { listSignals } from '../signals/production-signal.ts';

const EXAMPLE_STUDY = path.resolve(import.meta.dirname, '../../examples/intent');

/** An executor that returns a fixed intent (or an invalid output) whatever the goal. */
function fixedExecutor(intent: Intent | null): Executor {
  return {
    id: 'fixed@test',
    deterministic: true,
    execute: async () =>
      intent === null
        ? { ok: false, reason: 'unparsable', message: 'no JSON in the answer', raw: 'hello' }
        : { ok: true, output: intent },
  };
}

const DIRECT: Intent = {
  appType: 'booking',
  entities: [
    { name: 'Customer', role: 'party' },
    { name: 'Booking', role: 'commitment' },
  ],
  relations: [{ from: 'Customer', to: 'Booking', cardinality: 'one_to_many' }],
  behaviors: ['scheduling'],
  projections: ['calendar'],
};
const DECOMPOSED: Intent = {
  ...DIRECT,
  entities: [...DIRECT.entities, { name: 'Ticket', role: 'document' }],
  relations: [],
  projections: ['list'],
};
const PARTIAL: Intent = {
  ...DIRECT,
  entities: [...DIRECT.entities, { name: 'Kennel', role: 'reference' }],
  relations: [],
  projections: ['list'],
};
const MANY_TO_MANY: Intent = {
  appType: 'learning',
  entities: [
    { name: 'Student', role: 'party' },
    { name: 'Course', role: 'resource' },
  ],
  relations: [{ from: 'Student', to: 'Course', cardinality: 'many_to_many', kind: 'association' }],
  behaviors: [],
  projections: ['list'],
};
/** "Order" is a reserved word, so its table is `order_record` — the same table as "Order Record": the DDL cannot build. */
const CLASHING: Intent = {
  appType: 'ecommerce',
  entities: [
    { name: 'Order', role: 'transaction' },
    { name: 'Order Record', role: 'transaction' },
  ],
  relations: [],
  behaviors: [],
  projections: ['list'],
};

let study: LoadedStudy;
let db: StudyDatabase;

beforeAll(() => {
  study = loadStudy(EXAMPLE_STUDY);
});
beforeEach(async () => {
  db = await openDatabase(':memory:');
});
afterEach(async () => {
  await db.destroy();
});

describe('createRuntime on the reference corpus (offline)', () => {
  it('returns valid SQL or a failed gate for every example, never a crash, and records one signal per call', async () => {
    const runtime = await createRuntime({ study, db });
    let built = 0;
    for (const example of study.corpus) {
      const result = await runtime.build(example.text);
      expect(result.ok, example.id).toBe(true);
      if (!result.ok) continue;
      expect(result.gates.length).toBeGreaterThan(0);
      const buildGate = result.gates.find((gate) => gate.name === 'sql-builds')!;
      expect(buildGate.passed).toBe(result.build.ok);
      if (result.build.ok) {
        expect(result.sql).toMatch(/CREATE TABLE/);
        built += 1;
      } else {
        expect(result.gates.some((gate) => !gate.passed)).toBe(true);
      }
      expect(['direct', 'decomposed', 'partial']).toContain(result.assembly.method);
      expect(result.assembly.confidence).toBeGreaterThanOrEqual(0);
      expect(result.assembly.confidence).toBeLessThanOrEqual(1);
      expect(result.signalId).not.toBeNull();
    }
    expect(built).toBeGreaterThan(0);
    const signals = await listSignals(db);
    expect(signals).toHaveLength(study.corpus.length);
    expect(signals.every((signal) => signal.source === 'runtime' && signal.goal !== undefined)).toBe(true);
  });

  it('seeds an empty registry with the study artifact and runs the active version', async () => {
    const runtime = await createRuntime({ study, db });
    const result = await runtime.build(study.corpus[0]!.text);
    const active = await getRegistryVersion(db);
    expect(active?.text).toBe(study.artifactText);
    expect(result.artifactVersionId).toBe(active?.id);
    expect(result.artifactVersion).toBe(contentHash(study.artifactText));
  });
});

describe('createRuntime with constructed intents', () => {
  it.each([
    ['direct', DIRECT],
    ['decomposed', DECOMPOSED],
    ['partial', PARTIAL],
  ] as const)('assembles %s through the runtime path', async (method, intent) => {
    const runtime = await createRuntime({ study, db, executor: fixedExecutor(intent) });
    const result = await runtime.build('any goal');
    if (!result.ok) throw new Error('expected a result');
    expect(result.assembly.method).toBe(method);
    expect(result.build.ok).toBe(true);
    if (method === 'partial') expect(result.assembly.uncovered.entities).toEqual(['Kennel']);
    else expect(result.assembly.uncovered).toEqual({ entities: [], behaviors: [] });
    if (method === 'decomposed') expect(result.assembly.patterns.map((use) => use.id)).toEqual(['booking', 'helpdesk']);
  });

  it('catches SQL that cannot build in the sql-builds gate instead of crashing', async () => {
    const runtime = await createRuntime({ study, db, executor: fixedExecutor(CLASHING) });
    const result = await runtime.build('an online shop');
    if (!result.ok) throw new Error('expected a result');
    expect(result.build.ok).toBe(false);
    const gate = result.gates.find((candidate) => candidate.name === 'sql-builds')!;
    expect(gate.passed).toBe(false);
    expect(gate.message).toMatch(/SQLite statement error/);
    expect(result.sql).toMatch(/CREATE TABLE order_record/);
  });

  it('compiles a many-to-many relation to a join table with a key to each side', async () => {
    const runtime = await createRuntime({ study, db, executor: fixedExecutor(MANY_TO_MANY) });
    const result = await runtime.build('students enrol in many courses');
    if (!result.ok) throw new Error('expected a result');
    const join = result.spec.tables.find((table) => table.kind === 'join');
    expect(join?.name).toBe('student_course');
    expect(join?.primaryKey).toEqual(['student_id', 'course_id']);
    expect(result.sql).toMatch(/CREATE TABLE student_course/);
    expect(result.gates.find((gate) => gate.name === 'many-to-many-join-tables')).toMatchObject({ passed: true });
    expect(result.build.ok).toBe(true);
  });

  it('returns an invalid result (no score, no signal) when the executor produces no intent', async () => {
    const runtime = await createRuntime({ study, db, executor: fixedExecutor(null) });
    const result = await runtime.build('anything');
    expect(result).toMatchObject({ ok: false, invalid: { reason: 'unparsable' }, signalId: null });
    expect(await listSignals(db)).toEqual([]);
  });

  it('records the signal fields, and leaves the goal out with storeGoals: false', async () => {
    const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    const runtime = await createRuntime({
      study,
      db,
      executor: fixedExecutor(PARTIAL),
      storeGoals: false,
      createId: () => ids.shift()!,
      now: () => new Date('2025-01-02T03:04:05.000Z'),
    });
    await runtime.build('kennel bookings');
    const [signal] = await listSignals(db);
    expect(signal).toMatchObject({
      id: '00000000-0000-4000-8000-000000000001',
      time: '2025-01-02T03:04:05.000Z',
      assemblyMethod: 'partial',
      appClass: 'booking',
      hasCommitments: true,
      entityCount: 3,
      uncoveredEntities: ['Kennel'],
      uncoveredBehaviors: [],
      patterns: ['booking'],
      source: 'runtime',
    });
    expect(signal!.goal).toBeUndefined();
    const row = await db.selectFrom('signals').selectAll().executeTakeFirstOrThrow();
    expect(row.goal).toBeNull();
    expect(row.has_commitments).toBe(1);
    expect(JSON.parse(row.detail)).toMatchObject({ uncoveredEntities: ['Kennel'], patterns: ['booking'] });
  });

  it('runs the active registry version or the evaluation override, never the file on disk', async () => {
    const seeded = await putVersion(db, study.artifactText, 'seed', null, null);
    await setRegistryVersion(db, seeded.id, 'seed');
    const edited = `${study.artifactText}\n# an edit\n`;
    const version = await putVersion(db, edited, 'approved', seeded.id, null);
    await setRegistryVersion(db, version.id, 'test');
    const seen: string[] = [];
    const executor: Executor = {
      id: 'spy',
      deterministic: true,
      execute: async (request) => (seen.push(request.artifact), { ok: true, output: DIRECT }),
    };
    const runtime = await createRuntime({ study, db, executor, recordSignals: false });
    const active = await runtime.build('goal');
    expect(active.artifactVersionId).toBe(version.id);
    const override = await withArtifactOverride('override text', () => runtime.build('goal'));
    expect(override.artifactVersionId).toBeNull();
    expect(override.artifactVersion).toBe(contentHash('override text'));
    expect(seen).toEqual([edited, 'override text']);
  });
});

describe('kloop build', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kloop-build-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the intent, assembly, gates and SQL as JSON, offline', async () => {
    const { cpSync } = await import('node:fs');
    for (const name of ['kloop.yaml', 'playbook.yaml', 'program.md', 'corpus'])
      cpSync(path.join(EXAMPLE_STUDY, name), path.join(dir, name), { recursive: true });
    const { code, stdout } = await kloop(
      'build',
      dir,
      'A physio clinic wants patients to book sessions with therapists and pay invoices.',
      '--json',
    );
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as Record<string, unknown> & {
      intent: Intent;
      assembly: Record<string, unknown>;
      gates: Array<Record<string, unknown>>;
      sql: string;
    };
    expect(json.intent.appType).toBe('booking');
    expect(Object.keys(json.assembly).sort()).toEqual(['confidence', 'method', 'patterns', 'uncovered']);
    expect(
      json.gates.every(
        (gate) => typeof gate.name === 'string' && typeof gate.passed === 'boolean' && typeof gate.message === 'string',
      ),
    ).toBe(true);
    expect(json.sql).toMatch(/CREATE TABLE/);

    const text = await kloop('build', dir, 'A salon where clients book a stylist.');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^intent: booking/m);
    expect(text.stdout).toMatch(/^assembly: (direct|decomposed|partial), confidence/m);
    expect(text.stdout).toMatch(/^gates: \d+ passed, \d+ failed/m);
    expect(text.stdout).toMatch(/-- SQL\nCREATE TABLE/);
  });
});
