/**
 * Peer fault 7 (graphile-worker #496): workers started together on a fresh
 * PostgreSQL schema raced its creation. Kysely's migrator commits its
 * `kysely_migration` table before the migrations' own transaction; a second
 * process took that table for a notebook, read `corpus_members` and died with
 * `relation "corpus_members" does not exist` and a stack trace.
 *
 * Deterministic, without timing: the test holds the study's writer lock, so
 * the first worker stops inside its migration (the migration table created,
 * the study's tables not yet), then starts the second worker. Now schema
 * creation and migration run under the schema's advisory migration lock
 * (src/storage/postgres.ts `withSchemaLock`): the second worker waits for
 * the first, and both serve.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writerLockKeys } from '../../src/storage/postgres.ts';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, makeSmallStudy, observer, runCleanups, start, stderrOf } from './pg-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

describe.runIf(postgres)('peer fault 7: workers started together on a fresh schema', () => {
  it("the second worker waits for the first one's migration instead of reading a half-created schema", async () => {
    const study = makeSmallStudy(cleanups);
    const schema = await freshSchema(cleanups);
    const holder = await observer(cleanups);
    const [high, low] = writerLockKeys(schema.schema);
    await holder.query('select pg_advisory_lock($1, $2)', [high, low]);

    const first = start(cleanups, ['worker', study, '--db', schema.url, '--concurrency', '1']);
    const firstErr = stderrOf(first.child);
    // The first worker is inside its migration: the migration table exists, the study's tables do not.
    await vi.waitFor(
      async () => {
        const rows = await holder.query<{ name: string }>(
          'select table_name as name from information_schema.tables where table_schema = $1',
          [schema.schema],
        );
        expect(rows.rows.map((row) => row.name)).toContain('kysely_migration');
        const waiting = await holder.query<{ n: string }>(
          "select count(*) as n from pg_locks where locktype = 'advisory' and not granted and objid = $1::oid",
          [low >>> 0],
        );
        expect(Number(waiting.rows[0]!.n)).toBe(1);
      },
      { timeout: 180_000, interval: 50 },
    );
    const second = start(cleanups, ['worker', study, '--db', schema.url, '--concurrency', '1']);
    const secondErr = stderrOf(second.child);
    // The second one either fails at once (the fault) or waits on a lock of its own.
    await Promise.race([
      second.result,
      vi.waitFor(
        async () => {
          const waiting = await holder.query<{ n: string }>(
            "select count(*) as n from pg_locks where locktype = 'advisory' and not granted",
          );
          expect(Number(waiting.rows[0]!.n)).toBeGreaterThanOrEqual(2);
        },
        { timeout: 180_000, interval: 50 },
      ),
    ]);
    await holder.query('select pg_advisory_unlock($1, $2)', [high, low]);

    await vi.waitFor(() => expect(firstErr()).toMatch(/serving evaluator/), { timeout: 180_000, interval: 100 });
    await vi.waitFor(() => expect(secondErr(), secondErr()).toMatch(/serving evaluator/), {
      timeout: 180_000,
      interval: 100,
    });
    expect(secondErr()).not.toMatch(/does not exist|unexpected failure/);
    for (const worker of [first, second]) worker.child.kill('SIGTERM');
    const ends = await Promise.all([first.result, second.result]);
    expect(ends.map((end) => end.code)).toEqual([130, 130]);
  }, 300_000);
});
