/**
 * A token-bucket rate limiter per client key (the endpoint keys clients by
 * remote address). Each client has a bucket of `burst` tokens refilled at
 * `ratePerSecond`; a request takes one token or is refused with the seconds
 * until one is available (`Retry-After`).
 *
 * Memory is bounded: at most `maxClients` buckets are kept; when full, the
 * least recently used bucket is dropped (its client starts again with a full
 * bucket, which errs on the side of serving).
 *
 * Source: the classic token bucket (e.g. RFC 2697's committed burst).
 */

/** Settings of {@link createTokenBucketLimiter}. */
export interface TokenBucketOptions {
  /** Tokens added per second, > 0. */
  ratePerSecond: number;
  /** Bucket capacity (largest burst), ≥ 1. */
  burst: number;
  /** Most buckets kept. Default 10 000. */
  maxClients?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  nowMs?: () => number;
}

/** The outcome of one request. */
export type TokenBucketDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

/** A per-client rate limiter. */
export interface TokenBucketLimiter {
  take(client: string): TokenBucketDecision;
}

/** Creates a per-client token-bucket limiter. */
export function createTokenBucketLimiter(options: TokenBucketOptions): TokenBucketLimiter {
  if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be above 0');
  if (!(options.burst >= 1)) throw new RangeError('burst must be at least 1');
  const nowMs = options.nowMs ?? Date.now;
  const maxClients = options.maxClients ?? 10_000;
  const buckets = new Map<string, { tokens: number; updatedMs: number }>();
  return {
    take(client) {
      const now = nowMs();
      let bucket = buckets.get(client);
      if (bucket === undefined) {
        bucket = { tokens: options.burst, updatedMs: now };
        if (buckets.size >= maxClients) {
          const oldest = buckets.keys().next();
          if (oldest.done !== true) buckets.delete(oldest.value);
        }
      } else {
        buckets.delete(client);
        const elapsedSeconds = Math.max(0, now - bucket.updatedMs) / 1000;
        bucket.tokens = Math.min(options.burst, bucket.tokens + elapsedSeconds * options.ratePerSecond);
        bucket.updatedMs = now;
      }
      buckets.set(client, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true, remaining: Math.floor(bucket.tokens) };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / options.ratePerSecond)) };
    },
  };
}
