/**
 * The session runner (./session-runner.ts), in this process: SIGTERM, SIGINT
 * and a closed output pipe end a session the same way (the signal aborted,
 * the report printed, exit 130, the lease given back); a second interrupt
 * quits at once; a study held by another process is exit 3. The commands
 * themselves are checked in tests/session-commands.test.ts.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { openDatabase } from '../../storage/database.ts';
import { acquireLease, listLeases, releaseLease } from '../../storage/lease.ts';
import { watchOutputStreams } from './closed-output.ts';
import { EXIT } from './exit-codes.ts';
import type { SessionContext } from './session-runner.ts';
import { runSession } from './session-runner.ts';

let db: StudyDatabase;
let stderr: string[];
let stdout: string[];

beforeEach(async () => {
  db = await openDatabase(':memory:');
  stderr = [];
  stdout = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => stderr.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => stdout.push(String(chunk)) > 0);
});

afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = 0;
  await db.destroy();
});

/** A session whose body waits until it is asked to stop, `interrupt` being called once the body runs. */
async function interruptedSession(interrupt: () => void): Promise<{ context: SessionContext; closed: boolean }> {
  let seen: SessionContext | undefined;
  let closed = false;
  await runSession(
    {
      lease: { db, studyKey: '/study' },
      json: true,
      interruptNotice: 'kloop: interrupted — test',
      interruptedReport: () => ({ message: 'interrupted: nothing stored', json: { interrupted: true } }),
      graceMs: null,
      close: async () => {
        closed = true;
      },
    },
    async (context) => {
      seen = context;
      expect(await listLeases(db)).toHaveLength(1);
      setImmediate(interrupt);
      await context.untilStopped();
      throw context.signal.reason;
    },
  );
  return { context: seen!, closed };
}

describe('runSession', () => {
  const interrupts: Array<[string, () => void]> = [
    ['SIGTERM', () => process.emit('SIGTERM')],
    ['SIGINT (Ctrl-C)', () => process.emit('SIGINT')],
  ];
  for (const [name, send] of interrupts) {
    it(`${name}: the body's signal aborts, its report is printed, exit 130, the lease given back, the session closed`, async () => {
      const before = process.listenerCount('SIGTERM');
      const { context, closed } = await interruptedSession(send);
      expect(context.interrupted).toBe(true);
      expect(context.signal.aborted).toBe(true);
      expect(process.exitCode).toBe(EXIT.interrupted);
      expect(stderr.join('')).toBe('kloop: interrupted — test\nkloop: interrupted: nothing stored\n');
      expect(JSON.parse(stdout.join(''))).toEqual({ interrupted: true });
      expect(await listLeases(db)).toEqual([]);
      expect(closed).toBe(true);
      expect(process.listenerCount('SIGTERM')).toBe(before); // its handlers removed
    });
  }

  it('a closed output pipe winds the session down exactly as SIGTERM does', async () => {
    const stream = new EventEmitter() as unknown as NodeJS.WriteStream;
    watchOutputStreams([stream]);
    const closedPipe = await interruptedSession(() =>
      stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
    );
    const pipeOutput = { stderr: stderr.join(''), stdout: stdout.join(''), exitCode: process.exitCode };
    stderr.length = 0;
    stdout.length = 0;
    process.exitCode = 0;
    const terminated = await interruptedSession(() => process.emit('SIGTERM'));
    expect(pipeOutput).toEqual({ stderr: stderr.join(''), stdout: stdout.join(''), exitCode: process.exitCode });
    expect(closedPipe.closed && terminated.closed).toBe(true);
    expect(await listLeases(db)).toEqual([]);
  });

  it('a second interrupt ends the process at once with 130, the lease given back first', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    await runSession({ lease: { db, studyKey: '/study' }, graceMs: null }, async (context) => {
      process.emit('SIGINT');
      process.emit('SIGINT');
      expect(context.interrupted).toBe(true);
      return EXIT.interrupted;
    });
    expect(exit).toHaveBeenCalledWith(EXIT.interrupted);
  });

  it('a session that wound down within its grace period leaves no timer to end the process later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
      await runSession({ lease: { db, studyKey: '/study' }, graceMs: 50 }, async (context) => {
        process.emit('SIGINT');
        expect(context.interrupted).toBe(true);
        return EXIT.interrupted;
      });
      // A host running kloop in-process (the library, a test) lives on after the session: no exit 50 ms later.
      await vi.advanceTimersByTimeAsync(5_000);
      expect(exit).not.toHaveBeenCalled();
      expect(process.exitCode).toBe(EXIT.interrupted);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the body returns its exit code; a session that stops on its own prints no interrupt line', async () => {
    await runSession({ lease: { db, studyKey: '/study' } }, async () => EXIT.failed);
    expect(process.exitCode).toBe(EXIT.failed);
    expect(stderr).toEqual([]);
    expect(await listLeases(db)).toEqual([]);
  });

  it('a study held by another process: exit 3 (study_busy), the body never runs, the session closed', async () => {
    const holder = await acquireLease(db, {
      studyKey: '/study',
      ownerId: 'elsewhere:1',
      hostname: 'elsewhere',
      pid: 1,
    });
    let ran = false;
    let closed = false;
    const outcome = runSession(
      {
        lease: { db, studyKey: '/study' },
        close: async () => {
          closed = true;
        },
      },
      async () => {
        ran = true;
        return EXIT.ok;
      },
    );
    await expect(outcome).rejects.toMatchObject({ code: 'study_busy', exitCode: EXIT.studyBusy });
    expect(ran).toBe(false);
    expect(closed).toBe(true);
    await releaseLease(db, holder);
  });

  it('an interrupt while waiting for the study: nothing is run, exit 130', async () => {
    const holder = await acquireLease(db, {
      studyKey: '/study',
      ownerId: 'elsewhere:1',
      hostname: 'elsewhere',
      pid: 1,
    });
    let ran = false;
    setTimeout(() => process.emit('SIGTERM'), 50);
    await runSession({ lease: { db, studyKey: '/study', wait: true } }, async () => {
      ran = true;
      return EXIT.ok;
    });
    expect(ran).toBe(false);
    expect(process.exitCode).toBe(EXIT.interrupted);
    expect(stderr.join('')).toContain('kloop: interrupted while waiting for the study; nothing was run');
    await releaseLease(db, holder);
  });
});
