import { getEventListeners } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { InfrastructureError, InputError } from '../../errors.ts';
import type { ExecutionRequest, ExecutionResult } from '../executor.ts';
import { createEvaluator } from '../../evaluator/evaluator.ts';
import { createClassificationTask } from '../../tasks/classification/classification-task.ts';
import { createCommandExecutor, type CommandExecutorOptions } from './command-executor.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function temporaryFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-command-test-'));
  folders.push(folder);
  return folder;
}

/** An executor running one fixture program with node, its artifact files in a fresh folder. */
function executorFor(fixture: string, overrides: Partial<CommandExecutorOptions> = {}) {
  const artifactDirectory = path.join(temporaryFolder(), 'artifacts');
  return {
    artifactDirectory,
    executor: createCommandExecutor({
      command: [process.execPath, path.join(FIXTURES, fixture)],
      cwd: FIXTURES,
      artifactDirectory,
      ...overrides,
    }),
  };
}

function request(overrides: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return {
    input: { subject: 'Invoice', body: 'I was charged twice' },
    text: 'subject: Invoice\nbody: I was charged twice',
    artifact: '{"label":"billing"}',
    repeat: 0,
    ...overrides,
  };
}

/** True while `pid` is a live process (a zombie, killed but not yet reaped, counts as gone). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Waits until `condition` holds (polling every 10 ms), failing after `limitMs` — a bound on a wait, not a timing assertion. */
async function waitFor(condition: () => boolean, limitMs = 20_000): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error('the condition did not hold in time');
    await delay(10);
  }
}

function invalid(result: ExecutionResult): Extract<ExecutionResult, { ok: false }> {
  if (result.ok) throw new Error(`expected an invalid output, got ${JSON.stringify(result.output)}`);
  return result;
}

