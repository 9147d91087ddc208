/**
 * A counting semaphore: at most `limit` holders at once, waiters served in
 * arrival order (FIFO). The command executor runs at most `concurrency`
 * programs at once with one.
 *
 * @module
 */
import { onAbort } from './abort-subscriptions.ts';

/** A counting semaphore. */
export interface Semaphore {
  /** Most holders at once (≥ 1). */
  readonly limit: number;
  /** Holders now. */
  readonly active: number;
  /**
   * Waits for a slot; resolves with the function that gives it back (calling
   * it twice gives it back once). Rejects with the signal's reason when the
   * signal is aborted before a slot is free (already aborted: at once).
   */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

interface Waiter {
  grant: () => void;
}

/**
 * Creates a {@link Semaphore}.
 *
 * @param limit most holders at once; an integer ≥ 1
 * @throws RangeError when `limit` is not an integer ≥ 1
 * @example
 * ```ts
 * const semaphore = createSemaphore(2);
 * const release = await semaphore.acquire();
 * try { await work(); } finally { release(); }
 * ```
 */
export function createSemaphore(limit: number): Semaphore {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`a semaphore needs a limit that is an integer ≥ 1, not ${limit}`);
  let active = 0;
  const queue: Waiter[] = [];

  const releaser = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      const next = queue.shift();
      if (next !== undefined) next.grant();
    };
  };

  return {
    limit,
    get active() {
      return active;
    },
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (active < limit) {
        active += 1;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve, reject) => {
        // Many waiters share one signal: one listener on it for all of them (abort-subscriptions.ts).
        const unsubscribe =
          signal !== undefined
            ? onAbort(signal, () => {
                const index = queue.indexOf(waiter);
                if (index !== -1) queue.splice(index, 1);
                reject(signal.reason);
              })
            : () => undefined;
        const waiter: Waiter = {
          grant: () => {
            unsubscribe();
            active += 1;
            resolve(releaser());
          },
        };
        queue.push(waiter);
      });
    },
  };
}
