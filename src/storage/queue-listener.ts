/**
 * The coordinator's listening connection on the job queue: a worker's NOTIFY
 * after each job (its job key as payload) wakes the evaluations waiting for
 * that job only — with a round's candidates screened at once, dozens wait
 * together, and each wake-up is two queries. A connection lost to an outage
 * is replaced (listenToQueue): without it, every wait after the outage lasted
 * the whole poll.
 *
 * @module
 */
import pg from 'pg';
import { connectPatiently, connectionWaitMs } from './connections.ts';
import type { StorageTarget } from './location.ts';

type PostgresTarget = Extract<StorageTarget, { kind: 'postgres' }>;

/** Waits on the queue's notifications. */
export interface QueueListener {
  /** Resolves after `ms` milliseconds, on `signal`'s abort, or when a notification names one of `jobKeys` (or none). */
  wait(ms: number, signal: AbortSignal | undefined, jobKeys: ReadonlySet<string>): Promise<void>;
  /** Wakes every waiter and closes the connection. */
  close(): Promise<void>;
}

/** Wakes the waiters of `jobKey`; every waiter when the key is missing or empty. */
function wakeFor(waiters: Map<() => void, ReadonlySet<string>>, jobKey: string | undefined): void {
  for (const [wake, keys] of [...waiters]) if (jobKey === undefined || jobKey === '' || keys.has(jobKey)) wake();
}

/** Resolves after `ms` milliseconds without keeping the process alive for it. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Connects (patiently, through a short outage) and listens on `channel`; errors of the connection go to `log`.
 *
 * When the listening connection is lost (an outage, the server restarting), it connects and listens again in the
 * background, with back-off (0.1 s doubling to 2 s) for up to the URL's `connect_timeout` (default 60 s), then wakes
 * every waiter (a notification may have been missed meanwhile). Until then, and for good if it cannot listen again
 * (logged), the waiters wake at their own `ms`: the coordinator's poll.
 */
export async function listenToQueue(
  target: PostgresTarget,
  channel: string,
  log: ((message: string) => void) | undefined,
): Promise<QueueListener> {
  const waiters = new Map<() => void, ReadonlySet<string>>();
  let closed = false;
  let current: pg.Client | undefined;
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: target.connectionString });
    client.on('error', (error) => log?.(`job queue: the listening connection failed: ${error.message}`));
    try {
      await client.connect();
      client.on('notification', (message) => wakeFor(waiters, message.payload));
      await client.query(`listen ${channel}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    client.on('end', () => {
      if (client === current && !closed) void listenAgain();
    });
    return client;
  };
  const listenAgain = async (): Promise<void> => {
    current = undefined;
    const started = Date.now();
    for (let attempt = 0; !closed; attempt += 1) {
      try {
        const client = await connect();
        if (closed) await client.end().catch(() => undefined);
        else {
          current = client;
          wakeFor(waiters, undefined);
        }
        return;
      } catch (error) {
        if (Date.now() - started >= connectionWaitMs(target)) {
          log?.(`job queue: could not listen again (${(error as Error).message}); waiting by polling`);
          return;
        }
        await pause(Math.min(2_000, 100 * 2 ** attempt));
      }
    }
  };
  current = await connectPatiently(target, connect);
  return {
    wait: (ms, signal, jobKeys) =>
      new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.set(done, jobKeys);
        signal?.addEventListener('abort', done, { once: true });
      }),
    async close() {
      closed = true;
      for (const wake of [...waiters.keys()]) wake();
      await current?.end().catch(() => undefined);
    },
  };
}
