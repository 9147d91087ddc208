/**
 * The committed notebooks of every older schema version
 * (src/storage/fixtures/schema-000N.sqlite, written by
 * scripts/make-schema-fixtures.ts) are opened by today's code: each is
 * migrated to the latest version, and what it held is still read the same.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { listRegistryEvents } from './activation.ts';
import { openDatabase } from './database.ts';
import { listLeases } from './lease.ts';
import { MIGRATIONS } from './migrations.ts';
import { getRegistryVersion, listVersions } from './registry.ts';
import { openNotebook } from './notebook/index.ts';

const FOLDER = path.resolve(import.meta.dirname, 'fixtures');
const FIXTURES = readdirSync(FOLDER)
  .filter((name) => /^schema-\d{4}\.sqlite$/.test(name))
  .sort();
const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

describe('notebooks of older schema versions', () => {
  it('there is one fixture per schema version before the latest', () => {
    const names = Object.keys(MIGRATIONS);
    expect(FIXTURES).toEqual(names.slice(0, -1).map((name) => `schema-${name.slice(0, 4)}.sqlite`));
  });

  it.each(FIXTURES)('%s is migrated to the latest version and still reads the same', async (fixture) => {
    const version = Number(fixture.slice('schema-'.length, 'schema-'.length + 4));
    const folder = mkdtempSync(path.join(tmpdir(), 'kloop-schema-fixture-'));
    folders.push(folder);
    const file = path.join(folder, 'kloop.db');
    copyFileSync(path.join(FOLDER, fixture), file);
    const db = await openDatabase(file);
    try {
      const applied = await db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .orderBy('name' as never)
        .execute();
      expect(applied.map((row) => (row as { name: string }).name)).toEqual(Object.keys(MIGRATIONS));

      expect((await listVersions(db)).map((entry) => [entry.id, entry.hash, entry.source, entry.parentId])).toEqual([
        [1, 'h-seed', 'seed', null],
        [2, 'h-two', 'accepted', 1],
      ]);
      expect((await getRegistryVersion(db))?.id).toBe(2);
      // 0007 added who moved the pointer: null for the moves made before it.
      expect((await listRegistryEvents(db)).map((event) => [event.versionId, event.reason, event.actor])).toEqual([
        [1, 'seed', null],
        [2, 'experiment 1 accepted', null],
      ]);

      const experiments = await db
        .selectFrom('experiments')
        .select(['id', 'decision', 'reason', 'change', 'evidence'])
        .orderBy('id')
        .execute();
      expect(experiments).toEqual([
        {
          id: 1,
          decision: 'accepted',
          reason: 'accepted',
          change: version >= 6 ? '+ more: 1' : null,
          evidence: '{"optimization":{"delta":0.125}}',
        },
        {
          id: 2,
          decision: 'refused',
          reason: 'not_significant',
          change: null,
          evidence: '{"optimization":{"delta":0.03125,"p":0.4}}',
        },
      ]);

      // 0006 copied the per-partition results into per-example rows (zero usage: tokens were counted per partition).
      const results = await db
        .selectFrom('example_results')
        .select(['artifact_hash', 'example_id', 'repeat', 'valid', 'composite', 'usage'])
        .orderBy('artifact_hash')
        .orderBy('example_id')
        .execute();
      const zero = '{"inputTokens":0,"outputTokens":0,"costUsd":0}';
      expect(results).toEqual(
        [
          ...(version >= 6
            ? [
                {
                  artifact_hash: 'h-two',
                  example_id: 'ex-a',
                  repeat: 0,
                  valid: 1,
                  composite: 1,
                  usage: '{"inputTokens":3,"outputTokens":2,"costUsd":0}',
                },
              ]
            : []),
          ...(version >= 6
            ? []
            : [
                { artifact_hash: 'h-seed', example_id: 'ex-a', repeat: 0, valid: 1, composite: 0.75, usage: zero },
                { artifact_hash: 'h-seed', example_id: 'ex-b', repeat: 0, valid: 1, composite: 0.25, usage: zero },
              ]),
        ].sort((left, right) =>
          `${left.artifact_hash}${left.example_id}`.localeCompare(`${right.artifact_hash}${right.example_id}`),
        ),
      );

      expect(await db.selectFrom('calibrations').select(['noise_sd', 'cohens_d', 'valid']).execute()).toEqual([
        { noise_sd: 0.0125, cohens_d: 1.5, valid: 1 },
      ]);
      expect((await listLeases(db)).map((lease) => lease.ownerId)).toEqual(version >= 2 ? ['old-host:4242:ab'] : []);
      const members = await readCorpusMembers(openNotebook(db));
      expect(members.map((member) => [member.exampleId, member.partition, member.shadowExposures])).toEqual(
        version >= 3
          ? [
              ['ex-a', 'optimization', 0],
              ['ex-s', 'shadow', 2],
            ]
          : [],
      );
      expect(await db.selectFrom('review_items').select('status').execute()).toEqual(
        version >= 4 ? [{ status: 'pending' }] : [],
      );
      expect(await db.selectFrom('signals').select('confidence').execute()).toEqual(
        version >= 4 ? [{ confidence: 0.875 }] : [],
      );
      expect(await db.selectFrom('schedule_runs').select('loop').execute()).toEqual(
        version >= 5 ? [{ loop: 'B' }] : [],
      );
      expect(await db.selectFrom('proposals').select('outcome').execute()).toEqual(
        version >= 6 ? [{ outcome: 'candidates' }] : [],
      );
    } finally {
      await db.destroy();
    }
  });
});
