/**
 * One run of the command executor's program on one request: spawn, feed
 * stdin, collect stdout and stderr, enforce the timeout, the output cap and
 * the abort signal, and turn the exit into an {@link ExecutionResult} (see
 * `command-executor.ts` for the protocol and the outcomes).
 *
 * @module
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { InfrastructureError } from '../../errors.ts';
import { truncateTextStart } from '../../text/characters.ts';
import { capRaw } from '../cap-raw.ts';
import type { ExecutionRequest, ExecutionResult } from '../executor.ts';
import { onAbort } from './abort-subscriptions.ts';
import { readProgramOutput } from './read-program-output.ts';

/** Characters of stderr quoted in an error message (its end). */
export const STDERR_TAIL_CHARACTERS = 1000;

const IS_POSIX = process.platform !== 'win32';

/** What every run of one executor shares: the program, where and how it runs. */
export interface ProgramSettings {
  /** `command[0]`. */
  program: string;
  /** `command.slice(1)`. */
  args: readonly string[];
  /** Absolute folder the program runs in. */
  cwd: string;
  /** Variables added to kloop's environment. */
  env: Readonly<Record<string, string>> | undefined;
  /** Most time one program may run, in milliseconds. */
  timeoutMs: number;
  /** Most bytes read from stdout. */
  maxOutputBytes: number;
  /** The command as shown in error messages. */
  shown: string;
}

/** The mutable state of one run. */
interface RunState {
  settled: boolean;
  timedOut: boolean;
  overflowed: boolean;
  aborted: boolean;
  stdout: Buffer[];
  stdoutBytes: number;
  stderr: string;
}

/** The end of a text, at most `characters` long, trimmed. */
function tail(text: string, characters: number): string {
  const trimmed = text.trim();
  return truncateTextStart(trimmed, characters + 1);
}

/** Kills the child's process group (POSIX) or the child itself. */
function killChild(child: ChildProcessWithoutNullStreams): void {
  if (child.pid === undefined) return;
  try {
    if (IS_POSIX) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // The group is gone already (ESRCH): nothing left to kill.
    child.kill('SIGKILL');
  }
}

/** The error thrown when the program cannot be started at all. */
function startFailure(
  settings: ProgramSettings,
  request: ExecutionRequest,
  error: NodeJS.ErrnoException,
): InfrastructureError {
  const { cwd, program, shown } = settings;
  const where = existsSync(cwd) ? `in ${cwd}` : `in ${cwd}, a folder that does not exist`;
  return new InfrastructureError(
    `cannot start the command executor's program "${program}" (${shown}) ${where}: ${error.code ?? error.message}; check that it is installed, on PATH and executable`,
    {
      code: 'infrastructure.command',
      field: 'executor.command',
      cause: error,
      ...(request.exampleId !== undefined ? { exampleId: request.exampleId } : {}),
    },
  );
}

/** Keeps a stdout chunk, up to `maxOutputBytes` in all; past it, marks the run overflowed and kills the program. */
function takeStdout(state: RunState, settings: ProgramSettings, chunk: Buffer, kill: () => void): void {
  if (state.overflowed) return;
  const room = settings.maxOutputBytes - state.stdoutBytes;
  state.stdoutBytes += chunk.length;
  if (chunk.length > room) {
    // Keep the first maxOutputBytes bytes, for the raw text.
    state.stdout.push(chunk.subarray(0, room));
    state.overflowed = true;
    kill();
    return;
  }
  state.stdout.push(chunk);
}

/** Keeps a stderr chunk, only the end of stderr once it grows long. */
function takeStderr(state: RunState, chunk: string): void {
  state.stderr += chunk;
  if (state.stderr.length > 4 * STDERR_TAIL_CHARACTERS)
    state.stderr = state.stderr.slice(state.stderr.length - 2 * STDERR_TAIL_CHARACTERS);
}

