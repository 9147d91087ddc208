import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { afterEach, describe, expect, it } from 'vitest';
import { activateVersion } from './activation.ts';
import type { StudyDatabase } from './study-database.ts';
import { openDatabase } from './database.ts';
import { checkGitMirror, gitMirrorPath, syncGitMirror } from './git-mirror.ts';
import { putVersion, setRegistryVersion } from './registry.ts';

let db: StudyDatabase | undefined;
let dir: string | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const evidence = JSON.stringify({
  checks: [
    { name: 'margin', passed: true, statistic: 0.01, threshold: 0, detail: 'Δoptimization = 0.01 over 40 examples' },
    { name: 'shadow', passed: true, statistic: 0.005, threshold: 0.001, detail: 'shadow confirms' },
  ],
  shadowConsulted: true,
});

async function study(): Promise<{ store: StudyDatabase; options: { studyDir: string; artifactFileName: string } }> {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-git-mirror-'));
  db = await openDatabase(':memory:');
  const seed = await putVersion(db, 'cues: [a]\n', 'seed', null, null, () => new Date('2026-01-01T00:00:00Z'));
  await setRegistryVersion(db, seed.id, 'seed', 'active', () => new Date('2026-01-01T00:00:00Z'));
  await setRegistryVersion(db, seed.id, 'seed', 'seed');
  await db
    .insertInto('experiments')
    .values({
      run_id: 1,
      round: 1,
      proposer: 'error-driven@1',
      base_version_id: seed.id,
      candidate_hash: 'h',
      delta: 'cues += "b"',
      rationale: 'fixes 3 examples',
      decision: 'accepted',
      reason: 'accepted',
      evidence,
      accepted_version_id: null,
      fingerprint: 'f',
      seed: 1,
      created_at: '2026-01-01T00:01:00Z',
    })
    .execute();
  const accepted = await putVersion(db, 'cues: [a, b]\n', 'accepted', seed.id, 1);
  await setRegistryVersion(db, accepted.id, 'experiment 1 accepted', 'active', () => new Date('2026-01-01T00:01:00Z'));
  return { store: db, options: { studyDir: dir, artifactFileName: 'playbook.yaml' } };
}

describe('the git notebook', () => {
  it('commits each move of the active version once, with the decision and its evidence as the message', async () => {
    const { store, options } = await study();
    const first = await syncGitMirror(store, options);
    expect(first.commits.map((commit) => commit.versionId)).toEqual([1, 2]);
    expect((await syncGitMirror(store, options)).commits).toEqual([]); // idempotent
    const log = await git.log({ fs, dir: gitMirrorPath(options.studyDir) });
    expect(log).toHaveLength(2);
    const message = log[0]!.commit.message;
    expect(message).toContain('experiment 1 accepted: version 2');
    expect(message).toContain('cues += "b"');
    expect(message).toContain('pass margin: Δoptimization = 0.01 over 40 examples');
    expect(message).toContain('Kloop-Registry-Event: 3');
    expect(log[0]!.commit.author.timestamp).toBe(Date.parse('2026-01-01T00:01:00Z') / 1000);
    const blob = await git.readBlob({
      fs,
      dir: gitMirrorPath(options.studyDir),
      oid: log[0]!.oid,
      filepath: 'playbook.yaml',
    });
    expect(Buffer.from(blob.blob).toString('utf8')).toBe('cues: [a, b]\n');
    expect(await checkGitMirror(store, { ...options, enabled: true })).toEqual([
      expect.objectContaining({ status: 'ok' }),
    ]);
  });

  it('commits a rollback with who did it as the author, and doctor sees a mirror that falls behind or was edited', async () => {
    const { store, options } = await study();
    await syncGitMirror(store, options);
    await activateVersion(store, { versionId: 1, actor: 'Ana' });
    const behind = await checkGitMirror(store, { ...options, enabled: true });
    expect(behind[0]).toMatchObject({ status: 'problem' });
    expect(behind[0]!.message).toMatch(/1 moves of the active version not mirrored/);
    expect((await checkGitMirror(store, { ...options, enabled: false }))[0]).toMatchObject({ status: 'info' });
    await syncGitMirror(store, options);
    const log = await git.log({ fs, dir: gitMirrorPath(options.studyDir) });
    expect(log[0]!.commit.author.name).toBe('Ana');
    expect(log[0]!.commit.message).toMatch(/^version 1: activated by Ana \(rollback from version 2\)/);
    expect((await checkGitMirror(store, { ...options, enabled: true }))[0]).toMatchObject({ status: 'ok' });

    // A commit made by hand that changes the artifact: the mirror no longer matches.
    const mirror = gitMirrorPath(options.studyDir);
    writeFileSync(path.join(mirror, 'playbook.yaml'), 'edited by hand\n');
    await git.add({ fs, dir: mirror, filepath: 'playbook.yaml' });
    await git.commit({ fs, dir: mirror, message: 'hand edit', author: { name: 'someone', email: 'x@y' } });
    const edited = await checkGitMirror(store, { ...options, enabled: true });
    expect(edited[0]).toMatchObject({ status: 'problem' });
    expect(edited[0]!.message).toMatch(/1 commits name no move of the database/);
  });

  it('reports a missing mirror only when the study asks for one', async () => {
    const { store, options } = await study();
    expect(await checkGitMirror(store, { ...options, enabled: false })).toEqual([]);
    expect((await checkGitMirror(store, { ...options, enabled: true }))[0]).toMatchObject({ status: 'problem' });
  });
});
