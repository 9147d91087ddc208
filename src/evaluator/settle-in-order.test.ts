import { describe, expect, it } from 'vitest';
import { settleInOrder } from './settle-in-order.ts';

const later = <T>(ms: number, value: T, fail = false): Promise<T> =>
  new Promise((resolve, reject) => setTimeout(() => (fail ? reject(value) : resolve(value)), ms));

describe('settleInOrder', () => {
  it('gives the values in the order of the work, whichever ends first', async () => {
    await expect(settleInOrder([later(20, 'optimization'), later(1, 7)])).resolves.toEqual(['optimization', 7]);
  });

  it('throws the failure of the first in order, not the first to fail, once every one has settled', async () => {
    let settled = 0;
    const track = <T>(promise: Promise<T>): Promise<T> => promise.finally(() => (settled += 1));
    await expect(
      settleInOrder([
        track(later(30, new Error('first in order'), true)),
        track(later(1, new Error('first to fail'), true)),
        track(later(50, 'slow')),
      ]),
    ).rejects.toThrow('first in order');
    expect(settled).toBe(3);
  });
});
