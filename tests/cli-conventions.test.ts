/**
 * CLI conventions (docs/reliability.md, "Exit codes"): every usage error
 * exits 2, on the program and on its subcommands; `kloop` alone prints help
 * and exits 2; with `--json` a failure prints one JSON object on stdout
 * (`{"error": {"code", "message", "file"?, "line"?, "field"?}}`) as well as
 * the message on stderr; a closed output pipe winds `kloop run` down like
 * Ctrl-C; every read-only command works on a read-only study, and the
 * commands that write refuse it with exit 2.
 *
 * Usage and JSON cases run in-process (tests/cli-in-process.ts: one at a time,
 * it captures the process's own stdout and stderr); the pipe and
 * the read-only study need a real process (tests/reliability-fixture.ts).
 */
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_EXIT_CODE } from '../src/cli/commands/run.ts';
import { kloop } from './cli-in-process.ts';
import {
  databaseFile,
  fileHash,
  finished,
  makeStudy,
  readOnlyUser,
  runKloop,
  snapshotDatabase,
  spawnKloop,
  waitForLine,
} from './reliability-fixture.ts';

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** The one JSON object a failing `--json` command prints on stdout. */
function jsonError(stdout: string): { code: string; message: string; file?: string; line?: number; field?: string } {
  const parsed = JSON.parse(stdout) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  return parsed.error;
}

