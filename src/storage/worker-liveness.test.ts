/**
 * Worker liveness (src/storage/worker-liveness.ts) and the sweep's record of
 * a gone worker (src/storage/worker-sweep.ts): on the coordinator's host the
 * process table decides (a paused worker is late, not gone: peer fault 9);
 * elsewhere the heartbeat's age; kills of a job's worker are counted in a row.
 */
import { describe, expect, it } from 'vitest';
import { workerGoneReason } from './worker-liveness.ts';
import { workerGoneAttempts, workerGoneError } from './worker-sweep.ts';

const now = new Date('2026-12-07T12:00:30.000Z');
const lastBeat = '2026-12-07T12:00:00.000Z'; // 30 s ago: past the 15 s stale delay

describe('workerGoneReason', () => {
  it('a worker of this host whose process exists is alive, however old its heartbeat (a SIGSTOP pause)', () => {
    expect(
      workerGoneReason(
        { hostname: 'here', pid: 41, heartbeatAt: lastBeat },
        { now, hostname: 'here', isProcessAlive: () => true },
      ),
    ).toBeNull();
  });
  it('a worker of this host whose process is gone is gone at once', () => {
    expect(
      workerGoneReason(
        { hostname: 'here', pid: 41, heartbeatAt: now.toISOString() },
        { now, hostname: 'here', isProcessAlive: () => false },
      ),
    ).toBe('process 41 no longer exists on this host');
  });
  it('a worker of another host is gone when its heartbeat is older than the stale delay, not before', () => {
    const judge = { now, hostname: 'here', isProcessAlive: () => true };
    expect(workerGoneReason({ hostname: 'there', pid: 41, heartbeatAt: lastBeat }, judge)).toBe(
      'no heartbeat for 30 s (last 2026-12-07T12:00:00.000Z; stale after 15 s)',
    );
    expect(workerGoneReason({ hostname: 'there', pid: 41, heartbeatAt: '2026-12-07T12:00:16.000Z' }, judge)).toBeNull();
  });
});

describe('workerGoneError', () => {
  it('counts the attempts that ended with the worker gone, in a row', () => {
    const first = workerGoneError(null, 'process 41 no longer exists on this host');
    expect(first).toBe('worker gone on 1 attempt(s): process 41 no longer exists on this host');
    const second = workerGoneError(first, 'process 42 no longer exists on this host');
    expect(workerGoneAttempts(second)).toEqual({ count: 2, reason: 'process 42 no longer exists on this host' });
    // An attempt that failed otherwise (the executor's error) starts the count again.
    expect(workerGoneError('Error: 3 of 4 result(s) failed transiently', 'gone')).toBe(
      'worker gone on 1 attempt(s): gone',
    );
    expect(workerGoneAttempts('Error: timeout')).toBeUndefined();
    expect(workerGoneAttempts(null)).toBeUndefined();
  });
});
