/**
 * The coordinator's listening connection on the job queue: a worker's NOTIFY
 * after each job (its job key as payload) wakes the evaluations waiting for
 * that job only — with a round's candidates screened at once, dozens wait
 * together, and each wake-up is two queries.
 *
 * @module
 */
import pg from 'pg';
import { connectPatiently } from './connections.ts';
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

/** Connects (patiently, through a short outage) and listens on `channel`; errors of the connection go to `log`. */
export async function listenToQueue(
  target: PostgresTarget,
  channel: string,
  log: ((message: string) => void) | undefined,
): Promise<QueueListener> {
  const waiters = new Map<() => void, ReadonlySet<string>>();
  const listener = await connectPatiently(target, async () => {
    const client = new pg.Client({ connectionString: target.connectionString });
    client.on('error', (error) => log?.(`job queue: the listening connection failed: ${error.message}`));
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  });
  listener.on('notification', (message) => wakeFor(waiters, message.payload));
  await listener.query(`listen ${channel}`);
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
      for (const wake of [...waiters.keys()]) wake();
      await listener.end().catch(() => undefined);
    },
  };
}
