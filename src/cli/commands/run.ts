/**
 * `kloop run <study>`: run or continue the optimization loop.
 *
 * One writer per study: the run holds the study's lease (src/storage/lease.ts)
 * with a heartbeat; a second run refuses (exit 3) or, with `--wait`, waits.
 * Ctrl-C (or SIGTERM, or a closed output pipe) abandons the evaluations in
 * flight, records the run as `interrupted`, releases the lease and exits 130;
 * the next run continues. The session (lease, heartbeat, interrupts, exit
 * code) is the session runner's (src/cli/session/session-runner.ts); Loop B
 * is ./run-offline.ts, Loop A ./loop-a.ts, an online study ./online-run.ts.
 * See docs/reliability.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { INTERRUPTED_EXIT_CODE, exitCodeOf } from '../../loop/stop-reasons.ts';
import { studyModeOf } from '../../online/config.ts';
import { INTERRUPT_GRACE_MS } from '../session/session-runner.ts';
import { parseLoopOption, runLoopACommand } from './loop-a.ts';
import { runOfflineCommand } from './run-offline.ts';
import { STOP_REASON_MEANINGS, describeComparison, printReport } from './run-report.ts';
import type { OfflineRunOptions } from './run-start.ts';
import { runOnlineCommand } from './online-run.ts';
import { addModelOptions, assertStudyWritable } from './study-session.ts';

/** Exit code of an interrupted run (128 + SIGINT), as shells report it. */
export { INTERRUPTED_EXIT_CODE };
/** After the first Ctrl-C, the run is given this long (milliseconds) to wind down before it is ended anyway (the session runner's). */
export { INTERRUPT_GRACE_MS };

/** The exit code of a run that stopped for `stopReason` (the table of src/loop/stop-reasons.ts): 0 done, 1 failed, 130 interrupted. */
export { exitCodeOf };

/** What each stop reason means, the comparison lines and the text report (kept here for their callers). */
export { STOP_REASON_MEANINGS, describeComparison, printReport };

/** Refuses a study folder kloop cannot write (exit 2), before anything is written (kept here for its callers). */
export { assertStudyWritable };

export function registerRunCommand(program: Command): void {
  addModelOptions(
    program
      .command('run')
      .description('Run (or continue) the loop on a study folder until a stopping criterion holds.')
      .argument('<study>', 'study folder (holds kloop.yaml, program.md, the artifact and the corpus)')
      .option('--json', 'print one JSON report object on stdout')
      .option('--quiet', 'no progress lines on stderr')
      .option('--calibrate', 'calibrate the evaluator first (noise, signal, τ) and use it')
      .option('--max-experiments <n>', 'override stopping.maxExperiments (a study total)', parseCount)
      .option(
        '--loop <A|B>',
        'B: the optimization loop with its automatic ratchet (default); A: the end-to-end loop (intent studies only), whose candidates go to the review queue',
      )
      .option('--wait', 'when another run holds the study, wait for it to finish instead of exiting with code 3')
      .option(
        '--git',
        'commit each accepted version to the git notebook in .kloop/notebook (as notebook.git: true in kloop.yaml)',
      )
      .option(
        '--workers',
        "send the evaluations to `kloop worker` processes through the job queue of the study's PostgreSQL database (docs/storage.md)",
      )
      .option('--batch-size <n>', 'with --workers: examples per evaluation job (default 4)', parseBatchSize)
      .option(
        '--simulate',
        'online studies: play the study against its simulated audience on a simulated clock (offline, no key; labelled SIMULATED); docs/online.md',
      )
      .option('--days <n>', 'with --simulate: simulated days of traffic (default 42)', parseCount),
  ).action(runCommand);
}

/** `kloop run`'s action: an online study, Loop A, or Loop B (./run-offline.ts); sets `process.exitCode`. */
async function runCommand(
  studyDir: string,
  options: OfflineRunOptions & { simulate?: boolean; days?: number; loop?: string },
): Promise<void> {
  // An online study (mode: online) runs one step of its slow loop (src/online/); the rest of this command is the offline loop.
  if (existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online')
    return runOnlineCommand(studyDir, options);
  if (options.simulate === true || options.days !== undefined)
    throw new InputError('--simulate and --days apply to online studies only (mode: online in kloop.yaml)', {
      field: '--simulate',
    });
  if (options.batchSize !== undefined && options.workers !== true)
    throw new InputError('--batch-size sets the size of the jobs of --workers: give --workers too, or leave it out', {
      field: '--batch-size',
    });
  assertStudyWritable(studyDir);
  if (parseLoopOption(options.loop) === 'A') return runLoopACommand(studyDir, options);
  return runOfflineCommand(studyDir, options);
}

function parseBatchSize(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InputError(`expected a whole number ≥ 1, got "${value}"`, { field: '--batch-size' });
  return parsed;
}

function parseCount(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new InputError(`expected a whole number ≥ 0, got "${value}"`, { field: '--max-experiments' });
  return parsed;
}
