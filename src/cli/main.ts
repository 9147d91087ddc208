/**
 * The `kloop` command: argument parsing and output only; the work is done by
 * the study, evaluator and gate modules.
 *
 * Exit codes: 0 done, 1 the run failed (or `doctor` found problems), 2 bad
 * input or usage, 3 the study is being run by another process, 130
 * interrupted. See docs/reliability.md.
 */
import { Command, CommanderError } from 'commander';
import { KloopError } from '../errors.ts';
import { registerCalibrateCommands } from './commands/calibrate.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerExportCommand } from './commands/export.ts';
import { registerCorpusCommands } from './commands/corpus.ts';
import { registerEvalCommand } from './commands/eval.ts';
import { registerHistoryCommands } from './commands/history.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerBuildCommand } from './commands/build.ts';
import { registerResetCommand } from './commands/reset.ts';
import { registerReviewCommand } from './commands/review.ts';
import { registerScheduleCommand } from './commands/schedule.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSignalsCommands } from './commands/signals.ts';
import { registerViewCommand } from './commands/view.ts';
import { registerDiffCommand } from './commands/diff.ts';
import { registerActivateCommand } from './commands/activate.ts';
import { registerReportCommand } from './commands/report.ts';

/** Exit codes of the CLI. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, badInput: 2, studyBusy: 3, interrupted: 130 });

/** The exit codes as `kloop --help` lists them. */
export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0    done: the run stopped on a criterion (target, plateau, budget, max experiments or rounds); doctor: healthy',
  '  1    failed: consecutive failures, failure rate, infrastructure or storage failure; doctor: problems found',
  '  2    bad input or usage (file, line and field named); nothing was written',
  '  3    the study is being run by another process (kloop run --wait waits instead)',
  '  4    kloop corpus add: the admission gate refused some records (listed and recorded); the others were admitted',
  '  130  interrupted (Ctrl-C or SIGTERM); the run is recorded as interrupted and the next run continues',
].join('\n');

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
    // Program options only before the command name, so `kloop export --version ID` is the command's own option.
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `\n${EXIT_CODES_HELP}\nExample: kloop run examples/intent`,
    );
  registerRunCommand(program);
  registerEvalCommand(program);
  registerHistoryCommands(program);
  registerCalibrateCommands(program);
  registerBuildCommand(program);
  registerReviewCommand(program);
  registerExportCommand(program);
  registerDoctorCommand(program);
  registerCorpusCommands(program);
  registerResetCommand(program);
  registerSignalsCommands(program);
  registerServeCommand(program);
  registerScheduleCommand(program);
  registerViewCommand(program);
  registerDiffCommand(program);
  registerActivateCommand(program);
  registerReportCommand(program);
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
