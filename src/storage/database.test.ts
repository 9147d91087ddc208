import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isSqliteBusy, retryWhileBusy } from './busy.ts';
import type { StudyDatabase } from './study-database.ts';
import { openDatabase } from './database.ts';
import { STUDY_BUSY_EXIT_CODE, StudyBusyError } from './lease.ts';
import type { KloopDatabase } from './schema.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.doUnmock('./migrations.ts');
  vi.resetModules();
});

function temporaryFile(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-database-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return path.join(directory, 'kloop.db');
}

async function opened(file: string, options?: Parameters<typeof openDatabase>[1]): Promise<StudyDatabase> {
  const db = await openDatabase(file, options);
  cleanups.push(() => db.destroy());
  return db;
}

/** Another process's connection (better-sqlite3, as the heartbeat worker has), busy timeout 0: it learns at once that the write lock is taken. */
function otherConnection(file: string): Database.Database {
  const sqlite = new Database(file, { timeout: 0 });
  cleanups.push(() => void sqlite.close());
  return sqlite;
}

const renewHeartbeat = (sqlite: Database.Database, at: string) =>
  sqlite.prepare("update leases set heartbeat_at = ? where study_key = '/s'").run(at);
const LEASE = { study_key: '/s', owner_id: 'h:1:x', hostname: 'h', pid: 1, acquired_at: 't0', heartbeat_at: 't0' };

/** A transaction that reads, lets `between` run, then writes: the shape of the run's start (corpus lifecycle, seed version), the lease's take-over, a decision. */
function readThenWrite(db: Kysely<KloopDatabase>, between: () => void): Promise<void> {
  return db.transaction().execute(async (transaction) => {
    await transaction.selectFrom('leases').selectAll().execute();
    between();
    await transaction
      .insertInto('runs')
      .values({ started_at: 't1', ended_at: null, stop_reason: null, report: null })
      .execute();
  });
}

describe('transactions on a study database', () => {
  it('before: a deferred transaction that read, then saw another connection commit, is refused with SQLITE_BUSY_SNAPSHOT on its write', async () => {
    const file = temporaryFile();
    await (await opened(file)).insertInto('leases').values(LEASE).execute();
    // The connection as openDatabase made it before BEGIN IMMEDIATE: Kysely's SqliteDialect, whose transactions begin deferred.
    const sqlite = new Database(file);
    sqlite.pragma('busy_timeout = 10000');
    const deferred = new Kysely<KloopDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
    cleanups.push(() => deferred.destroy());
    const heartbeat = otherConnection(file);
    const failure = await readThenWrite(deferred, () => renewHeartbeat(heartbeat, 't1')).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Refused at once, whatever the busy timeout: the snapshot the transaction read is stale.
    expect(failure).toMatchObject({ code: 'SQLITE_BUSY_SNAPSHOT', message: 'database is locked' });
    expect(isSqliteBusy(failure)).toBe(true);
    expect(heartbeat.prepare('select count(*) as n from runs').get()).toEqual({ n: 0 });
  });

  it('now: the same transaction holds the write lock from BEGIN, so it commits; the other writer is the one that waits (SQLITE_BUSY), and then writes', async () => {
    const file = temporaryFile();
    const db = await opened(file);
    await db.insertInto('leases').values(LEASE).execute();
    const heartbeat = otherConnection(file);
    let refused: unknown;
    await readThenWrite(db, () => {
      try {
        renewHeartbeat(heartbeat, 't1');
      } catch (error) {
        refused = error;
      }
    });
    expect(refused).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(await db.selectFrom('runs').select('started_at').execute()).toEqual([{ started_at: 't1' }]);
    renewHeartbeat(heartbeat, 't2'); // the lock is free again: the heartbeat's next beat lands
    expect(await db.selectFrom('leases').select('heartbeat_at').execute()).toEqual([{ heartbeat_at: 't2' }]);
  });

  it('a transaction marked read only begins deferred: it takes no write lock, and a writer goes on meanwhile', async () => {
    const file = temporaryFile();
    const db = await opened(file);
    await db.insertInto('leases').values(LEASE).execute();
    const heartbeat = otherConnection(file);
    const seen = await db
      .transaction()
      .setAccessMode('read only')
      .execute(async (transaction) => {
        const before = await transaction.selectFrom('leases').select('heartbeat_at').executeTakeFirstOrThrow();
        renewHeartbeat(heartbeat, 't1');
        const after = await transaction.selectFrom('leases').select('heartbeat_at').executeTakeFirstOrThrow();
        return [before.heartbeat_at, after.heartbeat_at];
      });
    expect(seen).toEqual(['t0', 't0']); // one snapshot throughout
    expect(await db.selectFrom('leases').select('heartbeat_at').execute()).toEqual([{ heartbeat_at: 't1' }]);
  });
});

