/**
 * The `kloop` command: argument parsing and output only; the work is done by
 * the study, evaluator and gate modules.
 *
 * Start-up is kept short: `main` loads only the module of the command being
 * run (see {@link COMMANDS}); `kloop --help` loads none, and shows each
 * command from its entry here.
 *
 * Exit codes: the table of src/cli/session/exit-codes.ts (0 done, 1 failed,
 * 2 bad input or usage, 3 study busy, 4 admission refused, 5 lease lost, 130
 * interrupted). With `--json`, a failure also prints
 * one JSON object on stdout: `{"error": {"code", "message", "file"?, "line"?,
 * "field"?}}`. See docs/reliability.md.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { KloopError, StorageError } from '../errors.ts';
import { setStorageOverride } from '../storage/location.ts';
import { maskSecrets } from '../text/mask-secrets.ts';
import { EXIT, EXIT_CODES_HELP } from './session/exit-codes.ts';

/** Exit codes of the CLI, by name (the one table: src/cli/session/exit-codes.ts), and as `kloop --help` lists them. */
export { EXIT, EXIT_CODES_HELP };

/** Registers one module's command (or commands, or command group) on the program. */
export type RegisterCommands = (program: Command) => void;

/** One top-level command, as `kloop --help` lists it before its module is loaded. */
export interface CommandEntry {
  /** The name typed after `kloop`. */
  name: string;
  /** Its arguments as in its usage line, e.g. `<study> <experiment>`; '' for a command group. */
  arguments: string;
  /** The one-line summary `kloop --help` shows (the start of the command's own description). */
  summary: string;
  /** Loads the command's module and returns its register function. */
  load: () => Promise<RegisterCommands>;
}

