/**
 * Gives the run lease (src/storage/lease.ts) up synchronously, for a process
 * about to exit from a signal handler.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LeaseRecord } from './lease.ts';
import { isPostgresUrl, parseStorageTarget } from './location.ts';

// Gives a PostgreSQL lease up from a child process (`pg` has no synchronous API): its data on stdin.
const POSTGRES_RELEASE_SOURCE = `
const { Client } = require(process.argv[1]);
let text = '';
process.stdin.on('data', (chunk) => (text += chunk)).on('end', async () => {
  const data = JSON.parse(text);
  const client = new Client({ connectionString: data.connectionString, options: '-c search_path=' + data.schema, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('DELETE FROM leases WHERE study_key = $1 AND owner_id = $2', [data.studyKey, data.ownerId]);
  } finally {
    await client.end().catch(() => {});
  }
});
`;

/**
 * Gives the lease up synchronously, on its own connection (for a process
 * about to exit from a signal handler): a SQLite file directly, a PostgreSQL
 * URL through a short-lived child process (at most 3 s). Never throws.
 */
export function releaseLeaseSync(file: string, lease: LeaseRecord): void {
  if (isPostgresUrl(file)) {
    try {
      const target = parseStorageTarget(file);
      if (target.kind !== 'postgres') return;
      const input = JSON.stringify({
        connectionString: target.connectionString,
        schema: target.schema,
        studyKey: lease.studyKey,
        ownerId: lease.ownerId,
      });
      spawnSync(process.execPath, ['-e', POSTGRES_RELEASE_SOURCE, createRequire(import.meta.url).resolve('pg')], {
        input,
        timeout: 3_000,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
    } catch {
      // The next run takes a dead process's lease over anyway.
    }
    return;
  }
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const sqlite = new Database(file, { fileMustExist: true });
    try {
      sqlite.pragma('busy_timeout = 1000');
      sqlite.prepare('DELETE FROM leases WHERE study_key = ? AND owner_id = ?').run(lease.studyKey, lease.ownerId);
    } finally {
      sqlite.close();
    }
  } catch {
    // The next run takes a dead process's lease over anyway.
  }
}
