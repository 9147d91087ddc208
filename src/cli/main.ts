/**
 * The `kloop` command: argument parsing and output only; the work is done by
 * the study, evaluator and gate modules.
 *
 * Exit codes: 0 done, 1 the run failed, 2 bad input or usage.
 */
import { Command, CommanderError } from 'commander';
import { KloopError } from '../errors.ts';
import { registerCalibrateCommands } from './commands/calibrate.ts';
import { registerEvalCommand } from './commands/eval.ts';
import { registerHistoryCommands } from './commands/history.ts';
import { registerRunCommand } from './commands/run.ts';

/** Exit codes of the CLI. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, badInput: 2 });

/** Builds the command tree (exported for tests and `--help`). */
export function createProgram(): Command {
  const program = new Command();
  program
    .name('kloop')
    .description(
      'A self-improving loop that cannot fool itself: proposes edits to an artifact, measures them with a frozen\n' +
        'evaluator on a labelled corpus, and keeps a change only when statistics, anchors and a shadow hold-out agree.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 the run failed, 2 bad input or usage.\nExample: kloop run examples/intent',
    );
  registerRunCommand(program);
  registerEvalCommand(program);
  registerHistoryCommands(program);
  registerCalibrateCommands(program);
  return program;
}

/** Runs the CLI with `argv` (process.argv shape); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = createProgram();
  program.exitOverride();
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
      return EXIT.badInput;
    }
    if (error instanceof KloopError) {
      process.stderr.write(`kloop: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`kloop: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.failed;
  }
}