/**
 * Every top-level command. A new command is one entry here; its module is
 * imported only when that command runs (or `kloop help <name>` asks for it).
 * `src/cli/main.test.ts` checks each entry against the command its module
 * registers.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'init',
    arguments: '<dir>',
    summary:
      'Write a new study folder that runs: kloop.yaml, program.md (three registers and the invariants), the artifact, a sample corpus',
    load: async () => (await import('./commands/init.ts')).registerInitCommand,
  },
  {
    name: 'run',
    arguments: '<study>',
    summary: 'Run (or continue) the loop on a study folder until a stopping criterion holds.',
    load: async () => (await import('./commands/run.ts')).registerRunCommand,
  },
  {
    name: 'eval',
    arguments: '<study>',
    summary:
      'Score one artifact (default: the active version) on the study corpus and print components and per-example diagnostics.',
    load: async () => (await import('./commands/eval.ts')).registerEvalCommand,
  },
  {
    name: 'history',
    arguments: '<study>',
    summary:
      'List every experiment of a study: round, decision, reason, composite, Δ, p-value and delta; then the failed proposer answers, the runs that stopped on a problem (with why), and the moves of the active version (who activated what).',
    load: async () => (await import('./commands/history.ts')).registerHistoryCommands,
  },
  {
    name: 'show',
    arguments: '<study> <experiment>',
    summary: 'Show one experiment: its delta, decision and the evidence of every gate check.',
    load: async () => (await import('./commands/history.ts')).registerHistoryCommands,
  },
  {
    name: 'calibrate',
    arguments: '<study>',
    summary: 'Measure the evaluator before trusting it: its noise, its signal and the margin τ.',
    load: async () => (await import('./commands/calibrate.ts')).registerCalibrateCommands,
  },
  {
    name: 'status',
    arguments: '<study>',
    summary: 'Show a study at a glance: active version, experiments by decision, calibrations, the last run.',
    load: async () => (await import('./commands/status.ts')).registerStatusCommand,
  },
  {
    name: 'build',
    arguments: '<study> <goal>',
    summary: 'Build an app from one goal text: intent, assembly onto the pattern library, structural gates and SQL.',
    load: async () => (await import('./commands/build.ts')).registerBuildCommand,
  },
  {
    name: 'review',
    arguments: '<study> [action] [id]',
    summary: 'List the review queue (Loop A candidates, Loop C/D findings), or approve or reject one item.',
    load: async () => (await import('./commands/review.ts')).registerReviewCommand,
  },
  {
    name: 'export',
    arguments: '<study>',
    summary: 'Write an artifact version to a file: the best (the active version, default) or one by id.',
    load: async () => (await import('./commands/export.ts')).registerExportCommand,
  },
  {
    name: 'doctor',
    arguments: '<study>',
    summary: 'Check a study: its database, its set-up and the power of its partitions.',
    load: async () => (await import('./commands/doctor.ts')).registerDoctorCommand,
  },
  {
    name: 'config',
    arguments: '<study>',
    summary:
      'Print the effective configuration of a study: every key of kloop.yaml that applies to it, the value a run uses and its source',
    load: async () => (await import('./commands/config.ts')).registerConfigCommand,
  },
  {
    name: 'corpus',
    arguments: '',
    summary: 'The corpus lifecycle: admission, status, history and importers (docs/corpus.md).',
    load: async () => (await import('./commands/corpus.ts')).registerCorpusCommands,
  },
  {
    name: 'signals',
    arguments: '',
    summary: 'Production signals (Loop D) and pattern mining (Loop C): ingest, report, mine. See docs/loops-c-d.md.',
    load: async () => (await import('./commands/signals.ts')).registerSignalsCommands,
  },
  {
    name: 'serve',
    arguments: '<study>',
    summary:
      'Serve the signal endpoint (POST /signals) for a study, or POST /assign and POST /outcomes for an online study: bearer token, body-size and rate limits, 127.0.0.1 by default.',
    load: async () => (await import('./commands/serve.ts')).registerServeCommand,
  },
  {
    name: 'schedule',
    arguments: '<study>',
    summary:
      'Run the fast loop (B) and the slow analyses (A, C, D) on the cadences of `schedule` in kloop.yaml, without overlaps.',
    load: async () => (await import('./commands/schedule.ts')).registerScheduleCommand,
  },
  {
    name: 'reset',
    arguments: '<study>',
    summary:
      'Start a study afresh: its lab notebook (experiments, versions, calibrations, cache, corpus lifecycle) is moved to .kloop/backups/<time>/ and the next run starts from the seed artifact and the corpus files.',
    load: async () => (await import('./commands/reset.ts')).registerResetCommand,
  },
  {
    name: 'view',
    arguments: '<study>',
    summary:
      "Open a local web viewer of a study on 127.0.0.1: the composite over experiments, every experiment's checks and per-example changes, versions side by side and rollback, the corpus lifecycle, the review queue and Loop D's signals",
    load: async () => (await import('./commands/view.ts')).registerViewCommand,
  },
  {
    name: 'diff',
    arguments: '<study> <a> <b>',
    summary:
      'Show the difference between two artifact versions of a study as a unified diff (versions by id, or "seed" and "active").',
    load: async () => (await import('./commands/diff.ts')).registerDiffCommand,
  },
  {
    name: 'activate',
    arguments: '<study> <version>',
    summary: 'Make a stored version the active one (a rollback), recorded in the notebook with who did it (--by).',
    load: async () => (await import('./commands/activate.ts')).registerActivateCommand,
  },
  {
    name: 'worker',
    arguments: '[study]',
    summary:
      "Take a study's evaluation jobs from the job queue in its PostgreSQL database (enqueued by kloop run --workers), run the executor and write the results; on this machine or others.",
    load: async () => (await import('./commands/worker.ts')).registerWorkerCommand,
  },
  {
    name: 'migrate-storage',
    arguments: '<study>',
    summary:
      "Copy a study's SQLite notebook (.kloop/kloop.db) into an empty PostgreSQL schema, every row with its id; then point the study at it (storage: in kloop.yaml, or --db). The SQLite file is kept.",
    load: async () => (await import('./commands/migrate-storage.ts')).registerMigrateStorageCommand,
  },
  {
    name: 'report',
    arguments: '<study>',
    summary:
      'Write a report of a study to share: html (one self-contained file with the charts, opens offline), csv (one row per experiment) or json (everything).',
    load: async () => (await import('./commands/report.ts')).registerReportCommand,
  },
];

/** kloop's version, from its package.json (two folders up from src/cli/ and dist/cli/). */
function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/** The program with its own options and output settings, before any command (subcommands inherit these settings). */
function createBareProgram(): Command {
  const program = new Command();
  program
    .name('kloop')
    .description(
      'A self-improving loop that cannot fool itself: proposes edits to an artifact, measures them with a frozen ' +
        'evaluator on a labelled corpus, and keeps a change only when statistics, anchors and a shadow hold-out agree.',
    )
    .version(packageVersion())
    // `--db` is taken out of the arguments by main() wherever it stands (takeDbOption); declared here for --help.
    .option(
      '--db <url>',
      "keep the notebook in this PostgreSQL database (postgres://user@host/db, ?schema=NAME for one schema) instead of kloop.yaml's storage or .kloop/kloop.db; docs/storage.md",
    )
    // Program options only before the command name, so `kloop export --version ID` is the command's own option.
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `\n${EXIT_CODES_HELP}\nExample: kloop run examples/intent`);
  return program;
}

/**
 * Builds the command tree: the real commands of the modules of `load` (by
 * command name), and for every other command a stand-in that only lists it in
 * `kloop --help`. With `load` omitted every module is loaded (tests).
 */
