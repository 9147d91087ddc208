/**
 * Peer fault 1 (issue #36; GEPA #281): a program that crashes on every
 * candidate ended as a success. A `kloop init --task custom --executor
 * command` study whose program exits 1 for every artifact but the seed
 * stopped `no_new_proposals`, exit 0, 0 experiments, with the program's exit
 * code and stderr nowhere; in the library a proposer that always throws
 * stopped `consecutive_failures` with no error text.
 *
 * Now a run whose candidates all fail stops `candidates_failed` (exit 1),
 * quoting the program's exit code and stderr in the report, text and
 * `--json`, stored with the run (`kloop history`); the library's stops carry
 * the error text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStudy, type StudyExample } from '../../src/api/create-study.ts';
import { kloop } from '../cli-in-process.ts';
import { makeCustomStudy } from './custom-study.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const STDERR = 'run.mjs: TypeError: Cannot read properties of undefined (reading "queue")';
const CRASH = `the program exited with code 1; stderr: ${STDERR}`;

/** The sample run.mjs, made to crash (exit 1, a line on stderr) on every rules file but the seed's. */
function crashOnCandidates(runMjs: string): string {
  const read = "const rules = JSON.parse(readFileSync(request.artifact ?? process.env.KLOOP_ARTIFACT, 'utf8'));";
  expect(runMjs).toContain(read);
  return runMjs.replace(
    read,
    `const rulesText = readFileSync(request.artifact ?? process.env.KLOOP_ARTIFACT, 'utf8');
if (rulesText !== readFileSync('seed-rules.json', 'utf8')) {
  process.stderr.write(${JSON.stringify(`${STDERR}\n`)});
  process.exit(1);
}
const rules = JSON.parse(rulesText);`,
  );
}

describe('a command program that crashes on every candidate', () => {
  it("stops candidates_failed with exit 1 and the program's exit code and stderr, in text, --json and kloop history", async () => {
    const study = await makeCustomStudy(cleanups);
    study.write('seed-rules.json', study.read('rules.json'));
    study.write('run.mjs', crashOnCandidates(study.read('run.mjs')));

    const text = await kloop('run', study.dir);
    expect(text.code, text.stderr).toBe(1);
    // The proposer screened its 10 edits of round 1, each crashing on all 6 optimization tickets: the streak (5) stops the run before round 2.
    expect(text.stdout).toContain(
      `stop reason: candidates_failed (every candidate gave no valid output while the incumbent gives valid ones (the program or model fails on the candidates): a problem, not a result) — 10 candidate evaluations in a row (the proposer's screening included) gave no valid output (stopping.maxConsecutiveFailures 5); last: t01: error: ${CRASH}`,
    );
    expect(text.stdout).toContain('experiments evaluated: 0 (this run: 0)');

    // A second run meets the same and says the same, in --json (the streak starts afresh: the last run did not end interrupted).
    const json = await kloop('run', study.dir, '--json');
    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout) as { stopReason: string; stopDetail: string; exitCode: number };
    expect(report).toMatchObject({ stopReason: 'candidates_failed', exitCode: 1 });
    expect(report.stopDetail).toContain(`last: t01: error: ${CRASH}`);

    // Stored with each run: kloop history lists both, with why.
    const history = await kloop('history', study.dir, '--json');
    expect(history.code, history.stderr).toBe(0);
    const runs = (
      JSON.parse(history.stdout) as {
        runs: Array<{ id: number; stopReason: string; exitCode: number; stopDetail: string }>;
      }
    ).runs;
    expect(runs.map(({ id, stopReason, exitCode }) => ({ id, stopReason, exitCode }))).toEqual([
      { id: 1, stopReason: 'candidates_failed', exitCode: 1 },
      { id: 2, stopReason: 'candidates_failed', exitCode: 1 },
    ]);
    expect(runs[0]!.stopDetail).toContain(CRASH);
    const listed = await kloop('history', study.dir);
    expect(listed.stdout).toContain('runs that stopped on a problem (exit 1):');
    expect(listed.stdout).toContain(STDERR);
  }, 180_000);

  it('a program that works on the candidates still stops on a criterion, exit 0 (the same study, the sample run.mjs)', async () => {
    const study = await makeCustomStudy(cleanups);
    const result = await kloop('run', study.dir, '--json', '--max-experiments', '2');
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { stopReason: string }).stopReason).toBe('max_experiments');
  }, 180_000);
});

describe('the library', () => {
  const words = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date', 'lemon'];
  const examples: StudyExample<string, string>[] = [
    ...words.map((word, index) => ({
      id: `o${index}`,
      input: `I want ${word}`,
      expected: word,
      partition: 'optimization' as const,
    })),
    ...words.slice(0, 3).map((word, index) => ({
      id: `a${index}`,
      input: `an ${word} please`,
      expected: word,
      partition: 'anchor' as const,
    })),
    ...words.slice(0, 6).map((word, index) => ({
      id: `s${index}`,
      input: `give me ${word} now`,
      expected: word,
      partition: 'shadow' as const,
    })),
  ];
  const execute = (artifact: string, input: string): string =>
    artifact.split(/\s+/).find((word) => word !== '' && input.includes(word)) ?? 'none';
  const score = (output: unknown, expected: unknown) => ({ pass: output === expected });
  const storage = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-peer-fault-api-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('a proposer that always throws: optimize() stops consecutive_failures with the error text', async () => {
    const study = await createStudy({
      storage: storage(),
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute,
      proposer: () => {
        throw new Error('the proposal service is down (503)');
      },
      stopping: { maxConsecutiveFailures: 3 },
    });
    try {
      const result = await study.optimize();
      expect(result.stopReason).toBe('consecutive_failures');
      expect(result.stopDetail).toBe(
        '3 consecutive failed proposer answers or evaluations; last: the proposer threw: the proposal service is down (503)',
      );
    } finally {
      await study.close();
    }
  });

  it('an execute that throws on every candidate but the seed: optimize() stops candidates_failed with the error text', async () => {
    let calls = 0;
    const study = await createStudy({
      storage: storage(),
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute: (artifact: string, input: string) => {
        if (artifact !== 'apple\n') throw new Error('workflow crashed: no such tool');
        return execute(artifact, input);
      },
      proposer: ({ incumbentText }) => [{ text: `${incumbentText}${words[(calls += 1)]}\n` }],
      stopping: { maxConsecutiveFailures: 2, plateauRounds: 5 },
    });
    try {
      const result = await study.optimize();
      expect(result.stopReason).toBe('candidates_failed');
      expect(result.stopDetail).toMatch(
        /^2 candidate evaluations in a row \(the proposer's screening included\) gave no valid output \(stopping\.maxConsecutiveFailures 2\); last: o0: error: .*workflow crashed: no such tool/,
      );
      expect(result.best.versionId).toBe(1);
    } finally {
      await study.close();
    }
  });
});
