/**
 * Peer fault 8 (graphile-worker #564): connections ran out and the
 * coordinator died. One idle worker held 4 connections, two workers and the
 * coordinator peaked at 21; under a connection limit of 12 on the role the
 * coordinator printed `unexpected failure: error: too many connections for
 * role` with a stack trace (exit 1, JSON code `internal`, no report).
 *
 * Now each process has a budget (src/storage/connections.ts, docs/storage.md
 * "Connections": 8 for the coordinator, 7 per worker), a refused connection
 * is tried again with back-off for up to the URL's `connect_timeout` (the
 * pool waits), and then the command fails with a message that names what the
 * server said and what kloop needs (code `storage.connections`, exit 1).
 *
 * Each test makes its own role with a connection limit, and drops it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_TEST_URL, postgresAvailable } from '../../src/test-support/postgres.ts';
import { runKloop } from '../reliability-fixture.ts';
import type { Cleanups } from './pg-fixture.ts';
import { makeSmallStudy, observer, runCleanups, start } from './pg-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

/** A login role with a connection limit, owning a fresh schema; its URL. */
async function limitedRole(limit: number, parameters = ''): Promise<{ url: string; role: string }> {
  const admin = await observer(cleanups);
  const role = `kloop_t_conn_${randomBytes(4).toString('hex')}`;
  await admin.query(`create role ${role} login connection limit ${limit}`);
  await admin.query(`grant create on database ${new URL(POSTGRES_TEST_URL).pathname.slice(1)} to ${role}`);
  await admin.query(`create schema ${role} authorization ${role}`);
  cleanups.push(async () => {
    const cleaner = await observer([]);
    await cleaner.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = $1`, [role]);
    await cleaner.query(`drop schema if exists ${role} cascade; drop schema if exists ${role}_queue cascade`);
    await cleaner.query(`drop owned by ${role}; drop role ${role}`);
    await cleaner.end();
  });
  const url = new URL(POSTGRES_TEST_URL);
  url.username = role;
  url.searchParams.set('schema', role);
  return { url: `${url.toString()}${parameters}`, role };
}

describe.runIf(postgres)('peer fault 8: connections', () => {
  it('a coordinator and two workers run a study to the end under a limit of 12 connections for the role', async () => {
    const study = makeSmallStudy(cleanups);
    const { url, role } = await limitedRole(12);
    const counter = await observer(cleanups);
    let peak = 0;
    const sampler = setInterval(() => {
      void counter
        .query<{ n: string }>('select count(*) as n from pg_stat_activity where usename = $1', [role])
        .then((result) => (peak = Math.max(peak, Number(result.rows[0]!.n))))
        .catch(() => undefined);
    }, 50);
    cleanups.push(() => clearInterval(sampler));
    const opened = await runKloop(['run', study, '--db', url, '--max-experiments', '0', '--quiet']); // the schema, before the workers
    expect(opened.code, opened.stderr).toBe(0);
    const workers = [0, 1].map(() => start(cleanups, ['worker', study, '--db', url, '--concurrency', '2']));
    const run = await runKloop(['run', study, '--db', url, '--workers', '--batch-size', '2', '--json']);
    clearInterval(sampler);
    expect(run.code, run.stderr).toBe(0);
    // The lease heartbeat's own connection (src/storage/lease.ts) is not one of the pools that wait: under this limit it
    // can be refused. It is tried again quietly at the next beats and warns only when that keeps failing (7.5 s), which
    // still happens here under load: a warning, never a failure of the run. Known gap, in docs/storage.md.
    const failures = run.stderr
      .split('\n')
      .filter((line) => !line.startsWith('kloop: WARNING: lease heartbeat failed: too many connections'));
    expect(failures.join('\n')).not.toMatch(/too many connections|unexpected failure/);
    expect((JSON.parse(run.stdout) as { stopReason: string; experiments: number }).experiments).toBe(4);
    for (const worker of workers) worker.child.kill('SIGTERM');
    expect((await Promise.all(workers.map((worker) => worker.result))).map((end) => end.code)).toEqual([130, 130]);
    process.stdout.write(`peer fault 8: peak connections of the role (coordinator + 2 workers): ${peak}\n`);
    expect(peak).toBeLessThanOrEqual(12);
  }, 300_000);

  it('a connection the server keeps refusing ends the command with the budget in the message, code storage.connections, no stack trace', async () => {
    const study = makeSmallStudy(cleanups);
    const { url } = await limitedRole(1, '&connect_timeout=2');
    const result = await runKloop(['worker', study, '--db', url, '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /the server refused a connection: too many connections for role "kloop_t_conn_[0-9a-f]+" \(tried again for \d+ s\); kloop needs at most 8 connections for kloop run --workers, 7 per kloop worker, 5 for kloop run \(docs\/storage\.md, "Connections"\)/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe('storage.connections');
  }, 120_000);
});
