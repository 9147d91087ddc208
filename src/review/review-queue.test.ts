import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from '../storage/registry.ts';
import {
  approveReviewItem,
  enqueueReviewItem,
  getReviewItem,
  listReviewItems,
  rejectReviewItem,
} from './review-queue.ts';
import { readCorpusFile } from '../corpus/importers/public-format.ts';

const PATTERN_YAML = `id: kennel
title: Kennel boarding
description: Pets stay in kennels.
appTypes: [booking]
entities:
  - name: Kennel
    role: resource
    fields:
      - { name: name, type: TEXT, required: true }
  - name: Stay
    role: commitment
    fields:
      - { name: startsAt, type: DATETIME, required: true }
relations:
  - { from: Kennel, to: Stay, cardinality: one_to_many }
`;

const at = (iso: string) => () => new Date(iso);

let db: StudyDatabase;
let dir: string;

beforeEach(async () => {
  db = await openDatabase(':memory:');
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-review-'));
  const seed = await putVersion(db, 'seed text', 'seed', null, null);
  await setRegistryVersion(db, seed.id, 'seed');
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('enqueueReviewItem', () => {
  it('queues a pending item with its evidence, and dedupes by kind and payload', async () => {
    const first = await enqueueReviewItem(
      db,
      {
        kind: 'artifact',
        source: 'loop-a',
        title: 'edit',
        payload: { text: 'new text', delta: '+x' },
        evidence: { delta: 0.1 },
        runId: 4,
      },
      at('2025-03-01T00:00:00Z'),
    );
    expect(first.created).toBe(true);
    expect(first.item).toMatchObject({
      kind: 'artifact',
      source: 'loop-a',
      status: 'pending',
      runId: 4,
      evidence: { delta: 0.1 },
      createdAt: '2025-03-01T00:00:00.000Z',
      decidedBy: null,
    });
    const again = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'same edit, other words',
      payload: { text: 'new text', delta: '+x' },
      evidence: { delta: 0.2 },
    });
    expect(again).toMatchObject({ created: false, item: { id: first.item.id } });
    await enqueueReviewItem(db, {
      kind: 'example',
      source: 'loop-c',
      title: 'an example',
      payload: { example: { id: 'x', goal: 'g' } },
    });
    expect((await listReviewItems(db)).map((item) => item.kind)).toEqual(['artifact', 'example']);
    expect(await listReviewItems(db, { source: 'loop-c' })).toHaveLength(1);
  });

  it('refuses malformed items with InputError', async () => {
    await expect(
      enqueueReviewItem(db, { kind: 'artifact', source: 'loop-a', title: 't', payload: { text: '' } }),
    ).rejects.toBeInstanceOf(InputError);
    await expect(
      enqueueReviewItem(db, {
        kind: 'pattern',
        source: 'loop-c',
        title: 't',
        payload: { name: '../escape', yaml: 'x' },
      }),
    ).rejects.toThrow(/payload.name/);
    await expect(
      enqueueReviewItem(db, {
        kind: 'pattern',
        source: 'loop-x' as 'loop-c',
        title: 't',
        payload: { name: 'a', yaml: 'x' },
      }),
    ).rejects.toThrow(/source/);
  });
});

