/**
 * `kloop run <study> --simulate [--days N]`: the study against its simulated
 * audience (src/online/simulate/simulate-study.ts), then the report of the
 * last slow-loop step, labelled SIMULATED on every line that states a
 * result, in text or as one JSON object (`"simulated": true`).
 */
import { simulateOnlineStudy } from '../../online/simulate/simulate-study.ts';
import { print, printJson, progress } from '../output.ts';
import { onlineExitCode, slowLoopReportLines } from './online-report.ts';
import type { OnlineRunOptions } from './online-run.ts';

/** Runs the simulation and prints its report; sets `process.exitCode` (that of the last step's stop, else 0). */
export async function runSimulateCommand(studyDir: string, options: OnlineRunOptions): Promise<void> {
  const result = await simulateOnlineStudy(studyDir, {
    ...(options.days === undefined ? {} : { days: options.days }),
    onStep: (report, day) => {
      for (const decided of report.decided)
        progress(
          `SIMULATED day ${day + 1}: experiment ${decided.id} ${decided.status}${decided.reason === null || decided.reason === decided.status ? '' : ` (${decided.reason})`}`,
          options.quiet === true || options.json === true,
        );
    },
  });
  const exitCode = onlineExitCode(result.report);
  if (options.json === true) {
    printJson({
      mode: 'online',
      simulated: true,
      label: 'SIMULATED',
      study: studyDir,
      exitCode,
      days: result.days,
      units: result.units,
      outcomes: result.outcomes,
      notebook: result.notebook,
      ...result.report,
    });
  } else {
    print(
      `SIMULATED run: ${result.days} simulated days, ${result.units} simulated recipients, ${result.outcomes.stored} outcomes (${result.outcomes.refused} refused); notebook ${result.notebook}`,
    );
    for (const line of slowLoopReportLines(result.report, studyDir, true)) print(line);
  }
  process.exitCode = exitCode;
}
