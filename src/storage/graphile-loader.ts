/**
 * graphile-worker, loaded on first use, with connection losses added to the
 * errors it retries its own statements on.
 *
 * @module
 */

/** graphile-worker, loaded when first needed (a CommonJS module: its exports are on `default` when imported from an ES module bundle). */
export async function graphile(): Promise<typeof import('graphile-worker')> {
  const loaded = (await import('graphile-worker')) as typeof import('graphile-worker') & {
    default?: typeof import('graphile-worker');
  };
  await retryLostConnections();
  return typeof loaded.run === 'function' ? loaded : loaded.default!;
}

/**
 * graphile-worker runs its own statements (take a job, complete it, fail it)
 * again on a new connection, with back-off, for the error codes of its table
 * `RETRYABLE_ERROR_CODES` (a serialization failure, a server starting, a
 * timeout); a connection reset or refused during a short outage is not among
 * them, and such a failure of a batched completion escaped as an unhandled
 * rejection that ended a busy worker with a raw stack trace (peer fault 13).
 * The connection losses are added, with the back-off of a starting server's
 * (0.1 s growing to 10 s, 100 tries).
 */
async function retryLostConnections(): Promise<void> {
  type Codes = Record<string, { minDelay: number; maxDelay: number } | undefined>;
  const lib = (await import('graphile-worker/dist/lib.js')) as {
    RETRYABLE_ERROR_CODES?: Codes;
    default?: { RETRYABLE_ERROR_CODES?: Codes };
  };
  const codes = lib.RETRYABLE_ERROR_CODES ?? lib.default?.RETRYABLE_ERROR_CODES;
  if (codes === undefined) return;
  for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', '57P01', '08006', '08003'])
    codes[code] ??= { minDelay: 100, maxDelay: 10_000 };
}
