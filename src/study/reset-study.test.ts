/**
 * `resetNotebook` with the corpus history kept: the rounds a shadow member has
 * served survive the reset (graduation by rounds must not start over).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { readCorpusMembersFile } from '../corpus/lifecycle-file.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { readCorpusHistoryRows, resetNotebook } from './reset-study.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const AT = '2026-12-01T10:00:00.000Z';

function member(id: string, partition: string): Record<string, unknown> {
  return {
    example_id: id,
    origin: 'file',
    source: 'corpus.yaml',
    example: null,
    partition,
    shadow_exposures: 0,
    shadow_since: partition === 'shadow' ? AT : null,
    admitted_at: AT,
    updated_at: AT,
  };
}

/** A notebook whose shadow members entered shadow before any experiment, and whose experiments reached round `rounds`. */
async function notebookWithRounds(studyDir: string, rounds: number): Promise<void> {
  mkdirSync(path.join(studyDir, '.kloop'), { recursive: true });
  const db = await openDatabase(studyDatabasePath(studyDir));
  try {
    await sql`pragma foreign_keys = off`.execute(db);
    for (const [id, partition] of [
      ['s1', 'shadow'],
      ['s2', 'shadow'],
      ['o1', 'optimization'],
    ] as const) {
      await db
        .insertInto('corpus_members')
        .values(member(id, partition) as never)
        .execute();
      await db
        .insertInto('corpus_events')
        .values({
          example_id: id,
          kind: 'placed',
          from_partition: null,
          to_partition: partition,
          reason: 'from the file',
          experiment_id: null,
          details: '{}',
          created_at: AT,
        })
        .execute();
    }
    for (let round = 1; round <= rounds; round += 1) {
      await db
        .insertInto('experiments')
        .values({
          run_id: 1,
          round,
          proposer: 'test',
          base_version_id: 1,
          candidate_hash: `h${round}`,
          delta: '{}',
          rationale: '',
          decision: 'refused',
          reason: 'not_significant',
          evidence: '{}',
          accepted_version_id: null,
          fingerprint: 'f',
          seed: 1,
          created_at: AT,
          change: null,
        })
        .execute();
    }
  } finally {
    await db.destroy();
  }
}

describe('resetNotebook with the corpus history kept', () => {
  it("carries the rounds each shadow member has served, and counts the new notebook's rounds on top", async () => {
    const studyDir = mkdtempSync(path.join(tmpdir(), 'kloop-reset-'));
    folders.push(studyDir);
    await notebookWithRounds(studyDir, 6);
    let db = await openDatabase(studyDatabasePath(studyDir));
    const before = await readCorpusMembers(openNotebook(db));
    const keep = await readCorpusHistoryRows(db);
    await db.destroy();
    expect(before.find((entry) => entry.exampleId === 's1')?.shadowRounds).toBe(6);
    expect(keep.shadowRounds).toEqual({ s1: 6, s2: 6 });

    await resetNotebook(studyDir, keep, '2026-12-01T11:00:00.000Z');
    db = await openDatabase(studyDatabasePath(studyDir));
    try {
      const after = await readCorpusMembers(openNotebook(db));
      expect(
        after.filter((entry) => entry.partition === 'shadow').map((entry) => [entry.exampleId, entry.shadowRounds]),
      ).toEqual([
        ['s1', 6],
        ['s2', 6],
      ]);
      // Two more rounds in the new notebook; s2 re-enters shadow in round 2 and starts over.
      await sql`pragma foreign_keys = off`.execute(db);
      for (const round of [1, 2]) {
        const row = await db
          .insertInto('experiments')
          .values({
            run_id: 1,
            round,
            proposer: 'test',
            base_version_id: 1,
            candidate_hash: `n${round}`,
            delta: '{}',
            rationale: '',
            decision: 'refused',
            reason: 'not_significant',
            evidence: '{}',
            accepted_version_id: null,
            fingerprint: 'f',
            seed: 1,
            created_at: AT,
            change: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (round === 2) {
          await db
            .insertInto('corpus_events')
            .values({
              example_id: 's2',
              kind: 'rotated',
              from_partition: 'optimization',
              to_partition: 'shadow',
              reason: 'rotation',
              experiment_id: row.id,
              details: '{}',
              created_at: AT,
            })
            .execute();
        }
      }
    } finally {
      await db.destroy();
    }
    const file = studyDatabasePath(studyDir);
    const rounds = Object.fromEntries(
      readCorpusMembersFile(file)
        .filter((entry) => entry.partition === 'shadow')
        .map((entry) => [entry.exampleId, entry.shadowRounds]),
    );
    expect(rounds).toEqual({ s1: 8, s2: 0 });
  });
});
