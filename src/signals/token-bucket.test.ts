import { describe, expect, it } from 'vitest';
import { createTokenBucketLimiter } from './token-bucket.ts';

describe('the token bucket', () => {
  it('allows a burst, refuses beyond it with Retry-After, refills over time, per client', () => {
    let nowMs = 0;
    const limiter = createTokenBucketLimiter({ ratePerSecond: 2, burst: 3, nowMs: () => nowMs });
    expect([1, 2, 3].map(() => limiter.take('a').allowed)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.take('b').allowed).toBe(true);
    nowMs = 500;
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    nowMs = 10_000;
    expect([1, 2, 3, 4].map(() => limiter.take('a').allowed)).toEqual([true, true, true, false]);
  });

  it('keeps at most maxClients buckets', () => {
    const limiter = createTokenBucketLimiter({ ratePerSecond: 1, burst: 1, maxClients: 2, nowMs: () => 0 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('c');
    expect(limiter.take('a').allowed).toBe(true);
  });

  it('refuses nonsense settings', () => {
    expect(() => createTokenBucketLimiter({ ratePerSecond: 0, burst: 1 })).toThrow(RangeError);
  });
});
