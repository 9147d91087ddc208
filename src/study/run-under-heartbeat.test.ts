/**
 * A run's transactions are never refused because its own lease heartbeat
 * wrote meanwhile. The heartbeat runs in a worker thread with a connection of
 * its own; with transactions that began deferred, one that had read before a
 * beat committed was refused on its first write with SQLITE_BUSY_SNAPSHOT
 * (`kloop run` exited 1 with "database is locked"). Here the heartbeat beats
 * every millisecond through a whole run: with deferred transactions nearly
 * every such run failed (5 of 6 in a measurement); with BEGIN IMMEDIATE none
 * can, whatever the timing — the outcome asserted does not depend on it.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { acquireLease, readLease, releaseLease, startLeaseHeartbeat } from '../storage/lease.ts';
import { loadStudy } from './load-study.ts';
import { runStudy } from '../loop/run-study.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/intent');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function studyFolder(maxExperiments: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-run-heartbeat-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'corpus'));
  for (const file of ['program.md', 'playbook.yaml']) copyFileSync(path.join(EXAMPLE, file), path.join(dir, file));
  for (const file of ['operations.yaml', 'extra.jsonl'])
    copyFileSync(path.join(EXAMPLE, 'corpus', file), path.join(dir, 'corpus', file));
  const config = readFileSync(path.join(EXAMPLE, 'kloop.yaml'), 'utf8')
    .replace(/maxExperiments: \d+/, `maxExperiments: ${maxExperiments}`)
    .replace(/( {2}concurrency: \d+)/, '$1\n  maxEvaluations: 10\n  maxScreened: 100');
  writeFileSync(path.join(dir, 'kloop.yaml'), config);
  return dir;
}

describe('a run and its lease heartbeat', () => {
  it('a heartbeat beating every millisecond in its own thread never makes a run transaction fail', async () => {
    const dir = studyFolder(6);
    const study = loadStudy(dir);
    const file = studyDatabasePath(dir);
    const db = await openDatabase(file);
    cleanups.push(() => db.destroy());
    const lease = await acquireLease(db, { studyKey: dir });
    let lost = false;
    const heartbeat = startLeaseHeartbeat(db, lease, { file, intervalMs: 1, onLost: () => (lost = true) });
    cleanups.push(() => heartbeat.stop());
    try {
      const outcome = await runStudy({ study, notebook: openNotebook(db) });
      expect(outcome.stopReason).toBe('max_experiments');
    } finally {
      await heartbeat.stop();
    }
    expect(lost).toBe(false);
    expect((await readLease(db, dir))?.ownerId).toBe(lease.ownerId);
    const runs = await db.selectFrom('runs').select(['stop_reason']).execute();
    expect(runs).toEqual([{ stop_reason: 'max_experiments' }]);
    const decided = await db.selectFrom('experiments').select('decision').where('decision', '!=', 'skipped').execute();
    expect(decided).toHaveLength(6); // every decision recorded, none refused by the database
    await releaseLease(db, lease);
  }, 120_000);
});
