/**
 * The storage contract: one suite, run on every backend (SQLite, and
 * PostgreSQL when a server answers: src/test-support/postgres.ts), that each
 * must pass — the model is Optuna's storage tests, parametrised over its
 * storages. Each test gets a fresh database (a temporary SQLite file, or a
 * fresh PostgreSQL schema dropped after the file).
 *
 * What it holds the backends to: the migrations (all applied once, none
 * twice), generated ids and `insert … returning`, upserts, exact real
 * numbers, aggregates as numbers, byte-order text, read-only opens, the
 * one-writer lease under contention (taken once, taken over once, busy as
 * exit 3), the heartbeat thread. A whole study leaving the same notebook on
 * both (with workers, a killed worker and a restarted run on PostgreSQL) is
 * tests/evaluation-workers.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Example } from '../corpus/example.ts';
import { createEvaluator } from '../evaluator/evaluator.ts';
import type { Executor } from '../executors/executor.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import { createTestSchema, postgresAvailable } from '../test-support/postgres.ts';
import type { TestSchema } from '../test-support/postgres.ts';
import type { OpenDatabaseOptions } from './database.ts';
import type { StudyDatabase } from './study-database.ts';
import { databaseExists, openDatabase } from './database.ts';
import { backendOf, listTables } from './study-database.ts';
import { isDatabaseBusy } from './busy.ts';
import {
  STUDY_BUSY_EXIT_CODE,
  StudyBusyError,
  acquireLease,
  readLease,
  releaseLease,
  releaseLeaseSync,
  renewLease,
  startLeaseHeartbeat,
  tryAcquireLease,
} from './lease.ts';
import { MIGRATIONS } from './migrations.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from './registry.ts';
import { notebookVersion } from '../view/view-server.ts';
import { openNotebook } from './notebook/index.ts';

const postgres = await postgresAvailable();
const schemas: TestSchema[] = [];
const folders: string[] = [];
const handles: StudyDatabase[] = [];

afterAll(async () => {
  for (const db of handles.splice(0)) await db.destroy().catch(() => undefined);
  for (const schema of schemas.splice(0)) await schema.drop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function temporaryFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-storage-contract-'));
  folders.push(folder);
  return folder;
}

interface Backend {
  name: 'sqlite' | 'postgres';
  /**
   * A location with an empty notebook (every table empty, ids from 1) or,
   * with `unmigrated`, with no notebook at all. On PostgreSQL one schema of
   * this file is migrated once and emptied for each test (TRUNCATE … RESTART
   * IDENTITY): a migration there costs more than a test.
   */
  fresh(options?: { unmigrated?: boolean }): Promise<string>;
}

let shared: Promise<string> | undefined;

async function newSchema(): Promise<string> {
  const schema = await createTestSchema();
  schemas.push(schema);
  return schema.url;
}

/** The file's migrated PostgreSQL schema, emptied. */
async function emptiedPostgres(): Promise<string> {
  shared ??= newSchema().then(async (url) => (await openDatabase(url)).destroy().then(() => url));
  const url = await shared;
  const db = await openDatabase(url);
  try {
    const tables = [...(await listTables(db))].filter((name) => !name.startsWith('kysely_'));
    await sql`truncate table ${sql.join(tables.map((name) => sql.id(name)))} restart identity cascade`.execute(db);
  } finally {
    await db.destroy();
  }
  return url;
}

const BACKENDS: Backend[] = [
  { name: 'sqlite', fresh: async () => path.join(temporaryFolder(), 'kloop.db') },
  ...(postgres
    ? [
        {
          name: 'postgres' as const,
          fresh: (options?: { unmigrated?: boolean }) =>
            options?.unmigrated === true ? newSchema() : emptiedPostgres(),
        },
      ]
    : []),
];

async function open(location: string, options?: OpenDatabaseOptions): Promise<StudyDatabase> {
  const db = await openDatabase(location, options);
  handles.push(db);
  return db;
}

const TABLES = [
  'artifact_versions',
  'calibrations',
  'corpus_events',
  'corpus_members',
  'evaluation_examples',
  'evaluations',
  'example_results',
  'experiments',
  'exposures',
  'kysely_migration',
  'kysely_migration_lock',
  'leases',
  'loop_a_decisions',
  'loop_a_runs',
  'online_experiments',
  'online_looks',
  'outcome_refusals',
  'outcomes',
  'proposals',
  'registry',
  'registry_events',
  'response_cache',
  'review_items',
  'runs',
  'schedule_runs',
  'signals',
  'study_state',
];

