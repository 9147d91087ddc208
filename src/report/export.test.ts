import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError, StorageError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { putVersion, setRegistryVersion } from '../storage/registry.ts';
import { defaultExportPath, selectExportVersion, writeFileAtomicSync } from './export.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-export-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function database(): Promise<StudyDatabase> {
  const db = await openDatabase(':memory:');
  cleanups.push(() => db.destroy());
  return db;
}

describe('exporting an artifact version', () => {
  it('selects the active version as best, or a version by id', async () => {
    const db = await database();
    await expect(selectExportVersion(db, { kind: 'best' })).rejects.toThrow(InputError);
    const seed = await putVersion(db, 'seed text', 'seed', null, null);
    const better = await putVersion(db, 'better text', 'accepted', seed.id, 1);
    await setRegistryVersion(db, better.id, 'accepted');
    expect((await selectExportVersion(db, { kind: 'best' })).text).toBe('better text');
    expect((await selectExportVersion(db, { kind: 'version', id: seed.id })).text).toBe('seed text');
    await expect(selectExportVersion(db, { kind: 'version', id: 99 })).rejects.toThrow(
      'no artifact version 99 in this study',
    );
  });

  it('refuses a version whose text no longer matches its content hash', async () => {
    const db = await database();
    const version = await putVersion(db, 'original', 'seed', null, null);
    await db.updateTable('artifact_versions').set({ text: 'tampered' }).where('id', '=', version.id).execute();
    await expect(selectExportVersion(db, { kind: 'version', id: version.id })).rejects.toThrow(StorageError);
  });

  it('names the default file after the artifact and the version', () => {
    expect(defaultExportPath('/studies/a', '/studies/a/playbook.yaml', 7)).toBe(
      '/studies/a/.kloop/exports/playbook.v7.yaml',
    );
    expect(defaultExportPath('/studies/a', '/studies/a/prompt', 3)).toBe('/studies/a/.kloop/exports/prompt.v3');
  });

  it('writes through a temporary file and a rename, replacing the old file whole, leaving no temporary behind', () => {
    const dir = folder();
    const file = path.join(dir, 'best.yaml');
    writeFileSync(file, 'old content that is longer than the new one');
    writeFileAtomicSync(file, 'new — ünïcode');
    expect(readFileSync(file, 'utf8')).toBe('new — ünïcode');
    expect(readdirSync(dir)).toEqual(['best.yaml']);
  });

  it('refuses a folder that does not exist, writing nothing', () => {
    const dir = folder();
    const file = path.join(dir, 'missing', 'best.yaml');
    expect(() => writeFileAtomicSync(file, 'x')).toThrow(/cannot write the export: its folder does not exist/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
