/**
 * An adaptive concurrency limiter for model calls (AIMD, as in TCP congestion
 * control): at most `limit` calls run at once; an HTTP 429 halves the limit
 * (multiplicative decrease, at most once per second) and pauses every new
 * call until the server's `Retry-After`; afterwards each `limit` successful
 * calls in a row raise the limit by one (additive increase) back up to the
 * configured maximum.
 */

export interface AdaptiveLimiterOptions {
  /** Most calls in flight, and the ceiling of recovery. Default 8. */
  maxConcurrency?: number;
  /** Pause after a 429 without `Retry-After`, in milliseconds. Default 1000. */
  defaultPauseMs?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: () => number;
}

export interface AdaptiveLimiter {
  /** The configured most calls in flight: the ceiling the limit recovers to. */
  readonly maxConcurrency: number;
  /** Current concurrency limit, in [1, maxConcurrency]. */
  readonly limit: number;
  /** Calls holding a slot now. */
  readonly active: number;
  /**
   * Waits for a slot (and for any rate-limit pause to end); returns the
   * function that releases it. Rejects with the signal's reason when aborted
   * while waiting.
   */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Reports an HTTP 429: halves the limit and pauses new calls for `retryAfterMs` (or the default pause). */
  rateLimited(retryAfterMs?: number): void;
  /** Reports a successful call (gradual recovery). */
  succeeded(): void;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * Queues a waiter for a slot (removed from the queue, rejecting with the
 * signal's reason, if the signal aborts first) and lets `pump` serve the queue.
 */
function waitForSlot(queue: Waiter[], signal: AbortSignal | undefined, pump: () => void): Promise<() => void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const waiter: Waiter = { resolve, reject };
    if (signal !== undefined) {
      waiter.signal = signal;
      waiter.onAbort = () => {
        const index = queue.indexOf(waiter);
        if (index !== -1) queue.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
    }
    queue.push(waiter);
    pump();
  });
}

/** Creates an {@link AdaptiveLimiter}. */
export function createAdaptiveLimiter(options: AdaptiveLimiterOptions = {}): AdaptiveLimiter {
  const maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency ?? 8));
  const defaultPauseMs = options.defaultPauseMs ?? 1000;
  const now = options.now ?? Date.now;
  let limit = maxConcurrency;
  let active = 0;
  let pausedUntil = 0;
  let lastHalvedAt = -Infinity;
  let successes = 0;
  let timer: NodeJS.Timeout | undefined;
  const queue: Waiter[] = [];

  const makeRelease = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      pump();
    };
  };

  function pump(): void {
    const wait = pausedUntil - now();
    if (wait > 0) {
      if (timer === undefined && queue.length > 0) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, wait);
      }
      return;
    }
    while (active < limit && queue.length > 0) {
      const waiter = queue.shift()!;
      if (waiter.onAbort !== undefined) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      active += 1;
      waiter.resolve(makeRelease());
    }
  }

  return {
    maxConcurrency,
    get limit() {
      return limit;
    },
    get active() {
      return active;
    },
    acquire(signal) {
      return waitForSlot(queue, signal, pump);
    },
    rateLimited(retryAfterMs) {
      const at = now();
      if (at - lastHalvedAt >= 1000) {
        limit = Math.max(1, Math.floor(limit / 2));
        lastHalvedAt = at;
      }
      successes = 0;
      pausedUntil = Math.max(pausedUntil, at + Math.max(0, retryAfterMs ?? defaultPauseMs));
      pump();
    },
    succeeded() {
      if (limit >= maxConcurrency) return;
      successes += 1;
      if (successes >= limit) {
        limit += 1;
        successes = 0;
        pump();
      }
    },
  };
}
