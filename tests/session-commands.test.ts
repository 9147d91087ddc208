/**
 * Every CLI command with a session goes through the one session runner
 * (src/cli/session/session-runner.ts): read from the sources (no command
 * takes a lease with a heartbeat, listens to SIGINT or SIGTERM, or watches
 * the output pipe itself), and seen from outside — SIGTERM while three
 * different commands wait for a study held by another process gives each
 * the same report and the same exit code, and leaves the holder's lease.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/session/exit-codes.ts';
import { openDatabase } from '../src/storage/database.ts';
import { acquireLease, listLeases } from '../src/storage/lease.ts';
import { databaseFile, finished, makeStudy, ROOT, spawnKloop, waitForLine } from './reliability-fixture.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const CLI = path.join(ROOT, 'src/cli');

/** Every source module of src/cli/ outside the session runner's folder, as paths relative to src/cli/. */
function commandModules(): string[] {
  return readdirSync(CLI, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.startsWith('session'))
    .sort();
}

/**
 * The two commands that hold the lease for a short step without a session:
 * `kloop reset` keeps its lease in the notebook it moves aside (no heartbeat
 * could follow it), `kloop migrate-storage` holds the source notebook while it
 * copies it.
 */
const LEASE_WITHOUT_SESSION = ['commands/migrate-storage.ts', 'commands/reset.ts'];

/** The modules whose commands hold a study or run until stopped: each runs its session through runSession. */
const SESSION_COMMANDS = [
  'commands/calibrate.ts',
  'commands/corpus-writes.ts',
  'commands/loop-a.ts',
  'commands/online-run.ts',
  'commands/online-schedule.ts',
  'commands/run-offline.ts',
  'commands/schedule.ts',
  'commands/worker.ts',
];

describe('the session plumbing of the commands', () => {
  it('lives in the session runner: no command listens to signals, watches the output pipe or keeps a heartbeat itself', () => {
    const offenders = commandModules().flatMap((module) => {
      const text = readFileSync(path.join(CLI, module), 'utf8');
      return [
        /process\.(on|once)\('SIG(INT|TERM)'/.test(text) ? `${module}: listens to a signal` : [],
        /onOutputClosed\(/.test(text) ? `${module}: watches the output pipe` : [],
        /startLeaseHeartbeat\(/.test(text) ? `${module}: keeps a heartbeat` : [],
        /acquireLease\(/.test(text) && !LEASE_WITHOUT_SESSION.includes(module) ? `${module}: takes a lease` : [],
      ].flat();
    });
    expect(offenders).toEqual([]);
  });

  it('every session command runs through runSession', () => {
    for (const module of SESSION_COMMANDS)
      expect(readFileSync(path.join(CLI, module), 'utf8'), module).toMatch(/\brunSession\(/);
  });
});

describe('SIGTERM while waiting for a study held by another process', () => {
  it('kloop run, run --loop A and corpus promote --wait: the same report, exit 130, the holder keeps its lease', async () => {
    const study = makeStudy(cleanups, { maxExperiments: 0 });
    const db = await openDatabase(databaseFile(study));
    try {
      // A live holder on another host (its heartbeat ahead of the clock: fresh however slow the test).
      const ahead = () => new Date(Date.now() + 120_000);
      await acquireLease(db, { studyKey: path.resolve(study), hostname: 'elsewhere', pid: 4242, now: ahead });
      const commands = [
        ['run', study, '--wait'],
        ['run', study, '--loop', 'A', '--wait'],
        ['corpus', 'promote', study, 'any-id', '--to', 'anchor', '--by', 'test', '--wait'],
      ];
      const results = await Promise.all(
        commands.map(async (args) => {
          const child = spawnKloop(args);
          const done = finished(child);
          await waitForLine(child, /waiting for it to finish \(--wait\)$/);
          child.kill('SIGTERM');
          return done;
        }),
      );
      for (const [index, result] of results.entries()) {
        const lines = result.stderr.trim().split('\n');
        expect({ command: commands[index]!.slice(0, 2), code: result.code, lines }).toEqual({
          command: commands[index]!.slice(0, 2),
          code: EXIT.interrupted,
          lines: [
            expect.stringMatching(
              /^kloop: study is being run by pid 4242 on host elsewhere since \S+; waiting for it to finish \(--wait\)$/,
            ),
            'kloop: interrupted while waiting for the study; nothing was run',
          ],
        });
        expect(result.stdout).toBe('');
      }
      expect((await listLeases(db)).map((lease) => lease.pid)).toEqual([4242]);
    } finally {
      await db.destroy();
    }
  }, 120_000);
});