describe('createCommandExecutor', () => {
  it('returns the JSON a program prints on its last line, with zero usage and the raw stdout', async () => {
    const { executor } = executorFor('valid.mjs');
    const result = await executor.execute(request({ repeat: 2 }));
    expect(result.ok).toBe(true);
    expect(result.ok && result.output).toEqual({ label: 'billing', repeat: 2 });
    expect(result.raw).toBe('routing one ticket\n{"label":"billing","repeat":2}\n');
    expect(result.usage).toBeUndefined();
    expect(typeof result.latencyMs).toBe('number');
    const other = await executor.execute(request({ input: 'The app crashes', text: 'The app crashes' }));
    expect(other.ok && other.output).toEqual({ label: 'technical', repeat: 0 });
  });

  it('reads a whole stdout of pretty-printed JSON', async () => {
    const { executor } = executorFor('pretty.mjs');
    const result = await executor.execute(request({ text: 'two\nlines' }));
    expect(result.ok && result.output).toEqual({ label: 'billing', text: 'two\nlines' });
  });

  it('writes the artifact once to a content-addressed file with its extension, passed on stdin and in KLOOP_ARTIFACT', async () => {
    const { executor, artifactDirectory } = executorFor('echo-artifact.mjs', {
      artifactExtension: '.json',
      env: { KLOOP_TEST_EXTRA: 'from env' },
    });
    const first = await executor.execute(request({ artifact: '{"label":"account"}' }));
    if (!first.ok) throw new Error(first.message);
    const output = first.output as Record<string, unknown>;
    expect(output).toMatchObject({
      label: 'account',
      sameAsEnv: true,
      input: { subject: 'Invoice', body: 'I was charged twice' },
      text: 'subject: Invoice\nbody: I was charged twice',
      repeat: 0,
      extra: 'from env',
      cwd: FIXTURES,
    });
    const artifactPath = output.artifactPath as string;
    expect(path.dirname(artifactPath)).toBe(artifactDirectory);
    expect(path.basename(artifactPath)).toMatch(/^[0-9a-f]{32}\.json$/);
    expect(readFileSync(artifactPath, 'utf8')).toBe('{"label":"account"}');

    const again = await executor.execute(request({ artifact: '{"label":"account"}', repeat: 1 }));
    expect(again.ok && (again.output as Record<string, unknown>).artifactPath).toBe(artifactPath);
    const other = await executor.execute(request({ artifact: '{"label":"security"}' }));
    expect(other.ok && (other.output as Record<string, unknown>).label).toBe('security');
    expect(readdirSync(artifactDirectory).sort()).toHaveLength(2);

    // A file under the name with other bytes (tampered, or cut short) is replaced.
    writeFileSync(artifactPath, 'garbage');
    const fresh = executorFor('echo-artifact.mjs', { artifactExtension: '.json', artifactDirectory });
    const replaced = await fresh.executor.execute(request({ artifact: '{"label":"account"}' }));
    expect(replaced.ok && (replaced.output as Record<string, unknown>).label).toBe('account');
  });

  it('returns a crash as invalid "error" with the exit code and the end of stderr', async () => {
    const { executor } = executorFor('crash.mjs');
    const result = invalid(await executor.execute(request()));
    expect(result.reason).toBe('error');
    expect(result.message).toBe(
      'the program exited with code 3; stderr: loading rules\nboom: the rules file has no "rules" key',
    );
    expect(result.transient).toBeUndefined();
  });

  it('returns a program killed by a signal as invalid "error"', async () => {
    const { executor } = executorFor('self-signal.mjs');
    const result = invalid(await executor.execute(request()));
    expect(result.reason).toBe('error');
    expect(result.message).toBe('the program was killed by SIGTERM (nothing on stderr)');
  });

  it('returns stdout that is not JSON as "unparsable" with the raw text, and nothing as "empty"', async () => {
    const garbage = invalid(await executorFor('garbage.mjs').executor.execute(request()));
    expect(garbage.reason).toBe('unparsable');
    expect(garbage.raw).toBe('label = billing\nthat is all\n');
    expect(garbage.message).toMatch(/^the program's stdout is not JSON, neither as a whole nor its last line/);
    const silent = invalid(await executorFor('silent.mjs').executor.execute(request()));
    expect(silent).toMatchObject({ reason: 'empty', message: 'the program printed nothing on stdout' });
  });

  it('stops a program that prints more than maxOutputBytes: "unparsable", raw capped', async () => {
    const { executor } = executorFor('flood.mjs', { maxOutputBytes: 10_000 });
    const result = invalid(await executor.execute(request()));
    expect(result.reason).toBe('unparsable');
    expect(result.message).toBe('the program printed more than 10000 bytes on stdout (maxOutputBytes) and was killed');
    expect(result.raw?.length).toBeLessThan(4100);
    expect(result.raw).toMatch(/… \[\d+ more characters\]$/);
  });

  it('kills a program (and the process it started) that runs past timeoutMs: invalid "timeout", terminal', async () => {
    const pidFile = path.join(temporaryFolder(), 'pids');
    const { executor } = executorFor('sleep.mjs', { timeoutMs: 300, env: { KLOOP_TEST_PID_FILE: pidFile } });
    const result = invalid(await executor.execute(request()));
    expect(result).toMatchObject({
      reason: 'timeout',
      message: 'the program ran longer than 300 ms (timeoutMs) and was killed',
    });
    expect(result.transient).toBeUndefined();
    // On a loaded machine node may take longer than 300 ms to start, and the program is killed before it
    // writes its pids: then there is nothing more to check (the abort test below checks the group kill
    // without that race).
    const pids = existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : '';
    if (pids.includes(' ')) {
      const [programPid, childPid] = pids.split(' ').map(Number) as [number, number];
      expect(isAlive(programPid)).toBe(false);
      await waitFor(() => !isAlive(childPid));
    }
  });

  it('kills the program and rethrows the reason when the signal is aborted', async () => {
    const pidFile = path.join(temporaryFolder(), 'pids');
    const { executor } = executorFor('sleep.mjs', { env: { KLOOP_TEST_PID_FILE: pidFile } });
    const controller = new AbortController();
    const pending = executor.execute(request({ signal: controller.signal }));
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
    const reason = new Error('stopped by the user');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const [programPid, childPid] = readFileSync(pidFile, 'utf8').split(' ').map(Number) as [number, number];
    expect(isAlive(programPid)).toBe(false);
    await waitFor(() => !isAlive(childPid));

    const already = new AbortController();
    already.abort(reason);
    await expect(executor.execute(request({ signal: already.signal }))).rejects.toBe(reason);
  });

  it('runs at most `concurrency` programs at once across calls, and uses every slot', async () => {
    const probe = temporaryFolder();
    const { executor } = executorFor('concurrency.mjs', {
      concurrency: 3,
      timeoutMs: 60_000,
      env: { KLOOP_TEST_DIR: probe },
    });
    const running = path.join(probe, 'running');
    const pending = Array.from({ length: 7 }, (_, index) => executor.execute(request({ repeat: index })));
    await waitFor(() => existsSync(running) && readdirSync(running).length >= 3);
    // Give a wrongly started fourth program time to show up. A correct executor never starts one,
    // so this wait cannot make the test fail under load; it only lets a broken one be seen.
    await delay(500);
    expect(readdirSync(running)).toHaveLength(3);
    writeFileSync(path.join(probe, 'go'), '');
    const results = await Promise.all(pending);
    const most = results.map((result) => (result.ok ? (result.output as { most: number }).most : -1));
    expect(most.every((count) => count >= 1 && count <= 3)).toBe(true);
    expect(Math.max(...most)).toBe(3);
    expect(readdirSync(running)).toEqual([]);
  });

  it('throws an InfrastructureError when the program cannot be started (no candidate could run)', async () => {
    const missing = createCommandExecutor({
      command: ['kloop-no-such-program-0f3a'],
      cwd: FIXTURES,
      artifactDirectory: temporaryFolder(),
    });
    const error = await missing.execute(request({ exampleId: 'ticket-7' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as InfrastructureError).code).toBe('infrastructure.command');
    expect((error as InfrastructureError).exampleId).toBe('ticket-7');
    expect((error as Error).message).toBe(
      `cannot start the command executor's program "kloop-no-such-program-0f3a" (kloop-no-such-program-0f3a) in ${FIXTURES}: ENOENT; check that it is installed, on PATH and executable`,
    );
    const nowhere = path.join(FIXTURES, 'no-such-folder');
    const badFolder = createCommandExecutor({
      command: [process.execPath, 'valid.mjs'],
      cwd: nowhere,
      artifactDirectory: temporaryFolder(),
    });
    const folderError = await badFolder.execute(request()).catch((caught: unknown) => caught);
    expect(folderError).toBeInstanceOf(InfrastructureError);
    expect((folderError as Error).message).toContain(`in ${nowhere}, a folder that does not exist`);
  });

  it('has an id from argv, timeout, output cap, extension and env (not cwd, not concurrency); deterministic only when told', () => {
    const base: CommandExecutorOptions = { command: ['node', 'route.mjs'], cwd: '/a' };
    const id = createCommandExecutor(base).id;
    expect(id).toMatch(/^command:[0-9a-f]{16}$/);
    expect(createCommandExecutor({ ...base, cwd: '/b', concurrency: 1 }).id).toBe(id);
    expect(createCommandExecutor({ ...base, timeoutMs: 30_000 }).id).toBe(id);
    for (const changed of [
      { command: ['node', 'route2.mjs'] },
      { timeoutMs: 10_000 },
      { maxOutputBytes: 1000 },
      { artifactExtension: '.yaml' },
      { env: { MODE: 'strict' } },
    ]) {
      expect(createCommandExecutor({ ...base, ...changed }).id).not.toBe(id);
    }
    expect(createCommandExecutor(base).deterministic).toBe(false);
    expect(createCommandExecutor({ ...base, deterministic: true }).deterministic).toBe(true);
  });

  it('refuses bad settings with an InputError naming the field', () => {
    const cases: Array<[Partial<CommandExecutorOptions>, string, RegExp]> = [
      [{ command: [] }, 'executor.command', /command is empty/],
      [{ command: [' '] }, 'executor.command', /the program\) is blank/],
      [{ timeoutMs: 0 }, 'executor.timeoutMs', /at least 1/],
      [{ concurrency: 1.5 }, 'executor.concurrency', /whole number/],
      [{ artifactExtension: 'yaml' }, 'executor.artifactExtension', /dot/],
    ];
    for (const [overrides, field, message] of cases) {
      const error = (() => {
        try {
          createCommandExecutor({ command: ['node', 'x.mjs'], cwd: '/a', ...overrides });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).field).toBe(field);
      expect((error as Error).message).toMatch(message);
    }
  });
});

describe('the command executor under a run: many calls on one signal', () => {
  it('evaluates 24 examples (12 at once, 3 programs at once) with one abort listener on the run signal and no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { executor } = executorFor('valid.mjs', { concurrency: 3 });
      const task = createClassificationTask({ labels: ['billing', 'technical'] });
      const examples = Array.from({ length: 24 }, (_, index) => ({
        id: `t${index}`,
        input: index % 2 === 0 ? `please refund order ${index}` : `the page ${index} is blank`,
        text: index % 2 === 0 ? `please refund order ${index}` : `the page ${index} is blank`,
        expected: { label: index % 2 === 0 ? 'billing' : 'technical' },
        tags: [],
        partition: 'optimization' as const,
      }));
      // 12 calls in flight: 9 waiting for a program slot and 3 running, one signal (a listener each passed Node's limit of 10).
      const evaluator = createEvaluator({ task, executor, corpus: examples, concurrency: 12 });
      const controller = new AbortController();
      let most = 0;
      const sampler = setInterval(
        () => (most = Math.max(most, getEventListeners(controller.signal, 'abort').length)),
        1,
      );
      const score = await evaluator
        .evaluate({ artifactText: 'rules', partition: 'optimization', examples, signal: controller.signal })
        .finally(() => clearInterval(sampler));
      expect(score.invalid).toBe(0);
      expect(score.composite).toBe(1);
      expect(most).toBeLessThanOrEqual(1);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      // Warnings are emitted on the next tick.
      await delay(0);
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('an abort still reaches every call: the running ones are killed, the waiting ones leave the queue', async () => {
    const { executor } = executorFor('sleep.mjs', {
      concurrency: 2,
      env: { KLOOP_TEST_PID_FILE: path.join(temporaryFolder(), 'pids') },
    });
    const controller = new AbortController();
    const pending = Array.from({ length: 12 }, (_, index) =>
      executor.execute(request({ repeat: index, signal: controller.signal })),
    );
    expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
    const reason = new Error('stopped');
    controller.abort(reason);
    const settled = await Promise.allSettled(pending);
    expect(settled.map((result) => result.status)).toEqual(Array.from({ length: 12 }, () => 'rejected'));
    expect(settled.every((result) => result.status === 'rejected' && result.reason === reason)).toBe(true);
  });
});
