/**
 * The command executor: runs any program on one example. The artifact under
 * optimization is a file the program reads (a rules file, a configuration, a
 * prompt, a script); the program prints the task's output as JSON.
 *
 * Protocol, for each execution:
 *
 * 1. The artifact's text is written once to a content-addressed file,
 *    `<os.tmpdir()>/kloop-artifacts/<32 hex digits of its SHA-256><artifactExtension>`
 *    (see `artifact-files.ts`), reused for equal texts.
 * 2. The program (`command[0]` with the arguments `command.slice(1)`,
 *    started without a shell, in `cwd`, with kloop's environment plus `env`
 *    plus `KLOOP_ARTIFACT=<absolute path of the artifact file>`) gets one
 *    JSON line on stdin, then end of input:
 *    `{"artifact":"<absolute path>","input":<the example's input>,"text":"<the input's text>","repeat":<0-based repeat>}`.
 * 3. It prints the task's output as JSON on stdout: the whole stdout, or
 *    its last non-empty line (lines before it may be logs). stderr is kept
 *    for error messages only.
 *
 * Outcomes (never a score, never a throw):
 *
 * | the program | result |
 * |---|---|
 * | exits 0 with JSON | `{ ok: true, output }` (the evaluator checks it against the task's output schema) |
 * | exits 0 with nothing | invalid `empty` |
 * | exits 0 with something else, or prints more than `maxOutputBytes` | invalid `unparsable` (raw capped at 4000 characters) |
 * | exits non-zero, or is killed by a signal | invalid `error`, the message gives the code and the end of stderr |
 * | runs longer than `timeoutMs` | its process group is killed: invalid `timeout`, terminal (an outcome of the artifact, not transient) |
 *
 * It throws only what must stop the run: an {@link InfrastructureError}
 * when the program cannot be started at all (no such program, not
 * executable, no such `cwd`: no candidate could ever run), a StorageError
 * when the artifact file cannot be written, and the reason of an aborted
 * `signal` (the program is killed first).
 *
 * At most `concurrency` programs of one executor run at once, across all
 * its calls. On POSIX each program leads its own process group, so a
 * timeout or an abort also kills what it started (a shell's children,
 * `npx`'s node); if kloop itself dies, running programs are not killed.
 *
 * @module
 */
import path from 'node:path';
import { z } from 'zod';
import { contentHash } from '../../artifact/content-hash.ts';
import { InputError } from '../../errors.ts';
import { stableJson } from '../../text/stable-json.ts';
import type { ExecutionRequest, ExecutionResult, Executor } from '../executor.ts';
import { createArtifactFiles } from './artifact-files.ts';
import { type ProgramSettings, runProgram } from './run-program.ts';
import { createSemaphore } from './semaphore.ts';

/** Implementation version, part of the executor id's hash. Bump when the protocol changes. */
export const COMMAND_EXECUTOR_VERSION = 'command@1';
/** Default most time one program may run, in milliseconds. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
/** Default most programs running at once. */
export const DEFAULT_COMMAND_CONCURRENCY = 4;
/** Default most bytes read from one program's stdout (1 MiB). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1_048_576;
export { STDERR_TAIL_CHARACTERS } from './run-program.ts';

/** Settings of {@link createCommandExecutor}. */
export interface CommandExecutorOptions {
  /** The program and its arguments (argv), e.g. `['node', 'route.mjs']`; no shell: write `['sh', '-c', '…']` for one. */
  command: readonly string[];
  /** The folder the program runs in (the study folder); relative paths are resolved against `process.cwd()`. */
  cwd: string;
  /** Most time one program may run, in milliseconds; an integer ≥ 1. Default 30 000. */
  timeoutMs?: number;
  /** Most programs running at once, across all calls of this executor; an integer ≥ 1. Default 4. */
  concurrency?: number;
  /** Variables added to kloop's environment (which the program inherits). Their names and values are part of the id's hash. */
  env?: Readonly<Record<string, string>>;
  /** Most bytes read from stdout; a program printing more is killed and its output is `unparsable`. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Appended to the artifact file's name, e.g. `.yaml` (the artifact's own extension); `''` or a dot and letters, digits, `.`, `_`, `-`. Default `''`. */
  artifactExtension?: string;
  /** Folder of the artifact files. Default `<os.tmpdir()>/kloop-artifacts`. */
  artifactDirectory?: string;
  /** The user asserts the program answers identically for identical requests. Default false. */
  deterministic?: boolean;
}

const positiveInteger = (what: string) =>
  z.number().int(`${what} must be a whole number`).min(1, `${what} must be at least 1`);