export async function createProgram(load: readonly string[] = COMMANDS.map((entry) => entry.name)): Promise<Command> {
  const program = createBareProgram();
  const registered = new Set<RegisterCommands>();
  for (const entry of COMMANDS) {
    if (!load.includes(entry.name)) continue;
    const register = await entry.load();
    if (registered.has(register)) continue; // one module registers several commands (history and show)
    registered.add(register);
    register(program);
  }
  for (const entry of COMMANDS) {
    if (program.commands.some((command) => command.name() === entry.name)) continue;
    const standIn = program
      .command(`${entry.name}${entry.arguments === '' ? '' : ` ${entry.arguments}`}`)
      .summary(entry.summary);
    if (entry.arguments !== '') standIn.option('--json', 'print one JSON object on stdout');
  }
  return program;
}

/** The command named on the command line (`kloop help NAME` names NAME), or undefined. */
export function commandNameOf(args: readonly string[]): string | undefined {
  const operands = args.filter((arg) => !arg.startsWith('-'));
  const first = operands[0];
  return first === 'help' ? operands[1] : first;
}

/** True when the command line asks for `--json` (before any `--`). */
export function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/** The `--json` form of a failure: `{ error: { code, message, file?, line?, field? } }`. */
export interface JsonError {
  error: { code: string; message: string; file?: string; line?: number; field?: string };
}

/** `commander.unknownOption` → `usage.unknown_option`. */
function usageCode(commanderCode: string): string {
  const name = commanderCode.replace(/^commander\./, '');
  return `usage.${name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}`;
}

/** The `--json` error object of a thrown value. */
export function jsonErrorOf(error: unknown): JsonError {
  if (KloopError.isInstance(error)) {
    return {
      error: {
        code: error.code,
        message: error.detail,
        ...(error.file !== undefined ? { file: error.file } : {}),
        ...(error.line !== undefined ? { line: error.line } : {}),
        ...(error.field !== undefined ? { field: error.field } : {}),
      },
    };
  }
  if (error instanceof CommanderError) {
    const message =
      error.code === 'commander.help' ? 'no command given: see kloop --help' : error.message.replace(/^error: /, '');
    return { error: { code: error.code === 'commander.help' ? 'usage.no_command' : usageCode(error.code), message } };
  }
  return { error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
}

/**
 * A raw SQLite failure that reached the top (a damaged or unreadable study
 * database) as a StorageError with its code, instead of a stack trace.
 */
function sqliteErrorOf(error: unknown): StorageError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (!(error instanceof Error) || typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  return new StorageError(
    `the study database cannot be read: ${error.message} (${code}); \`kloop doctor <study>\` tells a damaged file from an unreadable one`,
    {
      code: `storage.${code.toLowerCase()}`,
      cause: error,
    },
  );
}

/**
 * Takes `--db <url>` (or `--db=<url>`) out of the arguments, wherever it
 * stands before `--`: it applies to every command that opens a study.
 *
 * @returns the URL (the last one given) and the other arguments
 */
export function takeDbOption(args: readonly string[]): { db: string | undefined; args: string[] } {
  const rest: string[] = [];
  let db: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--') {
      rest.push(...args.slice(index));
      break;
    }
    if (arg === '--db' && index + 1 < args.length) {
      db = args[index + 1];
      index += 1;
    } else if (arg.startsWith('--db=')) db = arg.slice('--db='.length);
    else rest.push(arg);
  }
  return { db, args: rest };
}

/** Runs the CLI with `argv` (process.argv shape); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const taken = takeDbOption(argv.slice(2));
  const args = taken.args;
  argv = [...argv.slice(0, 2), ...args];
  const json = wantsJson(args);
  // Whatever fails, a password in its message (a storage URL in a driver's error) is masked (src/text/mask-secrets.ts).
  const fail = (error: unknown, exitCode: number): number => {
    if (json) process.stdout.write(`${maskSecrets(JSON.stringify(jsonErrorOf(error), null, 2))}\n`);
    return exitCode;
  };
  try {
    setStorageOverride(taken.db);
    const name = commandNameOf(args);
    const program = await createProgram(name === undefined ? [] : [name]);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
      // `kloop help` asked for help (exit code 0); `kloop` or `kloop corpus` alone is a usage error.
      if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.ok : fail(error, EXIT.badInput);
      return fail(error, EXIT.badInput);
    }
    if (KloopError.isInstance(error)) {
      process.stderr.write(`kloop: ${error.message}\n`);
      return fail(error, error.exitCode);
    }
    const sqlite = sqliteErrorOf(error);
    if (sqlite !== undefined) {
      process.stderr.write(maskSecrets(`kloop: ${sqlite.message}\n`));
      return fail(sqlite, sqlite.exitCode);
    }
    process.stderr.write(
      maskSecrets(
        `kloop: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      ),
    );
    return fail(error, EXIT.failed);
  }
}
