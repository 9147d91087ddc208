/**
 * Shared fixture of the tests that run the `kloop` CLI as a child process
 * (crash-resume, lease, bad input, export, CLI conventions): a copy of
 * examples/intent in a temporary folder, the CLI run as a child process,
 * synchronisation on what the child prints or writes, and snapshots of a
 * study database.
 *
 * How to spawn the CLI: always through {@link spawnKloop} / {@link runKloop}.
 * They run `node bin/kloop.js`, which loads the COMPILED CLI in `dist/`
 * (about 0.3 s to start, against 2 s for the TypeScript sources through tsx).
 * `npm test` builds dist/ first, and the integration project's global set-up
 * (tests/global-setup.ts) rebuilds it when a source is newer, so a test never
 * runs stale code. A test that only needs the CLI's exit code and output, and
 * no real process (signals, kills, pipes, another user), should call it
 * in-process instead: tests/cli-in-process.ts, much cheaper.
 *
 * Never synchronise on time: wait for a line the child prints
 * ({@link waitForLine}) or for state it writes; hold the run that holds a
 * study's lease with {@link pauseLeaseHolder}.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const EXAMPLE_STUDY = path.join(ROOT, 'examples/intent');
export const KLOOP = path.join(ROOT, 'bin/kloop.js');

/**
 * How to run a child for whom a read-only study is read-only: as `nobody`
 * when the tests run as root (root writes anywhere), else as this user.
 * Undefined when the tests run as root and `nobody` cannot reach this
 * repository (a folder on the way is closed to other users, as `mktemp -d`
 * makes it): the test cannot be run there, and says so.
 */
export function readOnlyUser(): { uid: number; gid: number } | {} | undefined {
  if (process.getuid?.() !== 0) return {};
  for (let folder = ROOT; ; folder = path.dirname(folder)) {
    if ((statSync(folder).mode & 0o001) === 0) return undefined;
    if (path.dirname(folder) === folder) return { uid: 65_534, gid: 65_534 };
  }
}

export interface StudyFixtureOptions {
  /** stopping.plateauRounds. Default as examples/intent (2). */
  plateauRounds?: number;
  /** Corpus files of examples/intent/corpus to copy. Default: operations.yaml and extra.jsonl (27 examples: optimization 14, anchor 4, shadow 9). */
  corpusFiles?: string[];
  /** stopping.maxExperiments. Default 10. */
  maxExperiments?: number;
  /** Cheaper error-driven proposer (maxEvaluations 10, maxScreened 100). Default true. */
  smallProposer?: boolean;
}

/** Copies examples/intent (kloop.yaml, program.md, playbook.yaml, a slice of the corpus) to a new temporary folder. */
export function makeStudy(cleanups: Array<() => void>, options: StudyFixtureOptions = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-reliability-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'corpus'));
  for (const file of ['program.md', 'playbook.yaml'])
    copyFileSync(path.join(EXAMPLE_STUDY, file), path.join(dir, file));
  for (const file of options.corpusFiles ?? ['operations.yaml', 'extra.jsonl']) {
    copyFileSync(path.join(EXAMPLE_STUDY, 'corpus', file), path.join(dir, 'corpus', file));
  }
  let config = readFileSync(path.join(EXAMPLE_STUDY, 'kloop.yaml'), 'utf8');
  config = config.replace(/maxExperiments: \d+/, `maxExperiments: ${options.maxExperiments ?? 10}`);
  if (options.plateauRounds !== undefined)
    config = config.replace(/plateauRounds: \d+/, `plateauRounds: ${options.plateauRounds}`);
  if (options.smallProposer !== false)
    config = config.replace(/( {2}concurrency: \d+)/, '$1\n  maxEvaluations: 10\n  maxScreened: 100');
  // The reliability tests need accepted decisions from a 27-example slice, whose 9 shadow
  // examples seldom reach significance at the shipped shadowAlpha 0.05.
  config = config.replace(/shadowAlpha: [\d.]+/, 'shadowAlpha: 0.5');
  writeFileSync(path.join(dir, 'kloop.yaml'), config);
  return dir;
}

export function databaseFile(study: string): string {
  return path.join(study, '.kloop', 'kloop.db');
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Starts `node bin/kloop.js …args` in the repository folder. */
export function spawnKloop(args: string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [KLOOP, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
    ...options,
  });
}

