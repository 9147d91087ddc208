import { describe, expect, it } from 'vitest';
import { throttleShared } from './shared-throttle.ts';

describe('throttleShared', () => {
  it('runs the work once for callers that ask while it runs, and not again within the interval', async () => {
    let clock = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    const sweep = throttleShared(
      () =>
        new Promise<void>((resolve) => {
          runs += 1;
          release = resolve;
        }),
      1_000,
      () => clock,
    );
    const first = sweep();
    const second = sweep();
    expect(second).toBe(first);
    expect(runs).toBe(1);
    release();
    await first;
    clock = 999;
    await sweep();
    expect(runs).toBe(1);
    clock = 1_000;
    const third = sweep();
    expect(runs).toBe(2);
    release();
    await third;
  });

  it('gives the shared run’s error to every caller of that run, and runs again after the interval', async () => {
    let clock = 0;
    let fail = true;
    const sweep = throttleShared(
      async () => {
        if (fail) throw new Error('connection lost');
      },
      1_000,
      () => clock,
    );
    const outcomes = await Promise.allSettled([sweep(), sweep()]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    clock = 1_000;
    await expect(sweep()).resolves.toBeUndefined();
  });
});
