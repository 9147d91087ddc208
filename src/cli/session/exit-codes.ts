/**
 * The exit codes of the `kloop` command: the one table every command, the
 * session runner (./session-runner.ts), `kloop --help` and
 * docs/reliability.md ("Exit codes") agree on. A test checks the documented
 * table against this one, code by code (src/cli/session/exit-codes.test.ts).
 *
 * The codes that errors carry are also defined beside the errors (a study
 * held by another process: `STUDY_BUSY_EXIT_CODE` of src/storage/lease.ts; a
 * lease lost: `LEASE_LOST_EXIT_CODE` of src/storage/write-fence.ts); they are
 * written out here, not imported, so that `kloop --help` loads no storage
 * module, and the test checks they agree.
 */
import { INTERRUPTED_EXIT_CODE } from '../../loop/stop-reasons.ts';

/** One exit code: its number and the line `kloop --help` gives it. */
export interface ExitCodeEntry {
  /** The process exit code. */
  code: number;
  /** What it means, one line, as `kloop --help` lists it. */
  help: string;
}

/**
 * Every exit code of the CLI, by name, in increasing order of code.
 * `admissionRefused` (4) is `kloop corpus add`'s alone; every other code may
 * end any command.
 */
export const EXIT_CODES = Object.freeze({
  ok: {
    code: 0,
    help: 'done: the run stopped on a criterion (target, plateau, budget, ...: each stop reason and its code in docs/reliability.md); doctor: healthy',
  },
  failed: {
    code: 1,
    help: 'failed: the run stopped on a problem (infrastructure failure, failures in a row, failure rate) or storage failed; eval: nothing valid came back; doctor: problems found',
  },
  badInput: {
    code: 2,
    help: 'bad input or usage (file, line and field named); nothing was written; eval: nothing to evaluate (an empty corpus)',
  },
  studyBusy: {
    code: 3,
    help: 'the study is being run by another process (kloop run --wait waits instead)',
  },
  admissionRefused: {
    code: 4,
    help: 'kloop corpus add: the admission gate refused some records (listed and recorded); the others were admitted',
  },
  leaseLost: {
    code: 5,
    help: "this run lost the study's lease to another process (it looked dead: paused, or cut off from the database); its writes were refused from the take-over on",
  },
  interrupted: {
    code: INTERRUPTED_EXIT_CODE,
    help: 'interrupted (Ctrl-C, SIGTERM or a closed output pipe); the run is recorded as interrupted and the next run continues',
  },
} satisfies Record<string, ExitCodeEntry>);

/** A name of {@link EXIT_CODES}. */
export type ExitCodeName = keyof typeof EXIT_CODES;

/** The exit codes by name: `EXIT.interrupted` is 130. */
export const EXIT: Readonly<Record<ExitCodeName, number>> = Object.freeze(
  Object.fromEntries(Object.entries(EXIT_CODES).map(([name, entry]) => [name, entry.code])) as Record<
    ExitCodeName,
    number
  >,
);

/** The exit codes as `kloop --help` lists them (from {@link EXIT_CODES}). */
export const EXIT_CODES_HELP = [
  'Exit codes:',
  ...Object.values(EXIT_CODES).map((entry) => `  ${String(entry.code).padEnd(5)}${entry.help}`),
  'With --json, a failure also prints {"error": {"code", "message", "file", "line", "field"}} on stdout.',
].join('\n');
