/**
 * Peer fault 13: a 2-second database outage ended the coordinator with code
 * `internal` (exit 1, no report, the run left open) and crashed every busy
 * worker with a raw stack trace.
 *
 * The outage, deterministic and without restarting the server: kloop reaches
 * PostgreSQL through a TCP proxy on loopback (tests/peer-faults/tcp-proxy.ts)
 * that the test cuts for 2 s — every open connection reset, new ones refused
 * — once the coordinator has decided its first experiment, while it and the
 * workers are busy. The run must end as the same run without the outage
 * (exit 0, 4 experiments), the workers must still serve, and no process may
 * print a stack trace. Two rounds of two candidates (the fixture's
 * `maxExperiments: 4`): after the cut, the coordinator still decides round 1's
 * second candidate, and round 2 (its screening and both candidates) runs
 * wholly on the reconnected queue. A third round (6 experiments) added a
 * third of the file's time and nothing the second round does not hold.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import { runKloop, waitForLine } from '../reliability-fixture.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, makeSmallStudy, runCleanups, start, stderrOf } from './pg-fixture.ts';
import { startTcpProxy } from './tcp-proxy.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

describe.runIf(postgres)('peer fault 13: a 2-second database outage', () => {
  it('the coordinator and the workers reconnect and the run ends as without it', async () => {
    const study = makeSmallStudy(cleanups);
    const schema = await freshSchema(cleanups);
    const proxy = await startTcpProxy('127.0.0.1', 5432);
    cleanups.push(() => proxy.close());
    const url = new URL(schema.url);
    url.port = String(proxy.port);
    const viaProxy = url.toString();
    const opened = await runKloop(['run', study, '--db', schema.url, '--max-experiments', '0', '--quiet']);
    expect(opened.code, opened.stderr).toBe(0);

    const workers = [0, 1].map(() => {
      const worker = start(cleanups, ['worker', study, '--db', viaProxy, '--concurrency', '2']);
      return { ...worker, stderr: stderrOf(worker.child) };
    });
    const coordinator = start(cleanups, ['run', study, '--db', viaProxy, '--workers', '--batch-size', '1', '--json']);
    const coordinatorErr = stderrOf(coordinator.child);
    await waitForLine(coordinator.child, /#\d+ (ACCEPTED|refused|skipped)/);
    await proxy.cut(2_000);

    const end = await coordinator.result;
    expect(end.code, coordinatorErr()).toBe(0);
    expect((JSON.parse(end.stdout) as { experiments: number }).experiments).toBe(4);
    expect(coordinatorErr()).not.toMatch(/\n\s+at |unexpected failure/);
    for (const worker of workers) expect(worker.child.exitCode, worker.stderr()).toBeNull();
    for (const worker of workers) worker.child.kill('SIGTERM');
    const ends = await Promise.all(workers.map((worker) => worker.result));
    expect(ends.map((result) => result.code)).toEqual([130, 130]);
    for (const worker of workers) expect(worker.stderr()).not.toMatch(/\n\s+at |unexpected failure/);
  }, 300_000);
});
