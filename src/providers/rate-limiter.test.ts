import { describe, expect, it } from 'vitest';
import { createAdaptiveLimiter } from './rate-limiter.ts';

describe('createAdaptiveLimiter', () => {
  it('holds at most `limit` calls in flight', async () => {
    const limiter = createAdaptiveLimiter({ maxConcurrency: 2 });
    const first = await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const waiting = limiter.acquire().then((release) => {
      third = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(third).toBe(false);
    expect(limiter.active).toBe(2);
    first();
    (await waiting)();
    expect(third).toBe(true);
  });

  it('halves on 429 (once per second), pauses new calls, then recovers one step per `limit` successes', async () => {
    let now = 0;
    const limiter = createAdaptiveLimiter({ maxConcurrency: 8, now: () => now });
    limiter.rateLimited(0);
    expect(limiter.limit).toBe(4);
    limiter.rateLimited(0);
    expect(limiter.limit).toBe(4); // same burst of 429s: halved once
    now = 1500;
    limiter.rateLimited(0);
    expect(limiter.limit).toBe(2);
    for (let index = 0; index < 2; index += 1) limiter.succeeded();
    expect(limiter.limit).toBe(3);
    for (let index = 0; index < 3; index += 1) limiter.succeeded();
    expect(limiter.limit).toBe(4);
    for (let index = 0; index < 100; index += 1) limiter.succeeded();
    expect(limiter.limit).toBe(8);
    now = 3000;
    for (let index = 0; index < 10; index += 1) {
      now += 1000;
      limiter.rateLimited(0);
    }
    expect(limiter.limit).toBe(1);
  });

  it('waits for the Retry-After pause before granting a slot', async () => {
    const limiter = createAdaptiveLimiter({ maxConcurrency: 4 });
    limiter.rateLimited(120);
    const started = Date.now();
    const release = await limiter.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    release();
  });

  it('rejects a waiting acquire when its signal aborts', async () => {
    const limiter = createAdaptiveLimiter({ maxConcurrency: 1 });
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});