/** Collects a child's output and waits for it to end. */
export function finished(child: ChildProcess): Promise<CliResult> {
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started }));
  });
}

/** Runs `kloop …args` to the end. */
export function runKloop(args: string[], options: SpawnOptions = {}): Promise<CliResult> {
  return finished(spawnKloop(args, options));
}

/** Resolves when the child's stderr has printed the `occurrence`-th line matching `pattern` (rejects if it ends first). */
export function waitForLine(child: ChildProcess, pattern: RegExp, occurrence = 1): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let seen = 0;
    const onData = (chunk: Buffer | string): void => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!pattern.test(line) || ++seen < occurrence) continue;
        child.stderr?.off('data', onData);
        resolve(line);
        return;
      }
    };
    child.stderr?.on('data', onData);
    child.once('close', () => reject(new Error(`the process ended before printing ${pattern}`)));
  });
}

/** SHA-256 of a file, or 'absent'. */
export function fileHash(file: string): string {
  return existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'absent';
}

/** Hashes of the database file and its WAL (a change to either shows). */
export function databaseState(study: string): string {
  const file = databaseFile(study);
  return `${fileHash(file)} ${fileHash(`${file}-wal`)}`;
}

/** What a study database holds, in a comparable form. */
export interface DatabaseSnapshot {
  integrity: string;
  versions: Array<{ text: string; source: string }>;
  active: string | undefined;
  experiments: Array<{
    round: number;
    delta: string;
    decision: string;
    reason: string;
    evidence: string;
    base: string;
    accepted: string | null;
  }>;
  evaluations: Array<{ key: string; composite: number | null; invalid: number; total: number; examples: string }>;
  duplicateDecisions: number;
  duplicateEvaluations: number;
  acceptedTwice: number;
  runs: Array<{ stopReason: string | null; ended: boolean }>;
  leases: number;
}

/** Reads a study database read-only. */
export function snapshotDatabase(study: string): DatabaseSnapshot {
  const sqlite = new Database(databaseFile(study), { readonly: true, fileMustExist: true });
  try {
    const all = <T>(query: string): T[] => sqlite.prepare(query).all() as T[];
    const hashOf = (text: string | null): string | null =>
      text === null ? null : createHash('sha256').update(text).digest('hex').slice(0, 16);
    const versions = all<{ id: number; text: string; source: string }>(
      'select id, text, source from artifact_versions order by id',
    );
    const textById = new Map(versions.map((version) => [version.id, version.text]));
    return {
      integrity: all<{ integrity_check: string }>('pragma integrity_check')
        .map((row) => row.integrity_check)
        .join('; '),
      versions: versions.map((version) => ({ text: version.text, source: version.source })),
      active: all<{ text: string }>(
        "select v.text from registry r join artifact_versions v on v.id = r.version_id where r.name = 'active'",
      )[0]?.text,
      experiments: all<{
        round: number;
        delta: string;
        decision: string;
        reason: string;
        evidence: string;
        base_version_id: number;
        accepted_version_id: number | null;
      }>(
        'select round, delta, decision, reason, evidence, base_version_id, accepted_version_id from experiments order by id',
      ).map((row) => ({
        round: row.round,
        delta: row.delta,
        decision: row.decision,
        reason: row.reason,
        evidence: row.evidence,
        base: hashOf(textById.get(row.base_version_id) ?? null)!,
        accepted: row.accepted_version_id === null ? null : hashOf(textById.get(row.accepted_version_id) ?? null),
      })),
      evaluations: all<{
        id: number;
        fingerprint: string;
        artifact_hash: string;
        partition: string;
        partition_hash: string;
        repeat: number;
        composite: number | null;
        invalid: number;
        total: number;
      }>('select * from evaluations order by fingerprint, artifact_hash, partition_hash, repeat').map((row) => ({
        key: `${row.fingerprint} ${row.artifact_hash} ${row.partition} ${row.partition_hash} ${row.repeat}`,
        composite: row.composite,
        invalid: row.invalid,
        total: row.total,
        examples: all<{ example_id: string; valid: number; composite: number | null }>(
          `select example_id, valid, composite from evaluation_examples where evaluation_id = ${row.id} order by example_id`,
        )
          .map((example) => `${example.example_id}:${example.valid}:${example.composite}`)
          .join(','),
      })),
      duplicateDecisions: all<{ n: number }>(
        'select count(*) as n from (select round, delta from experiments group by round, delta having count(*) > 1)',
      )[0]!.n,
      duplicateEvaluations: all<{ n: number }>(
        'select count(*) as n from (select fingerprint, artifact_hash, partition_hash, repeat from evaluations group by 1, 2, 3, 4 having count(*) > 1)',
      )[0]!.n,
      acceptedTwice: all<{ n: number }>(
        'select count(*) as n from (select accepted_version_id from experiments where accepted_version_id is not null group by 1 having count(*) > 1)',
      )[0]!.n,
      runs: all<{ stop_reason: string | null; ended_at: string | null }>(
        'select stop_reason, ended_at from runs order by id',
      ).map((row) => ({ stopReason: row.stop_reason, ended: row.ended_at !== null })),
      leases:
        all<{ n: number }>("select count(*) as n from sqlite_master where name = 'leases'")[0]!.n === 0
          ? 0
          : all<{ n: number }>('select count(*) as n from leases')[0]!.n,
    };
  } finally {
    sqlite.close();
  }
}

