/**
 * The coordinator's listening connection on the job queue
 * (src/storage/queue-listener.ts) through a short database outage: it
 * listened once, and when the outage reset its connection it never listened
 * again — every later wait of the run lasted the whole 1-s poll (after a 2-s
 * outage in tests/peer-faults/pg-outage.test.ts, round 2 took 23 s instead of
 * 6). Now it connects and listens again, wakes the waiters (a notification
 * may have been missed), and a notification after the outage wakes its
 * waiter. The waits here are 300 s long: only a notification or the
 * listener's own wake-up can end them before the test's time-out.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseStorageTarget } from '../../src/storage/location.ts';
import { listenToQueue } from '../../src/storage/queue-listener.ts';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, observer, runCleanups } from './pg-fixture.ts';
import { startTcpProxy } from './tcp-proxy.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

const LONG_WAIT_MS = 300_000;

describe.runIf(postgres)('the job queue listener through a 2-second database outage', () => {
  it('listens again after the outage: its waiters are woken, and a later notification wakes its waiter', async () => {
    const schema = await freshSchema(cleanups);
    const proxy = await startTcpProxy('127.0.0.1', 5432);
    cleanups.push(() => proxy.close());
    const url = new URL(schema.url);
    url.port = String(proxy.port);
    const target = parseStorageTarget(url.toString());
    if (target.kind !== 'postgres') throw new Error('not a PostgreSQL target');
    const logged: string[] = [];
    const listener = await listenToQueue(target, 'kloop_listener_outage', (message) => logged.push(message));
    cleanups.push(() => listener.close());
    const notifier = await observer(cleanups);

    // Before the outage: a notification naming the waiter's job wakes it.
    const before = listener.wait(LONG_WAIT_MS, undefined, new Set(['job-1']));
    await notifier.query(`notify kloop_listener_outage, 'job-1'`);
    await before;

    // During the outage: the waiter is woken once the listener listens again.
    const connectionsBefore = proxy.connections;
    const across = listener.wait(LONG_WAIT_MS, undefined, new Set(['job-2']));
    await proxy.cut(2_000);
    await across;
    expect(proxy.connections).toBe(connectionsBefore + 1);
    expect(logged.some((message) => message.startsWith('job queue: the listening connection failed'))).toBe(true);

    // After it: notifications reach the new connection.
    const after = listener.wait(LONG_WAIT_MS, undefined, new Set(['job-3']));
    await notifier.query(`notify kloop_listener_outage, 'job-3'`);
    await after;
    expect(logged.filter((message) => message.startsWith('job queue: could not listen again'))).toEqual([]);
  }, 120_000);
});