describe('opening a study database', () => {
  it('a database another process keeps locked is reported busy (exit 3) after the bounded retry, never as an SQLite error; once free it opens', async () => {
    const file = temporaryFile();
    const holder = new Database(file);
    cleanups.push(() => void holder.close());
    holder.exec('begin immediate'); // a new file, locked before it has any schema
    const refused = await openDatabase(file, { busyTimeoutMs: 0 }).then(
      () => 'opened',
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StudyBusyError);
    expect(refused).toMatchObject({
      code: 'study_busy',
      exitCode: STUDY_BUSY_EXIT_CODE,
      holder: undefined,
      cause: { code: 'SQLITE_BUSY' },
    });
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^the study database ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} stayed locked by another process for \\d+ s while it was being opened; try again when that process is done$`,
      ),
    );
    holder.exec('commit');
    const db = await opened(file, { busyTimeoutMs: 0 });
    expect(await db.selectFrom('leases').selectAll().execute()).toEqual([]);
  });

  it('an up-to-date database opens without the write lock (another process may be mid-transaction)', async () => {
    const file = temporaryFile();
    await (await opened(file)).destroy();
    const writer = otherConnection(file);
    writer.exec('begin immediate');
    const db = await opened(file, { busyTimeoutMs: 0 });
    expect(await db.selectFrom('leases').selectAll().execute()).toEqual([]);
    writer.exec('rollback');
  });

  it('migrations run in one transaction: when one fails, the ones before it are undone too', async () => {
    vi.resetModules();
    vi.doMock('./migrations.ts', () => ({
      MIGRATIONS: {
        '0001_first': {
          up: async (db: Kysely<unknown>) =>
            void (await db.schema.createTable('first').addColumn('id', 'integer').execute()),
        },
        '0002_broken': {
          up: async (db: Kysely<unknown>) => {
            await db.schema.createTable('second').addColumn('id', 'integer').execute();
            throw new Error('migration 0002 is broken');
          },
        },
      },
    }));
    // The unit project shares one module graph among the files of a worker (isolate: false): the mock must not outlive this test.
    cleanups.push(() => {
      vi.doUnmock('./migrations.ts');
      vi.resetModules();
    });
    const fresh = (await import('./database.ts')) as typeof import('./database.ts');
    const file = temporaryFile();
    await expect(fresh.openDatabase(file)).rejects.toThrow(
      `cannot migrate the study database ${file}: migration 0002 is broken`,
    );
    const sqlite = new Database(file, { readonly: true });
    cleanups.push(() => void sqlite.close());
    const tables = (
      sqlite.prepare("select name from sqlite_master where type = 'table' order by name").all() as Array<{
        name: string;
      }>
    ).map((row) => row.name);
    expect(tables).toEqual(['kysely_migration', 'kysely_migration_lock']); // neither 'first' nor 'second'
    expect(sqlite.prepare('select count(*) as n from kysely_migration').get()).toEqual({ n: 0 });
  });
});

describe('retryWhileBusy', () => {
  it('tries again only while busy, at most `attempts` times, and rethrows the last error', async () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' });
    const other = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    let calls = 0;
    const failing =
      (error: Error, succeedOnCall = Infinity) =>
      async (): Promise<string> => {
        calls += 1;
        if (calls >= succeedOnCall) return 'done';
        throw error;
      };
    expect(await retryWhileBusy(failing(busy, 3), { backoffMs: 0 })).toBe('done');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retryWhileBusy(failing(busy), { attempts: 2, backoffMs: 0 })).rejects.toBe(busy);
    expect(calls).toBe(2);
    calls = 0;
    await expect(retryWhileBusy(failing(other), { backoffMs: 0 })).rejects.toBe(other);
    expect(calls).toBe(1);
    expect(isSqliteBusy(new Error('wrapped', { cause: busy }))).toBe(true);
    expect(isSqliteBusy(other)).toBe(false);
  });
});