const optionsSchema = z.strictObject({
  command: z
    .array(
      z.string().refine((argument) => !argument.includes('\u0000'), 'an argument contains a NUL character'),
      'command must be a list of strings (argv)',
    )
    .min(1, 'command is empty: give the program and its arguments, e.g. [node, route.mjs]')
    .refine((argv) => (argv[0] ?? '').trim() !== '', 'command[0] (the program) is blank'),
  cwd: z.string().min(1, 'cwd is empty'),
  timeoutMs: positiveInteger('timeoutMs').default(DEFAULT_COMMAND_TIMEOUT_MS),
  concurrency: positiveInteger('concurrency').default(DEFAULT_COMMAND_CONCURRENCY),
  env: z.record(z.string().min(1, 'an env name is empty'), z.string()).optional(),
  maxOutputBytes: positiveInteger('maxOutputBytes').default(DEFAULT_MAX_OUTPUT_BYTES),
  artifactExtension: z
    .string()
    .regex(
      /^(|\.[A-Za-z0-9._-]+)$/,
      'artifactExtension must be empty or a dot followed by letters, digits, ".", "_" or "-" (e.g. ".yaml")',
    )
    .default(''),
  artifactDirectory: z.string().min(1).optional(),
  deterministic: z.boolean().default(false),
});

type Settings = z.infer<typeof optionsSchema>;

/** The options checked, defaults filled in; throws InputError (field `executor.<setting>`) naming the first problem. */
function parseOptions(options: CommandExecutorOptions): Settings {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? `executor.${issue.path.map(String).join('.')}` : 'executor';
    throw new InputError(`command executor: ${issue.message}`, { field });
  }
  return parsed.data;
}

/** `command:` and 16 hex digits of the hash of the settings that change answers. */
function executorId(settings: Settings): string {
  return `command:${contentHash(
    stableJson({
      version: COMMAND_EXECUTOR_VERSION,
      command: settings.command,
      timeoutMs: settings.timeoutMs,
      maxOutputBytes: settings.maxOutputBytes,
      artifactExtension: settings.artifactExtension,
      env: settings.env ?? {},
    }),
  ).slice(0, 16)}`;
}

/** The command as one line for messages, arguments with blanks or quotes JSON-quoted. */
function shownCommand(command: readonly string[]): string {
  return command.map((argument) => (/[\s"']/.test(argument) ? JSON.stringify(argument) : argument)).join(' ');
}

/**
 * Creates the command executor (see the module comment for the protocol).
 *
 * The id is `command:` and 16 hex digits of the SHA-256 of the settings
 * that change answers: the implementation version, `command`, `timeoutMs`,
 * `maxOutputBytes`, `artifactExtension` and `env` (not `cwd`, so a moved
 * study keeps its results; not `concurrency`). `deterministic` is
 * `options.deterministic` (default false).
 *
 * @throws InputError (field `executor.<setting>`) when a setting is not valid
 * @example
 * ```ts
 * const executor = createCommandExecutor({ command: ['node', 'route.mjs'], cwd: studyFolder, timeoutMs: 10_000, artifactExtension: '.yaml' });
 * const result = await executor.execute({ input: 'My card was charged twice', text: 'My card was charged twice', artifact: rulesText, repeat: 0 });
 * if (result.ok) console.log(result.output); // e.g. { label: 'billing' }
 * ```
 */
export function createCommandExecutor(options: CommandExecutorOptions): Executor {
  const settings = parseOptions(options);
  const [program, ...args] = settings.command as [string, ...string[]];
  const files = createArtifactFiles(settings.artifactDirectory, settings.artifactExtension);
  const semaphore = createSemaphore(settings.concurrency);
  const id = executorId(settings);
  const programSettings: ProgramSettings = {
    program,
    args,
    cwd: path.resolve(settings.cwd),
    env: settings.env,
    timeoutMs: settings.timeoutMs,
    maxOutputBytes: settings.maxOutputBytes,
    shown: shownCommand(settings.command),
  };

  return {
    id,
    deterministic: settings.deterministic,
    maxInFlight: settings.concurrency,
    async execute(request: ExecutionRequest): Promise<ExecutionResult> {
      const started = performance.now();
      if (request.signal?.aborted) throw request.signal.reason;
      const artifactPath = await files.pathFor(request.artifact);
      const release = await semaphore.acquire(request.signal);
      try {
        return await runProgram(programSettings, artifactPath, request, started);
      } finally {
        release();
      }
    },
  };
}