function result(exampleId: string, composite: number | null, repeat = 0) {
  return {
    fingerprint: 'f',
    artifact_hash: 'a',
    example_id: exampleId,
    repeat,
    valid: composite === null ? 0 : 1,
    composite,
    score: JSON.stringify({ exampleId, composite }),
    usage: '{"inputTokens":0,"outputTokens":0,"costUsd":0}',
    latency_ms: 1.5,
    created_at: '2025-01-01T00:00:00.000Z',
  };
}

describe.each(BACKENDS)('the storage contract on $name', (backend) => {
  it('a fresh open applies every migration once; the next open applies none', async () => {
    const location = await backend.fresh({ unmigrated: true });
    expect(await databaseExists(location)).toBe(false);
    const db = await open(location);
    expect(backendOf(db)).toBe(backend.name);
    expect([...(await listTables(db))].sort()).toEqual(TABLES);
    const applied = await db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .orderBy('name' as never)
      .execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual(Object.keys(MIGRATIONS));
    await db.destroy();
    handles.splice(handles.indexOf(db), 1);
    expect(await databaseExists(location)).toBe(true);
    const again = await open(location);
    expect(
      await again
        .selectFrom('kysely_migration' as never)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: Object.keys(MIGRATIONS).length });
  });

  it('generated ids start at 1 and come back from insert … returning; a version is stored once by content', async () => {
    const db = await open(await backend.fresh());
    const seed = await putVersion(db, 'seed text', 'seed', null, null);
    const next = await putVersion(db, 'next text', 'accepted', seed.id, 1);
    expect([seed.id, next.id]).toEqual([1, 2]);
    expect(await putVersion(db, 'seed text', 'seed', null, null)).toEqual(seed);
    expect(next).toMatchObject({ parentId: 1, experimentId: 1, source: 'accepted', text: 'next text' });
  });

  it('an upsert moves the registry pointer in place; its events are appended', async () => {
    const db = await open(await backend.fresh());
    const first = await putVersion(db, 'one', 'seed', null, null);
    const second = await putVersion(db, 'two', 'accepted', first.id, null);
    await setRegistryVersion(db, first.id, 'seed');
    await setRegistryVersion(db, second.id, 'experiment 1 accepted');
    expect((await getRegistryVersion(db))?.id).toBe(second.id);
    expect(await db.selectFrom('registry').select(['name', 'version_id']).execute()).toEqual([
      { name: 'active', version_id: second.id },
    ]);
    expect(
      await db.selectFrom('registry_events').select(['id', 'version_id', 'reason']).orderBy('id').execute(),
    ).toEqual([
      { id: 1, version_id: first.id, reason: 'seed' },
      { id: 2, version_id: second.id, reason: 'experiment 1 accepted' },
    ]);
  });

  it('real numbers come back bit for bit, a null composite stays null, and count, sum and avg are numbers', async () => {
    const db = await open(await backend.fresh());
    const values = [0.1 + 0.2, 1 / 3, 5e-324, 123456.789012345, -0];
    await db
      .insertInto('example_results')
      .values([...values.map((value, index) => result(`e${index}`, value)), result('invalid', null)])
      .execute();
    const rows = await db
      .selectFrom('example_results')
      .select(['example_id', 'composite', 'latency_ms'])
      .orderBy('example_id')
      .execute();
    expect(rows.map((row) => row.composite)).toEqual([0.1 + 0.2, 1 / 3, 5e-324, 123456.789012345, 0, null]);
    expect(rows.every((row) => row.latency_ms === 1.5)).toBe(true);
    const aggregates = await sql<{
      n: unknown;
      valid: unknown;
      mean: unknown;
    }>`select count(*) as n, sum(valid) as valid, avg(valid) as mean from example_results`.execute(db);
    expect(aggregates.rows[0]).toEqual({ n: 6, valid: 5, mean: 5 / 6 });
  });

  it('a result is stored once: a second insert of the same key does nothing, and the evaluator never executes a stored one again', async () => {
    const db = await open(await backend.fresh());
    await db.insertInto('example_results').values(result('e1', 0.5)).execute();
    await db
      .insertInto('example_results')
      .values(result('e1', 0.9))
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    expect(await db.selectFrom('example_results').select('composite').execute()).toEqual([{ composite: 0.5 }]);
    const examples: Example[] = ['a', 'b', 'c'].map((id) => ({
      id,
      input: `a ${id} app`,
      text: `a ${id} app`,
      expected: { appType: 'crm', entities: [], roles: [], behaviors: [] },
      tags: [],
      partition: 'optimization',
    }));
    const calls: string[] = [];
    const evaluator = createEvaluator({
      task: intentTask,
      corpus: examples,
      results: openNotebook(db),
      executor: {
        id: 'fixed@1',
        deterministic: true,
        execute: async (request) => (
          calls.push(request.exampleId ?? ''),
          { ok: true, output: { appType: 'crm', entities: [], roles: [], behaviors: [], relations: [], views: [] } }
        ),
      },
    });
    const first = await evaluator.evaluate({ artifactText: 'x', partition: 'optimization', examples, repeats: 2 });
    const second = await evaluator.evaluate({ artifactText: 'x', partition: 'optimization', examples, repeats: 2 });
    expect(calls.sort()).toEqual(['a', 'a', 'b', 'b', 'c', 'c']);
    expect(second.runComposites).toEqual(first.runComposites);
    expect(
      await db
        .selectFrom('example_results')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('fingerprint', '=', evaluator.fingerprint)
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: 6 });
  });

  it('a re-measurement (--no-cache: readSince, or fresh) replaces the result stored before it, and a later plain read sees the new one', async () => {
    const db = await open(await backend.fresh());
    const examples: Example[] = ['a', 'b'].map((id) => ({
      id,
      input: `a ${id} app`,
      text: `a ${id} app`,
      expected: { appType: 'crm', entities: [], roles: [], behaviors: [] },
      tags: [],
      partition: 'optimization',
    }));
    let appType = 'booking';
    const calls: string[] = [];
    const executor: Executor = {
      id: 'switching@1',
      deterministic: true,
      execute: async (request) => (
        calls.push(request.exampleId ?? ''),
        { ok: true, output: { appType, entities: [], relations: [], behaviors: [], projections: [] } }
      ),
    };
    let clock = Date.parse('2026-12-07T10:00:00.000Z');
    const now = (): Date => new Date((clock += 1000));
    const evaluatorWith = (readSince?: string) =>
      createEvaluator({
        task: intentTask,
        corpus: examples,
        results: openNotebook(db),
        executor,
        now,
        ...(readSince !== undefined ? { readSince } : {}),
      });
    const request = { artifactText: 'x', partition: 'optimization', examples };
    const wrong = await evaluatorWith().evaluate(request);
    appType = 'crm';
    const readSince = now().toISOString();
    const remeasured = await evaluatorWith(readSince).evaluate(request);
    expect([wrong.composite, remeasured.composite]).toEqual([0, 1]);
    const plain = await evaluatorWith().evaluate(request);
    expect(plain.composite).toBe(remeasured.composite);
    expect(calls).toEqual(['a', 'b', 'a', 'b']);
    appType = 'booking';
    const fresh = await evaluatorWith().evaluate({ ...request, fresh: true });
    expect(fresh.composite).toBe(wrong.composite);
    expect((await evaluatorWith().evaluate(request)).composite).toBe(wrong.composite);
    expect(calls).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(
      await db
        .selectFrom('example_results')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: 2 });
  });

  it("the viewer's change fingerprint (kloop view's live updates) reads on this backend and moves with every stored result", async () => {
    const db = await open(await backend.fresh());
    const before = await notebookVersion(db);
    expect(Object.keys(JSON.parse(before) as object)).toEqual(expect.arrayContaining(['e', 'r', 'x', 'u']));
    await db.insertInto('example_results').values(result('e1', 0.5)).execute();
    const after = await notebookVersion(db);
    expect(after).not.toBe(before);
    await db.insertInto('example_results').values(result('e2', 0.5)).execute();
    expect(await notebookVersion(db)).not.toBe(after);
  });

  it("text sorts by its bytes (as SQLite compares), whatever the server's locale", async () => {
    const db = await open(await backend.fresh());
    const keys = ['b', 'B', 'a', 'É', '_', 'Z', 'a-2', 'a10', 'a2'];
    await db
      .insertInto('study_state')
      .values(keys.map((key) => ({ key, value: key })))
      .execute();
    const sorted = (await db.selectFrom('study_state').select('key').orderBy('key').execute()).map((row) => row.key);
    expect(sorted).toEqual(['B', 'Z', '_', 'a', 'a-2', 'a10', 'a2', 'b', 'É']);
  });

  it('a read-only open reads the notebook and refuses to write it', async () => {
    const location = await backend.fresh();
    const writer = await open(location);
    await putVersion(writer, 'seed', 'seed', null, null);
    const reader = await open(location, { readonly: true });
    expect((await reader.selectFrom('artifact_versions').select('text').execute()).map((row) => row.text)).toEqual([
      'seed',
    ]);
    await expect(reader.insertInto('study_state').values({ key: 'k', value: 'v' }).execute()).rejects.toThrow(
      /read-only|readonly/i,
    );
  });

  it('one writer: of two processes taking a free lease at once, exactly one gets it and the other is told who holds it (exit 3)', async () => {
    const location = await backend.fresh();
    // A short busy timeout: in one process, a SQLite connection waiting for the write lock blocks the thread the holder needs to commit.
    const [left, right] = [await open(location, { busyTimeoutMs: 100 }), await open(location, { busyTimeoutMs: 100 })];
    const options = (db: StudyDatabase, id: string) =>
      tryAcquireLease(db, { studyKey: '/machine-a/study', hostname: 'h', pid: process.pid, ownerId: id });
    const outcomes = await Promise.all([options(left, 'h:1:left'), options(right, 'h:1:right')]);
    expect(outcomes.filter((outcome) => outcome.acquired)).toHaveLength(1);
    const winner = outcomes.find((outcome) => outcome.acquired)!;
    const loser = outcomes.find((outcome) => !outcome.acquired)!;
    expect(loser).toMatchObject({ acquired: false, holder: { ownerId: winner.acquired ? winner.lease.ownerId : '' } });
    const refusal = await acquireLease(right, {
      studyKey: '/machine-a/study',
      hostname: 'h',
      pid: process.pid,
      ownerId: 'h:1:third',
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(StudyBusyError);
    expect((refusal as StudyBusyError).exitCode).toBe(STUDY_BUSY_EXIT_CODE);
  });

  it('a stale lease is taken over by exactly one of two contenders; the old owner can neither renew nor release it', async () => {
    const location = await backend.fresh();
    const [left, right] = [await open(location, { busyTimeoutMs: 100 }), await open(location, { busyTimeoutMs: 100 })];
    const old = await tryAcquireLease(left, {
      studyKey: '/s',
      hostname: 'gone-host',
      pid: 1,
      ownerId: 'gone-host:1:old',
      now: () => new Date('2025-01-01T00:00:00Z'),
    });
    expect(old.acquired).toBe(true);
    const contend = (db: StudyDatabase, id: string) =>
      tryAcquireLease(db, { studyKey: '/s', hostname: 'h', pid: process.pid, ownerId: id });
    const outcomes = await Promise.all([contend(left, 'h:2:left'), contend(right, 'h:2:right')]);
    const took = outcomes.filter((outcome) => outcome.acquired);
    expect(took).toHaveLength(1);
    expect(took[0]).toMatchObject({ tookOverFrom: { ownerId: 'gone-host:1:old' } });
    const oldLease = old.acquired ? old.lease : undefined;
    expect(await renewLease(left, oldLease!)).toBe(false);
    await releaseLease(left, oldLease!);
    expect((await readLease(right, '/s'))?.ownerId).toBe(took[0]!.acquired ? took[0]!.lease.ownerId : '');
  });

  it('while another connection holds a write transaction, a write waits up to the busy timeout and then reports busy, never a raw error', async () => {
    const location = await backend.fresh();
    const holder = await open(location);
    const waiter = await open(location, { busyTimeoutMs: 200 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const writing = holder.transaction().execute(async (transaction) => {
      await transaction.insertInto('study_state').values({ key: 'holder', value: '1' }).execute();
      entered();
      await held;
    });
    await inside;
    const failure = await waiter
      .transaction()
      .execute((transaction) => transaction.insertInto('study_state').values({ key: 'waiter', value: '1' }).execute())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isDatabaseBusy(failure)).toBe(true);
    const attempt = await tryAcquireLease(waiter, { studyKey: '/s', retry: { attempts: 2, backoffMs: 1 } });
    expect(attempt).toMatchObject({ acquired: false, holder: undefined });
    release();
    await writing;
    expect((await tryAcquireLease(waiter, { studyKey: '/s' })).acquired).toBe(true);
  });

  it('the heartbeat renews the lease from its own connection; a synchronous release from an exiting process frees it', async () => {
    const location = await backend.fresh();
    const db = await open(location);
    const lease = await acquireLease(db, { studyKey: '/s', now: () => new Date('2025-01-01T00:00:00Z') });
    const heartbeat = startLeaseHeartbeat(db, lease, { file: location, intervalMs: 50 });
    try {
      await vi.waitFor(
        async () => expect((await readLease(db, '/s'))?.heartbeatAt).not.toBe('2025-01-01T00:00:00.000Z'),
        { timeout: 20_000, interval: 50 },
      );
    } finally {
      await heartbeat.stop();
    }
    releaseLeaseSync(location, lease);
    expect(await readLease(db, '/s')).toBeUndefined();
  });
});
