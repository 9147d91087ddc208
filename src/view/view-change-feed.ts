/**
 * The viewer's change notification (`GET /api/events`): one poller of the
 * notebook's change fingerprint (src/view/notebook-version.ts) for every open
 * event stream, so the pages redraw while a run is in progress.
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { StudyDatabase } from '../storage/study-database.ts';
import { notebookVersion } from './notebook-version.ts';

/** How often an open event stream sends a comment so proxies keep it open, in milliseconds. */
const KEEP_ALIVE_MS = 15_000;

/** The poller and the event streams it feeds. */
export interface ChangeFeed {
  /** Looks for a change now (after a write); does nothing while a look runs or no stream is open. */
  poll(): Promise<void>;
  /** The `GET /api/events` response: a `hello` event with the fingerprint, then a `change` event at each change. */
  stream(context: Context): Response;
  /** Stops the poller and ends the open streams. */
  close(): void;
}

/** Starts the poller (every `pollIntervalMs`; the timer does not hold the process open). */
export function createChangeFeed(db: StudyDatabase, pollIntervalMs: number): ChangeFeed {
  const listeners = new Set<(version: string) => void>();
  const closers = new Set<() => void>();
  let lastVersion: string | null = null;
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling || listeners.size === 0) return;
    polling = true;
    try {
      const version = await notebookVersion(db);
      if (version !== lastVersion) {
        lastVersion = version;
        for (const listener of listeners) listener(version);
      }
    } catch {
      // the database is busy or gone for a moment: look again at the next tick
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), pollIntervalMs);
  timer.unref();
  const stream = (context: Context): Response =>
    streamSSE(context, async (events) => {
      let open = true;
      const finished = new Promise<void>((resolve) => {
        const end = (): void => {
          open = false;
          listeners.delete(send);
          closers.delete(end);
          resolve();
        };
        closers.add(end);
        events.onAbort(end);
      });
      const send = (version: string): void => {
        if (open) void events.writeSSE({ event: 'change', data: version }).catch(() => undefined);
      };
      listeners.add(send);
      const current = lastVersion ?? (await notebookVersion(db).catch(() => 'unknown'));
      lastVersion ??= current;
      await events.writeSSE({ event: 'hello', data: current });
      const keepAlive = setInterval(() => {
        if (open) void events.write(': keep-alive\n\n').catch(() => undefined);
      }, KEEP_ALIVE_MS);
      await finished;
      clearInterval(keepAlive);
    });
  return {
    poll,
    stream,
    close: () => {
      clearInterval(timer);
      for (const end of [...closers]) end();
    },
  };
}