describe('approve and reject', () => {
  it('approving an artifact item activates it through the registry, recording who and when', async () => {
    const before = await getRegistryVersion(db);
    const { item } = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'edit',
      payload: { text: 'better text', baseVersionId: before!.id },
    });
    const result = await approveReviewItem(db, item.id, {
      by: 'ana',
      note: 'looks right',
      now: at('2025-03-02T10:00:00Z'),
    });
    expect(result.ok).toBe(true);
    const active = await getRegistryVersion(db);
    expect(active?.text).toBe('better text');
    expect(active?.id).not.toBe(before?.id);
    expect(active?.source).toBe('approved');
    const event = await db.selectFrom('registry_events').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(event.reason).toBe(`review item ${item.id} approved by ana`);
    expect(event.version_id).toBe(active?.id);
    expect(await getReviewItem(db, item.id)).toMatchObject({
      status: 'approved',
      decidedBy: 'ana',
      decidedAt: '2025-03-02T10:00:00.000Z',
      note: 'looks right',
      outcome: { versionId: active?.id },
    });
    expect(await listReviewItems(db)).toEqual([]);
  });

  it('rejecting leaves the registry pointer where it was, and a decided item cannot be decided again', async () => {
    const before = await getRegistryVersion(db);
    const { item } = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'edit',
      payload: { text: 'worse text' },
    });
    const rejected = await rejectReviewItem(db, item.id, { by: 'bo', note: 'too broad' });
    expect(rejected).toMatchObject({
      ok: true,
      item: { status: 'rejected', decidedBy: 'bo', note: 'too broad', outcome: null },
    });
    expect((await getRegistryVersion(db))?.id).toBe(before?.id);
    expect(await db.selectFrom('artifact_versions').selectAll().where('text', '=', 'worse text').execute()).toEqual([]);
    const again = await approveReviewItem(db, item.id, { by: 'ana' });
    expect(again).toMatchObject({ ok: false, reason: 'already_decided' });
    expect((await getRegistryVersion(db))?.id).toBe(before?.id);
    expect(await approveReviewItem(db, 999, { by: 'ana' })).toMatchObject({ ok: false, reason: 'not_found' });
  });

  it('needs the reviewer name', async () => {
    const { item } = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'edit',
      payload: { text: 'x' },
    });
    await expect(approveReviewItem(db, item.id, { by: '  ' })).rejects.toBeInstanceOf(InputError);
    await expect(rejectReviewItem(db, item.id, { by: '' })).rejects.toBeInstanceOf(InputError);
    expect((await getReviewItem(db, item.id))?.status).toBe('pending');
  });

  it('approving a pattern writes its YAML into the study patterns folder, which the runtime then loads', async () => {
    const { item } = await enqueueReviewItem(db, {
      kind: 'pattern',
      source: 'loop-c',
      title: 'kennel',
      payload: { name: 'kennel', yaml: PATTERN_YAML },
    });
    const result = await approveReviewItem(db, item.id, { by: 'ana', studyDir: dir });
    expect(result.ok).toBe(true);
    const file = path.join(dir, 'patterns', 'kennel.yaml');
    expect(readFileSync(file, 'utf8')).toBe(PATTERN_YAML);
    expect(readdirSync(path.join(dir, 'patterns'))).toEqual(['kennel.yaml']);
    expect(loadStudyPatternLibrary(dir).patterns.map((pattern) => pattern.id)).toContain('kennel');
    expect(await getReviewItem(db, item.id)).toMatchObject({ status: 'approved', outcome: { file } });
    // A second item with the same pattern (another loop's draft) does not replace the approved one in silence: refused, left pending.
    const again = await enqueueReviewItem(db, {
      kind: 'pattern',
      source: 'loop-d',
      title: 'kennel again',
      payload: { name: 'kennel', yaml: PATTERN_YAML.replace('title: Kennel boarding', 'title: Kennels, redrafted') },
    });
    const refused = await approveReviewItem(db, again.item.id, { by: 'ana', studyDir: dir });
    expect(refused).toMatchObject({ ok: false, reason: 'invalid_payload' });
    if (!refused.ok)
      expect(refused.message).toBe(
        'review item 2 cannot be applied: patterns/kennel.yaml exists already (pattern id "kennel" is in the library): delete or rename it first to approve this version',
      );
    expect(readFileSync(file, 'utf8')).toBe(PATTERN_YAML);
    expect((await getReviewItem(db, again.item.id))?.status).toBe('pending');
  });

  it('refuses to approve a pattern that would break the library, and leaves it pending', async () => {
    const broken = await enqueueReviewItem(db, {
      kind: 'pattern',
      source: 'loop-c',
      title: 'broken',
      payload: { name: 'broken', yaml: 'id: broken\ntitle: x\n' },
    });
    expect(await approveReviewItem(db, broken.item.id, { by: 'ana', studyDir: dir })).toMatchObject({
      ok: false,
      reason: 'invalid_payload',
    });
    const clash = await enqueueReviewItem(db, {
      kind: 'pattern',
      source: 'loop-c',
      title: 'clash',
      payload: { name: 'my-booking', yaml: PATTERN_YAML.replace('id: kennel', 'id: booking') },
    });
    const refused = await approveReviewItem(db, clash.item.id, { by: 'ana', studyDir: dir });
    expect(refused).toMatchObject({ ok: false, reason: 'invalid_payload' });
    if (!refused.ok) expect(refused.message).toMatch(/pattern id "booking" is already defined/);
    expect(existsSync(path.join(dir, 'patterns'))).toBe(false);
    expect((await listReviewItems(db)).map((item) => item.status)).toEqual(['pending', 'pending']);
  });

  it('approving an example hands it to the admission hook, or writes it for admission', async () => {
    const example = {
      id: 'kennel-1',
      goal: 'dogs stay in kennels',
      expected: { appType: 'booking' },
      tags: [],
      partition: 'shadow',
    };
    const { item } = await enqueueReviewItem(db, {
      kind: 'example',
      source: 'loop-c',
      title: 'kennel example',
      payload: { example },
    });
    const admitted: unknown[] = [];
    expect(
      await approveReviewItem(db, item.id, {
        by: 'ana',
        admitExample: (value) => (admitted.push(value), 'admitted to shadow'),
      }),
    ).toMatchObject({ ok: true, item: { outcome: { admitted: 'admitted to shadow' } } });
    expect(admitted).toEqual([example]);

    const second = await enqueueReviewItem(db, {
      kind: 'example',
      source: 'loop-d',
      title: 'other',
      payload: { example: { ...example, id: 'kennel-2' } },
    });
    await approveReviewItem(db, second.item.id, { by: 'ana', studyDir: dir });
    const file = path.join(dir, 'review', 'examples', `${second.item.id}.json`);
    expect(existsSync(file)).toBe(true);
    // The public corpus format, which corpus add reads as it stands (a bare example object was refused: 'unknown top-level field "id"').
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ examples: [{ ...example, id: 'kennel-2' }] });
    const read = readCorpusFile(file);
    expect(read.ok && read.examples.map((record) => record.id)).toEqual(['kennel-2']);
  });
});