/** The result of a program that closed (not aborted): timeout, overflow, failure, or its output read. */
function closedResult(
  state: RunState,
  settings: ProgramSettings,
  code: number | null,
  signalName: NodeJS.Signals | null,
  latencyMs: number,
): ExecutionResult {
  const text = Buffer.concat(state.stdout).toString('utf8');
  const raw = text === '' ? {} : { raw: capRaw(text) };
  if (state.timedOut) {
    return {
      ok: false,
      reason: 'timeout',
      message: `the program ran longer than ${settings.timeoutMs} ms (timeoutMs) and was killed`,
      ...raw,
      latencyMs,
    };
  }
  if (state.overflowed) {
    return {
      ok: false,
      reason: 'unparsable',
      message: `the program printed more than ${settings.maxOutputBytes} bytes on stdout (maxOutputBytes) and was killed`,
      ...raw,
      latencyMs,
    };
  }
  if (code !== 0) {
    const how = code === null ? `was killed by ${signalName ?? 'a signal'}` : `exited with code ${code}`;
    const errors = tail(state.stderr, STDERR_TAIL_CHARACTERS);
    return {
      ok: false,
      reason: 'error',
      message: `the program ${how}${errors === '' ? ' (nothing on stderr)' : `; stderr: ${errors}`}`,
      ...raw,
      latencyMs,
    };
  }
  const output = readProgramOutput(text);
  return output.ok
    ? { ok: true, output: output.output, raw: output.raw, latencyMs }
    : { ok: false, reason: output.reason, message: output.message, raw: output.raw, latencyMs };
}

/**
 * Runs the program once on `request` with the artifact file at
 * `artifactPath`; `started` is `performance.now()` when the execution began
 * (for `latencyMs`). Resolves the outcome; rejects an
 * {@link InfrastructureError} when the program cannot be started, or the
 * signal's reason when the request is aborted (the program is killed first).
 */
export function runProgram(
  settings: ProgramSettings,
  artifactPath: string,
  request: ExecutionRequest,
  started: number,
): Promise<ExecutionResult> {
  return new Promise<ExecutionResult>((resolve, reject) => {
    const state: RunState = {
      settled: false,
      timedOut: false,
      overflowed: false,
      aborted: false,
      stdout: [],
      stdoutBytes: 0,
      stderr: '',
    };
    const child = spawn(settings.program, settings.args, {
      cwd: settings.cwd,
      env: { ...process.env, ...settings.env, KLOOP_ARTIFACT: artifactPath },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: IS_POSIX,
      windowsHide: true,
    });
    const kill = (): void => killChild(child);
    const timer = setTimeout(() => {
      state.timedOut = true;
      kill();
    }, settings.timeoutMs);
    // One listener on the run's signal for all calls in flight (abort-subscriptions.ts), not one each.
    const unsubscribe =
      request.signal !== undefined
        ? onAbort(request.signal, () => {
            state.aborted = true;
            kill();
          })
        : () => undefined;
    const finish = (): void => {
      state.settled = true;
      clearTimeout(timer);
      unsubscribe();
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (state.settled || child.pid !== undefined) return; // a failed kill of a running program changes nothing
      finish();
      reject(startFailure(settings, request, error));
    });
    child.stdout.on('data', (chunk: Buffer) => takeStdout(state, settings, chunk, kill));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => takeStderr(state, chunk));
    // A program that exits without reading its input closes the pipe (EPIPE): not a failure of its own.
    child.stdin.on('error', () => undefined);
    child.stdin.end(
      `${JSON.stringify({ artifact: artifactPath, input: request.input, text: request.text, repeat: request.repeat })}\n`,
    );

    child.on('close', (code: number | null, signalName: NodeJS.Signals | null) => {
      if (state.settled) return;
      finish();
      if (state.aborted) {
        reject(request.signal?.reason);
        return;
      }
      resolve(closedResult(state, settings, code, signalName, Math.round(performance.now() - started)));
    });
  });
}