/** A `kloop run` held still by {@link pauseLeaseHolder}. */
export interface PausedHolder {
  /** The pid of the process that holds the study's lease. */
  pid: number;
  /** Lets it go on (SIGCONT) and stops keeping its lease fresh. */
  resume(): void;
}

/**
 * Waits until a process holds the study's lease, then pauses it (SIGSTOP)
 * and keeps its lease fresh while it is paused (a paused process's
 * heartbeat stops too): for everyone else the study is being run, for as
 * long as the test needs. No race with the holder: the lease row is read and
 * the holder stopped while this test holds SQLite's write lock, so the holder
 * can neither release its lease nor be inside a transaction at that moment —
 * kloop begins every transaction of a writable connection with `BEGIN
 * IMMEDIATE`, so a transaction holds the write lock from its start (it may
 * wait for the lock; after `resume` it goes on). It is never stopped between
 * a read and a write of one transaction, where the writes made meanwhile
 * (this fixture's own heartbeat) would make its snapshot stale and its write
 * fail with SQLITE_BUSY_SNAPSHOT.
 *
 * @param children when they have all ended before one held the lease, fails
 */
export async function pauseLeaseHolder(study: string, children: readonly ChildProcess[] = []): Promise<PausedHolder> {
  const file = databaseFile(study);
  for (;;) {
    if (existsSync(file)) {
      const sqlite = new Database(file, { fileMustExist: true, timeout: 0 });
      try {
        sqlite.exec('begin immediate');
        const hasTable =
          sqlite.prepare("select name from sqlite_master where type = 'table' and name = 'leases'").get() !== undefined;
        const row = hasTable
          ? (sqlite.prepare('select pid from leases').get() as { pid: number } | undefined)
          : undefined;
        if (row !== undefined) process.kill(row.pid, 'SIGSTOP');
        sqlite.exec('rollback');
        if (row !== undefined) return keepLeaseFresh(file, row.pid);
      } catch {
        // busy (a writer is in a transaction) or still being created: look again
      } finally {
        sqlite.close();
      }
    }
    if (children.length > 0 && children.every((child) => child.exitCode !== null || child.signalCode !== null)) {
      throw new Error('every child ended before one held the lease');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Holders paused and not yet resumed: a test that times out before its `resume()` must not leave a process stopped for ever. */
const pausedHolders = new Set<number>();
process.once('exit', () => {
  for (const pid of pausedHolders) continueProcess(pid);
});

function continueProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // already gone
  }
}

function keepLeaseFresh(file: string, pid: number): PausedHolder {
  const refresh = (): void => {
    const sqlite = new Database(file, { fileMustExist: true, timeout: 5_000 });
    try {
      sqlite.prepare('update leases set heartbeat_at = ? where pid = ?').run(new Date().toISOString(), pid);
    } finally {
      sqlite.close();
    }
  };
  refresh();
  pausedHolders.add(pid);
  const heartbeat = setInterval(() => {
    try {
      refresh();
    } catch {
      // The study is gone (the test ended and removed it) or stayed locked for 5 s: the next beat tries again, well within the 15 s staleness.
      if (!existsSync(file)) clearInterval(heartbeat);
    }
  }, 1_000);
  heartbeat.unref();
  return {
    pid,
    resume() {
      clearInterval(heartbeat);
      pausedHolders.delete(pid);
      continueProcess(pid);
    },
  };
}
