import { describe, expect, it } from 'vitest';
import { createSemaphore } from './semaphore.ts';

describe('createSemaphore', () => {
  it('grants up to the limit at once, then serves waiters in arrival order', async () => {
    const semaphore = createSemaphore(2);
    const first = await semaphore.acquire();
    const second = await semaphore.acquire();
    expect(semaphore.active).toBe(2);
    const order: string[] = [];
    const third = semaphore.acquire().then((release) => {
      order.push('third');
      return release;
    });
    const fourth = semaphore.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    first(); // a second call gives nothing back twice
    const releaseThird = await third;
    expect(order).toEqual(['third']);
    expect(semaphore.active).toBe(2);
    second();
    (await fourth)();
    releaseThird();
    expect(order).toEqual(['third', 'fourth']);
    expect(semaphore.active).toBe(0);
  });

  it('rejects a waiter whose signal is aborted, and skips it', async () => {
    const semaphore = createSemaphore(1);
    const held = await semaphore.acquire();
    const controller = new AbortController();
    const reason = new Error('stop');
    const waiting = semaphore.acquire(controller.signal);
    const next = semaphore.acquire();
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    held();
    (await next)();
    expect(semaphore.active).toBe(0);
    await expect(semaphore.acquire(controller.signal)).rejects.toBe(reason);
    expect(() => createSemaphore(0)).toThrow(RangeError);
  });
});
