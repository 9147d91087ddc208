/**
 * One writer per study (DESIGN.md §7): two `kloop run` on one study at once —
 * exactly one writes, the other refuses with the documented message and exit
 * code 3, or with `--wait` waits and then proceeds; a dead run's lease is
 * taken over; read-only commands work while a run writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { acquireLease } from '../src/storage/lease.ts';
import {
  ROOT,
  databaseFile,
  finished,
  makeStudy,
  pauseLeaseHolder,
  runKloop,
  snapshotDatabase,
  spawnKloop,
  waitForLine,
} from './reliability-fixture.ts';

// The tests run concurrently (each on its own study): clean up once all are done.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/**
 * Each test waits only on what the processes print or write, never on time;
 * this bound only ends a test that hangs. The tests are CPU-bound (every run
 * evaluates the study): at 25 runnable processes on 2 cores a single
 * `kloop run` of this study took 19 s, and the four CLI tests, which run at
 * once, passed 180 s on the code before and after the lease changes alike.
 */
const CLI_TEST_TIMEOUT_MS = 600_000;

const BUSY = /^kloop: study is being run by pid (\d+) on host (\S+) since (\S+); use --wait to wait$/;

/** What a contender (tests/lease-contender.mjs) said and how it ended. */
interface Contender {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line after `ready`: `{"acquired":pid}` or `{"error":…}`. */
  outcome: Promise<string>;
  exited: Promise<number | null>;
}

function startContender(file: string, studyKey: string): { contender: Contender; ready: Promise<void> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'tests/lease-contender.mjs'), file, studyKey], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let onReady!: () => void;
  let onOutcome!: (line: string) => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const outcome = new Promise<string>((resolve) => (onOutcome = resolve));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    if (line === 'ready') onReady();
    else if (lines.length === 2) onOutcome(line);
  });
  void exited.then(() => onOutcome(lines[1] ?? '(ended without a word)'));
  return { contender: { child, lines, outcome, exited }, ready };
}

/**
 * Starts `count` contenders for one lease, lets them all go at once (each
 * opens the database, creating and migrating it if new, then takes the
 * lease), and waits until every one has either taken the lease or ended —
 * the holder keeps it until then, so the others surely meet it. Then the
 * holders give it back. No timing: only the contenders' own words.
 */
async function contend(
  file: string,
  studyKey: string,
  count: number,
): Promise<{
  holders: number[];
  losers: Array<{ code: number | null; said: { error: { code: string; message: string } } }>;
}> {
  const started = Array.from({ length: count }, () => startContender(file, studyKey));
  const contenders = started.map((entry) => entry.contender);
  try {
    await Promise.all(started.map((entry) => entry.ready));
    for (const { child } of contenders) child.stdin!.write('go\n');
    const outcomes = await Promise.all(contenders.map((contender) => contender.outcome));
    const holders: number[] = [];
    const losers = [];
    for (const [index, line] of outcomes.entries()) {
      // A line that is not JSON (a crash's words) is kept as the message of an error coded `no_answer`.
      const said = (line.startsWith('{') ? JSON.parse(line) : { error: { code: 'no_answer', message: line } }) as {
        acquired?: number;
        error?: { code: string; message: string };
      };
      if (said.acquired !== undefined) holders.push(said.acquired);
      else
        losers.push({
          code: await contenders[index]!.exited,
          said: { error: said.error ?? { code: 'no_answer', message: line } },
        });
    }
    return { holders, losers };
  } finally {
    for (const { child } of contenders) if (child.exitCode === null) child.stdin!.end('release\n');
    const codes = await Promise.all(contenders.map((contender) => contender.exited));
    expect(codes.filter((code) => code !== 0 && code !== 3)).toEqual([]);
  }
}

