/**
 * `kloop migrate-storage`: a SQLite notebook (the fixture of schema 0006,
 * migrated to the latest on the way, every table with rows) copied into an
 * empty PostgreSQL schema holds the same rows with the same ids, and new rows
 * continue the numbering; a schema that already holds a notebook is refused.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestSchema, postgresAvailable } from '../test-support/postgres.ts';
import type { TestSchema } from '../test-support/postgres.ts';
import { openDatabase } from './database.ts';
import { listTables } from './study-database.ts';
import { putVersion } from './registry.ts';

const postgres = await postgresAvailable();
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../cli/main.ts');
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    return { code: await main(['node', 'kloop', ...args]), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = undefined;
  }
}

/** Every row of a table, by its columns in name order, sorted. */
async function rowsOf(db: Awaited<ReturnType<typeof openDatabase>>, table: string): Promise<string[]> {
  const rows = (await sql<Record<string, unknown>>`select * from ${sql.id(table)}`.execute(db)).rows;
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .sort()
          .map((key) => [key, row[key]]),
      ),
    )
    .sort();
}

describe.runIf(postgres)('kloop migrate-storage', () => {
  it('copies every row with its id into an empty PostgreSQL schema; new rows continue the numbering; a second copy is refused', async () => {
    const study = mkdtempSync(path.join(tmpdir(), 'kloop-migrate-storage-'));
    cleanups.push(() => rmSync(study, { recursive: true, force: true }));
    mkdirSync(path.join(study, '.kloop'));
    const file = path.join(study, '.kloop', 'kloop.db');
    copyFileSync(path.join(import.meta.dirname, 'fixtures', 'schema-0006.sqlite'), file);
    const schema: TestSchema = await createTestSchema();
    cleanups.push(() => schema.drop());

    const moved = await cli('migrate-storage', study, '--to', schema.url, '--json');
    expect(moved.code, moved.stderr).toBe(0);
    const report = JSON.parse(moved.stdout) as { rows: number; tables: Record<string, number> };
    expect(report.tables).toMatchObject({
      artifact_versions: 2,
      registry: 2,
      registry_events: 3,
      experiments: 2,
      example_results: 1,
      corpus_members: 2,
      corpus_events: 2,
      review_items: 1,
      proposals: 1,
    });
    expect(report.tables).not.toHaveProperty('leases');

    const source = await openDatabase(file, { readonly: true });
    const target = await openDatabase(schema.url);
    cleanups.push(
      () => source.destroy(),
      () => target.destroy(),
    );
    const tables = [...(await listTables(source))]
      .filter((name) => !['kysely_migration', 'kysely_migration_lock', 'leases'].includes(name))
      .sort();
    expect(tables).toHaveLength(24);
    for (const table of tables)
      expect({ table, rows: await rowsOf(target, table) }).toEqual({ table, rows: await rowsOf(source, table) });
    expect(report.rows).toBe(Object.values(report.tables).reduce((sum, count) => sum + count, 0));

    // The ids go on after the copied ones.
    expect((await putVersion(target, 'a third version', 'approved', 2, null)).id).toBe(3);
    expect(
      (
        await target
          .insertInto('registry_events')
          .values({ name: 'active', version_id: 3, reason: 'r', actor: 'me', created_at: 't' })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    ).toBe(4);

    const again = await cli('migrate-storage', study, '--to', schema.url, '--json');
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout)).toMatchObject({
      error: {
        field: '--to',
        message: expect.stringMatching(/already holds a notebook \(table artifact_versions has rows\)/),
      },
    });
  });
});