describe('usage errors exit 2', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['kloop alone prints help', [], /^Usage: kloop \[options\] \[command\]/],
    ['a subcommand without its argument', ['run'], /error: missing required argument 'study'/],
    ['an unknown option of a subcommand', ['run', 'examples/intent', '--bogus'], /error: unknown option '--bogus'/],
    ['too many arguments', ['history', 'a', 'b'], /error: too many arguments for 'history'/],
    ['an unknown command', ['nosuch'], /error: unknown command 'nosuch'/],
    ['a command group alone prints its help', ['corpus'], /^Usage: kloop corpus/],
    ['a nested subcommand without its arguments', ['corpus', 'add'], /error: missing required argument 'study'/],
    [
      'an unknown option of a nested subcommand',
      ['signals', 'report', 'x', '--bogus'],
      /error: unknown option '--bogus'/,
    ],
    [
      'an invalid option value',
      ['run', 'examples/intent', '--max-experiments', 'many'],
      /--max-experiments: expected a whole number ≥ 0, got "many"/,
    ],
    // Options that would be ignored are refused, and an empty study path is not the current folder.
    [
      '--batch-size without --workers',
      ['run', 'examples/intent', '--batch-size', '3'],
      /--batch-size sets the size of the jobs of --workers: give --workers too/,
    ],
    [
      '--partition with --corpus',
      ['eval', 'examples/intent', '--corpus', 'examples/intent/corpus/extra.jsonl', '--partition', 'anchor'],
      /--partition does not apply to --corpus/,
    ],
    [
      'init with an empty path',
      ['init', '', '--task', 'intent'],
      /the study folder must be named \(got an empty path\)/,
    ],
    [
      'build with a goal over the corpus limit',
      ['build', 'examples/intent', 'a'.repeat(20_001)],
      /goal: the goal text has 20001 characters, more than the 20000 a goal may have/,
    ],
  ];
  for (const [name, args, message] of cases) {
    it(`${name}: exit 2`, async () => {
      const result = await kloop(...args);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    });
  }

  it('help asked for exits 0, on stdout', async () => {
    for (const args of [['--help'], ['help'], ['help', 'run'], ['run', '--help'], ['corpus', 'add', '--help']]) {
      const result = await kloop(...args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^Usage: kloop/);
    }
    expect((await kloop('--version')).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('--json failures print one error object on stdout and the message on stderr', () => {
  it('a usage error', async () => {
    const result = await kloop('run', '--json');
    expect(result.code).toBe(2);
    expect(jsonError(result.stdout)).toEqual({
      code: 'usage.missing_argument',
      message: "missing required argument 'study'",
    });
    expect(result.stderr).toContain("error: missing required argument 'study'");
  });

  it('kloop --json alone', async () => {
    const result = await kloop('--json');
    expect(result.code).toBe(2);
    expect(jsonError(result.stdout).code).toMatch(/^usage\./);
  });

  it('bad input names the file, the line and the field', async () => {
    const study = makeStudy(cleanups);
    const config = path.join(study, 'kloop.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('  alpha: 0.05', '  alpah: 0.05'));
    const line =
      readFileSync(config, 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('alpah')) + 1;
    const result = await kloop('run', study, '--json');
    expect(result.code).toBe(2);
    const error = jsonError(result.stdout);
    expect(error).toMatchObject({ file: config, line, field: 'gate.alpah' });
    expect(error.code).toMatch(/^input\b/);
    expect(error.message).toMatch(/^unknown key "alpah"/);
    expect(result.stderr).toBe(`kloop: ${config}:${line}: gate.alpah: ${error.message}\n`);
  });

  it('a study folder that does not exist, for a read-only command', async () => {
    const result = await kloop('history', '/nonexistent/study', '--json');
    expect(result.code).toBe(2);
    expect(jsonError(result.stdout)).toEqual({
      code: 'input',
      message: 'the study folder does not exist',
      file: '/nonexistent/study',
    });
  });

  it('a damaged study database: a storage error (exit 1), not a stack trace', async () => {
    const study = makeStudy(cleanups);
    const file = databaseFile(study);
    await kloop('run', study, '--max-experiments', '0', '--quiet');
    writeFileSync(file, Buffer.alloc(8192, 7));
    for (const name of ['-wal', '-shm']) writeFileSync(`${file}${name}`, '');
    const result = await kloop('history', study, '--json');
    expect(result.code, result.stderr).toBe(1);
    expect(jsonError(result.stdout).code).toMatch(/^storage\.sqlite_notadb$/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const doctor = await kloop('doctor', study, '--json');
    expect(doctor.code).toBe(1);
    const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ id: string; message: string }> }).findings;
    expect(findings.find((finding) => finding.id === 'database.open')?.message).toMatch(
      /^the study database is damaged: /,
    );
  });
});

describe('a closed output pipe', () => {
  it('during `kloop run` winds the run down like Ctrl-C: interrupted recorded, lease released, exit 130', async () => {
    // A small budget is enough: after `run N:` the run prints its round and each decision, and the first of those
    // lines meets the closed pipe while the run is still going, whatever the budget.
    const study = makeStudy(cleanups, { maxExperiments: 4 });
    const child = spawnKloop(['run', study]);
    const done = finished(child);
    await waitForLine(child, /^run \d+:/); // the run holds the lease and has opened its run row
    // `kloop run … 2>&1 | head -3`: the reader goes away; the next progress line meets a closed pipe.
    child.stdout!.destroy();
    child.stderr!.destroy();
    const result = await done;
    expect(result.code).toBe(INTERRUPTED_EXIT_CODE);
    const snapshot = snapshotDatabase(study);
    expect(snapshot.runs).toEqual([{ stopReason: 'interrupted', ended: true }]);
    expect(snapshot.leases).toBe(0);
    expect(snapshot.integrity).toBe('ok');
    // The next run continues from there.
    const resumed = await runKloop(['run', study, '--json', '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
  });
});

describe('a read-only study', () => {
  /** Makes every file and folder under `target` read-only; root writes anywhere, so the children run as `nobody` then. */
  function makeReadOnly(target: string): void {
    const walk = (entry: string): void => {
      const isDirectory = statSync(entry).isDirectory();
      if (isDirectory) for (const name of readdirSync(entry)) walk(path.join(entry, name));
      chmodSync(entry, isDirectory ? 0o555 : 0o444);
    };
    walk(target);
    cleanups.push(() => {
      const restore = (entry: string): void => {
        chmodSync(entry, 0o755);
        if (statSync(entry).isDirectory()) for (const name of readdirSync(entry)) restore(path.join(entry, name));
      };
      restore(target);
    });
  }

  const asUser = readOnlyUser();
  if (asUser === undefined)
    console.warn(
      'skipped: the tests run as root and `nobody` cannot reach this repository (a folder on the way is closed to other users)',
    );
  it.skipIf(asUser === undefined)(
    'every read-only command works on it (nothing is written); the commands that write refuse it with exit 2',
    async () => {
      const study = makeStudy(cleanups, { maxExperiments: 4 });
      const first = await runKloop(['run', study, '--json', '--quiet']);
      expect(first.code, first.stderr).toBe(0);
      // A run that ended cleanly leaves no -wal/-shm beside the database: SQLite cannot read it in place in a read-only folder.
      const sqlite = new Database(databaseFile(study));
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      sqlite.close();
      expect(readdirSync(path.dirname(databaseFile(study))).filter((name) => name.startsWith('kloop.db'))).toEqual([
        'kloop.db',
      ]);
      const before = fileHash(databaseFile(study));
      makeReadOnly(study);

      const readers: Array<[string, string[]]> = [
        ['status', ['status', study, '--json']],
        ['history', ['history', study, '--json']],
        ['show', ['show', study, '1', '--json']],
        ['doctor', ['doctor', study, '--json']],
        ['eval', ['eval', study, '--json', '--quiet']],
        ['eval --loop A', ['eval', study, '--loop', 'A', '--json', '--quiet']],
        ['export --out -', ['export', study, '--out', '-']],
        ['corpus status', ['corpus', 'status', study, '--json']],
        ['corpus at', ['corpus', 'at', study, '1', '--json']],
        ['review', ['review', study, '--json']],
        ['signals report', ['signals', 'report', study, '--json']],
        ['signals mine', ['signals', 'mine', study, '--json']],
      ];
      const results = await Promise.all(readers.map(([, args]) => runKloop(args, asUser)));
      results.forEach((result, index) => {
        const [name] = readers[index]!;
        expect(result.code, `${name}: ${result.stderr}`).toBe(0);
        if (name !== 'export --out -') expect(() => JSON.parse(result.stdout), name).not.toThrow();
      });
      const [status, history, , doctor, evaluation] = results.map((result) =>
        result.stdout.startsWith('{') ? (JSON.parse(result.stdout) as Record<string, unknown>) : {},
      );
      expect(status!.activeVersion).not.toBeNull();
      expect((history!.experiments as unknown[]).length).toBeGreaterThan(0);
      expect(typeof (evaluation!.partitions as { optimization: { composite: number } }).optimization.composite).toBe(
        'number',
      );
      expect(doctor!.healthy).toBe(true);
      const access = (doctor!.findings as Array<{ id: string; status: string; message: string }>).find(
        (finding) => finding.id === 'database.access',
      );
      expect(access, 'doctor says the study is read-only').toMatchObject({ status: 'info' });
      expect(access!.message).toMatch(/^the study is read-only for this user/);
      expect(results[6]!.stdout.length).toBeGreaterThan(100); // the exported artifact text

      for (const command of ['run', 'calibrate', 'reset']) {
        const refused = await runKloop([command, study, '--json', ...(command === 'reset' ? ['--yes'] : [])], asUser);
        expect(refused.code, refused.stderr).toBe(2);
        expect(jsonError(refused.stdout)).toMatchObject({ code: 'input.read_only', file: databaseFile(study) });
        expect(refused.stderr).toContain(`is read-only (EACCES): kloop ${command} writes the study's lab notebook`);
      }
      expect(fileHash(databaseFile(study))).toBe(before);
    },
    180_000,
  );
});