describe.concurrent('one writer per study', () => {
  it(
    'two runs at once: exactly one writes, the other exits 3 naming the holder',
    async () => {
      const study = makeStudy(cleanups, { maxExperiments: 4 });
      const children = [
        spawnKloop(['run', study, '--json', '--quiet']),
        spawnKloop(['run', study, '--json', '--quiet']),
      ];
      const done = children.map((child) => finished(child));
      // Both start at once (and migrate the new database at once); hold whichever took the lease until the other has decided.
      const holder = await pauseLeaseHolder(study, children);
      const holderPid = holder.pid;
      const winner = children.findIndex((child) => child.pid === holderPid);
      expect(winner).toBeGreaterThanOrEqual(0);
      let loser;
      try {
        loser = await done[1 - winner]!;
      } finally {
        holder.resume();
      }
      const winnerResult = await done[winner]!;
      expect(winnerResult.code, winnerResult.stderr).toBe(0);
      expect(loser.code, loser.stderr).toBe(3);
      const match = BUSY.exec(loser.stderr.trim());
      expect(match, loser.stderr).not.toBeNull();
      expect(Number(match![1])).toBe(holderPid);
      expect(match![2]).toBe(hostname());
      expect(Number.isNaN(Date.parse(match![3]!))).toBe(false);
      // With --json the refusal is also one JSON error object on stdout.
      expect(JSON.parse(loser.stdout)).toEqual({
        error: { code: 'study_busy', message: loser.stderr.trim().replace(/^kloop: /, '') },
      });
      const snapshot = snapshotDatabase(study);
      expect(snapshot.runs).toEqual([{ stopReason: 'max_experiments', ended: true }]); // one writer, one run
      expect(snapshot.leases).toBe(0);
      expect((JSON.parse(winnerResult.stdout) as { exitCode: number }).exitCode).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'six lease acquisitions at once, by six processes, on a new study and on one whose holder died: exactly one holds, five are busy (exit 3), never an SQLite error',
    async () => {
      const directory = mkdtempSync(path.join(tmpdir(), 'kloop-lease-stress-'));
      cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
      const studyKey = path.join(directory, 'study');
      for (let round = 0; round < 2; round += 1) {
        // A new study database each round: the six create, migrate and take the lease at once.
        const file = path.join(directory, `round-${round}`, 'kloop.db');
        const { holders, losers } = await contend(file, studyKey, 6);
        expect(holders, JSON.stringify(losers)).toHaveLength(1);
        expect(losers).toHaveLength(5);
        for (const loser of losers) {
          expect(loser.code, loser.said.error.message).toBe(3);
          expect(loser.said.error.code).toBe('study_busy');
          const match = BUSY.exec(`kloop: ${loser.said.error.message}`);
          expect(match, loser.said.error.message).not.toBeNull();
          expect(Number(match![1])).toBe(holders[0]);
          expect(match![2]).toBe(hostname());
        }
        const sqlite = new Database(file, { readonly: true });
        expect(sqlite.prepare('select count(*) as n from leases').get()).toEqual({ n: 0 }); // given back
        expect(sqlite.prepare('select count(*) as n from kysely_migration').get()).toEqual({
          n: Object.keys((await import('../src/storage/migrations.ts')).MIGRATIONS).length,
        });
        sqlite.close();
      }
      // The same on an existing database whose lease a dead process left: exactly one takes it over.
      const file = path.join(directory, 'round-0', 'kloop.db');
      const gone = spawn(process.execPath, ['-e', '']);
      await new Promise((resolve) => gone.once('close', resolve));
      const sqlite = new Database(file);
      const at = new Date().toISOString();
      sqlite
        .prepare(
          'insert into leases (study_key, owner_id, hostname, pid, acquired_at, heartbeat_at) values (?, ?, ?, ?, ?, ?)',
        )
        .run(studyKey, `${hostname()}:${gone.pid}:dead`, hostname(), gone.pid, at, at);
      sqlite.close();
      const { holders, losers } = await contend(file, studyKey, 6);
      expect(holders, JSON.stringify(losers)).toHaveLength(1);
      expect(losers.map((loser) => [loser.code, loser.said.error.code])).toEqual(
        Array.from({ length: 5 }, () => [3, 'study_busy']),
      );
      for (const loser of losers)
        expect(loser.said.error.message).toMatch(new RegExp(`^study is being run by pid ${holders[0]} on host `));
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'with --wait the second run waits for the first, then proceeds',
    async () => {
      // The first is paused while it holds the lease (below), so a short study is enough for the overlap.
      const study = makeStudy(cleanups, { maxExperiments: 2 });
      const first = spawnKloop(['run', study]);
      const firstDone = finished(first);
      await waitForLine(first, /^run \d+:/); // the first holds the lease
      // Hold the first there until the second says it waits: the overlap is certain, however loaded the machine.
      const holder = await pauseLeaseHolder(study, [first]);
      expect(holder.pid).toBe(first.pid);
      let secondDone;
      try {
        const second = spawnKloop(['run', study, '--wait', '--json']);
        secondDone = finished(second);
        await waitForLine(second, /waiting for it to finish \(--wait\)/);
      } finally {
        holder.resume();
      }
      const second = await secondDone;
      const firstResult = await firstDone;
      expect(firstResult.code, firstResult.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toMatch(
        new RegExp(
          `kloop: study is being run by pid ${first.pid} on host \\S+ since \\S+; waiting for it to finish \\(--wait\\)`,
        ),
      );
      const report = JSON.parse(second.stdout) as { stopReason: string; thisRun: { experiments: number } };
      expect(report.stopReason).toBe('max_experiments');
      expect(report.thisRun.experiments).toBe(0); // the first run did the work; the second found it done
      const sqlite = new Database(databaseFile(study), { readonly: true });
      const runs = sqlite.prepare('select started_at, ended_at, stop_reason from runs order by id').all() as Array<{
        started_at: string;
        ended_at: string;
        stop_reason: string;
      }>;
      sqlite.close();
      expect(runs).toHaveLength(2);
      expect(runs[1]!.started_at >= runs[0]!.ended_at).toBe(true); // the second wrote only after the first ended
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a lease left by a dead process is taken over; a live one on another host is respected',
    async () => {
      const study = makeStudy(cleanups, { maxExperiments: 0 });
      const db = await openDatabase(databaseFile(study));
      // A live lease of another host (its heartbeat is ahead of the clock, so it stays fresh however slow the test).
      const ahead = () => new Date(Date.now() + 120_000);
      await acquireLease(db, { studyKey: path.resolve(study), hostname: 'elsewhere', pid: 4242, now: ahead });
      await db.destroy();
      const refused = await runKloop(['run', study, '--quiet']);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr.trim()).toMatch(
        /^kloop: study is being run by pid 4242 on host elsewhere since \S+; use --wait to wait$/,
      );
      expect(snapshotDatabase(study).runs).toEqual([]);

      // The same lease, but from a process of this host that no longer exists: taken over at once.
      const gone = spawn(process.execPath, ['-e', '']);
      await new Promise((resolve) => gone.once('close', resolve));
      const deadPid = gone.pid!;
      const sqlite = new Database(databaseFile(study));
      sqlite.prepare('update leases set hostname = ?, pid = ?').run(hostname(), deadPid);
      sqlite.close();
      const resumed = await runKloop(['run', study]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(new RegExp(`kloop: took over the lease of pid ${deadPid} on host ${hostname()}`));
      const snapshot = snapshotDatabase(study);
      expect(snapshot.runs).toEqual([{ stopReason: 'max_experiments', ended: true }]);
      expect(snapshot.leases).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'history, show, status, doctor and eval --json read the study while a run holds it; calibrate is refused (exit 3)',
    async () => {
      // Enough decisions after the first that the writer is still running when it is paused.
      const study = makeStudy(cleanups, { maxExperiments: 6 });
      const writer = spawnKloop(['run', study]);
      const writerDone = finished(writer);
      await waitForLine(writer, /^ {2}#1 /); // an experiment is recorded; the run goes on
      // Pause the writer between two of its transactions, so the readers surely overlap its run.
      const holder = await pauseLeaseHolder(study, [writer]);
      expect(holder.pid).toBe(writer.pid);
      let readers;
      let calibrating;
      try {
        readers = await Promise.all([
          runKloop(['history', study, '--json']),
          runKloop(['show', study, '1', '--json']),
          runKloop(['status', study, '--json']),
          runKloop(['doctor', study, '--json']),
          runKloop(['eval', study, '--json', '--quiet']),
          runKloop(['eval', study, '--artifact', path.join(study, 'playbook.yaml'), '--json', '--quiet']),
        ]);
        // calibrate writes a calibration (τ of the running gate): refused like a second run, nothing stored.
        calibrating = await runKloop(['calibrate', study, '--json', '--quiet']);
        expect(writer.exitCode).toBeNull();
      } finally {
        holder.resume();
      }
      const writerResult = await writerDone;
      expect(writerResult.code, writerResult.stderr).toBe(0);
      for (const reader of readers) expect(reader.code, reader.stderr).toBe(0);
      expect(calibrating!.code, calibrating!.stderr).toBe(3);
      expect(JSON.parse(calibrating!.stdout)).toMatchObject({
        error: {
          code: 'study_busy',
          message: expect.stringMatching(new RegExp(`^study is being run by pid ${writer.pid} on host `)),
        },
      });
      const [history, show, status, doctor, active, seed] = readers.map(
        (reader) => JSON.parse(reader.stdout) as Record<string, unknown>,
      );
      expect((history!.experiments as unknown[]).length).toBeGreaterThan(0);
      expect(show!.id).toBe(1);
      expect(status).toBeDefined();
      const findings = doctor!.findings as Array<{ id: string; status: string; message: string }>;
      expect(findings.find((finding) => finding.id === 'database.lease')?.message).toMatch(
        new RegExp(`^a run is in progress: pid ${writer.pid} on host `),
      );
      expect(doctor!.healthy).toBe(true);
      for (const evaluation of [active, seed])
        expect(typeof (evaluation!.partitions as { optimization: { composite: number } }).optimization.composite).toBe(
          'number',
        );
      expect(snapshotDatabase(study).integrity).toBe('ok');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
