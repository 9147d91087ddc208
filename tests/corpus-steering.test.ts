/**
 * A human steers the corpus, on the record (issue 19, item 3): `kloop corpus
 * promote` moves examples with a `promoted` event naming who, the files'
 * labels do not undo it, promoting again reverses it; `kloop reset` starts a
 * study afresh after a confirmation, keeps the previous notebook as a backup,
 * and with `--keep-corpus-history` carries the corpus lifecycle over.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { kloop, makeSmallStudy } from './small-intent-study.ts';

let study: ReturnType<typeof makeSmallStudy>;
const idsOf = (partition: 'optimization' | 'anchor' | 'shadow'): string[] =>
  study.examples.filter((example) => example.partition === partition).map((example) => example.id);

async function promotions(): Promise<
  Array<{ example_id: string | null; from_partition: string | null; to_partition: string | null; details: string }>
> {
  const db = await openDatabase(studyDatabasePath(study.dir), { readonly: true });
  try {
    return await db
      .selectFrom('corpus_events')
      .select(['example_id', 'from_partition', 'to_partition', 'details'])
      .where('kind', '=', 'promoted')
      .orderBy('id')
      .execute();
  } finally {
    await db.destroy();
  }
}

beforeAll(async () => {
  study = makeSmallStudy({ optimization: 8, anchor: 3, shadow: 7, config: ['stopping: { maxExperiments: 0 }'] });
  expect((await kloop('run', study.dir)).code).toBe(0); // records the lifecycle
});
afterAll(() => study.cleanup());

describe('kloop corpus promote', () => {
  it('moves a shadow example into optimization, recorded with who and why, and a later run keeps it there', async () => {
    const [shadowId] = idsOf('shadow');
    const { code, stdout } = await kloop(
      'corpus',
      'promote',
      study.dir,
      shadowId!,
      '--to',
      'optimization',
      '--by',
      'Ada',
      '--reason',
      'the optimization partition is too small',
    );
    expect(code).toBe(0);
    expect(stdout).toContain(`${shadowId}: shadow → optimization`);
    const [event] = await promotions();
    expect(event).toMatchObject({ example_id: shadowId, from_partition: 'shadow', to_partition: 'optimization' });
    expect(JSON.parse(event!.details)).toMatchObject({ by: 'Ada', reason: 'the optimization partition is too small' });
    expect((await kloop('run', study.dir)).code).toBe(0); // the file still says shadow: the promotion stands
    expect(loadStudy(study.dir).partitions.optimization.map((example) => example.id)).toContain(shadowId);
    const status = JSON.parse((await kloop('corpus', 'status', study.dir, '--json')).stdout) as {
      members: Array<{ id: string; partition: string; promotedBy: string | null }>;
    };
    expect(status.members.find((member) => member.id === shadowId)).toMatchObject({
      partition: 'optimization',
      promotedBy: 'Ada',
    });
  });

  it('is reversed by promoting back, also on the record, with a warning that the proposer has seen it', async () => {
    const [shadowId] = idsOf('shadow');
    const { code, stdout } = await kloop('corpus', 'promote', study.dir, shadowId!, '--to', 'shadow', '--by', 'Ada');
    expect(code).toBe(0);
    expect(stdout).toContain(`WARNING: "${shadowId}" has been in the optimization partition, which the proposer reads`);
    expect((await promotions()).map((event) => [event.from_partition, event.to_partition])).toEqual([
      ['shadow', 'optimization'],
      ['optimization', 'shadow'],
    ]);
    expect(
      loadStudy(study.dir)
        .partitions.shadow.map((example) => example.id)
        .sort(),
    ).toEqual(idsOf('shadow').sort());
  });

  it('makes an optimization example an anchor and a file anchor an optimization example; the files do not undo either', async () => {
    const optimizationId = idsOf('optimization')[0]!;
    const anchorId = idsOf('anchor')[0]!;
    expect((await kloop('corpus', 'promote', study.dir, optimizationId, '--to', 'anchor', '--by', 'Grace')).code).toBe(
      0,
    );
    expect((await kloop('corpus', 'promote', study.dir, anchorId, '--to', 'optimization', '--by', 'Grace')).code).toBe(
      0,
    );
    const run = await kloop('run', study.dir);
    expect(run.code, run.stderr).toBe(0);
    const loaded = loadStudy(study.dir);
    expect(loaded.partitions.anchor.map((example) => example.id)).toContain(optimizationId);
    expect(loaded.partitions.optimization.map((example) => example.id)).toContain(anchorId);
    // and back, as documented
    expect(
      (await kloop('corpus', 'promote', study.dir, optimizationId, '--to', 'optimization', '--by', 'Grace')).code,
    ).toBe(0);
    expect((await kloop('corpus', 'promote', study.dir, anchorId, '--to', 'anchor', '--by', 'Grace')).code).toBe(0);
    const back = loadStudy(study.dir);
    expect(back.partitions.anchor.map((example) => example.id).sort()).toEqual(idsOf('anchor').sort());
  });

  it('refuses an unknown id or partition (exit 2) and moves nothing', async () => {
    const before = (await promotions()).length;
    const unknown = await kloop(
      'corpus',
      'promote',
      study.dir,
      idsOf('shadow')[1]!,
      'no-such-example',
      '--to',
      'optimization',
      '--by',
      'Ada',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('not in this study\'s corpus: "no-such-example"; nothing was moved');
    expect(
      (await kloop('corpus', 'promote', study.dir, idsOf('shadow')[1]!, '--to', 'holdout', '--by', 'Ada')).code,
    ).toBe(2);
    expect(await promotions()).toHaveLength(before);
  });
});

describe('kloop reset', () => {
  it('refuses without a confirmation when it cannot ask (exit 2), and changes nothing', async () => {
    const { code, stderr } = await kloop('reset', study.dir);
    expect(code).toBe(2);
    expect(stderr).toContain('pass --yes to confirm; nothing was changed');
    expect(existsSync(studyDatabasePath(study.dir))).toBe(true);
  });

  it('with --keep-corpus-history: a fresh notebook with the corpus lifecycle as it stood, the old one kept as a backup', async () => {
    const shadowId = idsOf('shadow')[2]!;
    expect((await kloop('corpus', 'promote', study.dir, shadowId, '--to', 'optimization', '--by', 'Ada')).code).toBe(0);
    const { code, stdout } = await kloop('reset', study.dir, '--keep-corpus-history', '--yes', '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      reset: boolean;
      backup: string;
      kept: { members: number; events: number };
      removed: { runs: number };
    };
    expect(report).toMatchObject({ reset: true, kept: { members: 18 }, removed: { runs: 3 } });
    expect(existsSync(path.join(report.backup, 'kloop.db'))).toBe(true);
    const db = await openDatabase(studyDatabasePath(study.dir), { readonly: true });
    try {
      expect(await db.selectFrom('runs').selectAll().execute()).toEqual([]);
      const events = await db.selectFrom('corpus_events').select(['kind', 'experiment_id']).orderBy('id').execute();
      expect(events.at(-1)).toEqual({ kind: 'reset', experiment_id: null });
      expect(events.every((event) => event.experiment_id === null)).toBe(true);
    } finally {
      await db.destroy();
    }
    expect(loadStudy(study.dir).partitions.optimization.map((example) => example.id)).toContain(shadowId);
    expect((await kloop('status', study.dir, '--json')).code).toBe(0);
  });

  it("without it: the next run takes the files' partitions again; moving the backup back undoes the reset", async () => {
    const shadowId = idsOf('shadow')[2]!;
    const { code, stdout } = await kloop('reset', study.dir, '--yes', '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { backup: string; kept: null };
    expect(report.kept).toBeNull();
    expect(existsSync(studyDatabasePath(study.dir))).toBe(false);
    expect(loadStudy(study.dir).partitions.shadow.map((example) => example.id)).toContain(shadowId);
    // Undo: the backup's files back into .kloop/.
    for (const name of readdirSync(report.backup))
      renameSync(path.join(report.backup, name), path.join(study.dir, '.kloop', name));
    rmSync(report.backup, { recursive: true });
    expect(loadStudy(study.dir).partitions.optimization.map((example) => example.id)).toContain(shadowId);
  });
});
