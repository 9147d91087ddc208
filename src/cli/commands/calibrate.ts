/** `kloop calibrate <study>` (`kloop status` is in status.ts): a session of the session runner (src/cli/session/session-runner.ts). */
import type { Command } from 'commander';
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { CalibrationResult } from '../../calibration/calibration.ts';
import { DEFAULT_CALIBRATION_SETTINGS, calibrateStudy, listCalibrations } from '../../calibration/calibration.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import type { StudyEvaluatorOptions } from '../../loop/evaluate-partition.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import { EXIT } from '../session/exit-codes.ts';
import { runSession } from '../session/session-runner.ts';
import { print, printJson, progress, table } from '../output.ts';
import type { ModelOptions } from './study-session.ts';
import { addModelOptions, assertStudyWritable, openStudy } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

/** Runs a calibration of the study's incumbent with the study's settings. */
export async function calibrate(
  study: LoadedStudy,
  db: StudyDatabase,
  quiet: boolean,
  storedResults: StudyEvaluatorOptions = {},
  signal?: AbortSignal,
): Promise<CalibrationResult> {
  const gate = study.config?.gate;
  progress(
    `kloop: calibrating ${study.dir}: noise ${gate?.noiseRepeats ?? DEFAULT_CALIBRATION_SETTINGS.noiseRepeats} repeats, signal ${gate?.signalRepeats ?? DEFAULT_CALIBRATION_SETTINGS.signalRepeats} repeats`,
    quiet,
  );
  return calibrateStudy({
    study,
    db,
    evaluator: createStudyEvaluator(study, openNotebook(db), storedResults),
    model: study.config?.executor.model ?? study.executor.id,
    settings: {
      noiseRepeats: gate?.noiseRepeats ?? DEFAULT_CALIBRATION_SETTINGS.noiseRepeats,
      signalRepeats: gate?.signalRepeats ?? DEFAULT_CALIBRATION_SETTINGS.signalRepeats,
      thresholdK: gate?.thresholdK ?? DEFAULT_CALIBRATION_SETTINGS.thresholdK,
      calibrationWindow: gate?.calibrationWindow ?? DEFAULT_CALIBRATION_SETTINGS.calibrationWindow,
      minCohensD: gate?.minCohensD ?? DEFAULT_CALIBRATION_SETTINGS.minCohensD,
    },
    ...(signal !== undefined ? { signal } : {}),
  });
}

export function registerCalibrateCommands(program: Command): void {
  addModelOptions(
    program
      .command('calibrate')
      .description(
        'Measure the evaluator before trusting it: its noise, its signal and the margin τ. Noise (the incumbent evaluated noiseRepeats times → run-to-run SD and per-example SDs), ' +
          "signal (incumbent vs an ablated artifact → Cohen's d) and the margin τ = k × rolling max noise SD.",
      )
      .argument('<study>', 'study folder')
      .option('--json', 'print one JSON object on stdout')
      .option('--quiet', 'no progress lines on stderr'),
  ).action(calibrateCommand);
}

/** `kloop calibrate`'s action: the calibration in a session of the session runner; sets `process.exitCode` (0 valid, 1 not, 130 interrupted). */
async function calibrateCommand(studyDir: string, options: ModelOptions & { json?: boolean }): Promise<void> {
  assertStudyWritable(studyDir, 'kloop calibrate');
  const session = await openStudy(studyDir, { ...options, modelCalls: 'executor' });
  const message = 'interrupted: the calibration was not stored';
  // One writer per study: a calibration stored while `kloop run` holds the study would change τ under it.
  // Ctrl-C or SIGTERM: the calls in flight are aborted, nothing is stored, the lease is given back, exit 130.
  await runSession(
    {
      quiet: options.quiet === true,
      json: options.json === true,
      lease: { db: session.db, studyKey: session.study.dir, location: studyDatabaseLocation(session.study.dir) },
      interruptedReport: () => ({ message, json: { interrupted: true, message } }),
      close: () => session.close(),
    },
    async (context) => {
      const result = await calibrate(
        session.study,
        session.db,
        options.quiet === true,
        options.cache === false ? { readSince: new Date().toISOString() } : {},
        context.signal,
      );
      const history = await listCalibrations(session.db, result.record.fingerprint);
      if (options.json === true) printJson({ ...result, calibrations: history });
      else printCalibration(result);
      return result.ok ? EXIT.ok : EXIT.failed;
    },
  );
}

/** The text report of a calibration: its message and one row of figures. */
function printCalibration(result: CalibrationResult): void {
  print(result.message);
  print(
    table([
      ['noise SD', "Cohen's d", 'τ', 'valid', 'noise repeats', 'signal repeats', 'fingerprint'],
      [
        result.record.noiseSd.toFixed(6),
        result.record.cohensD === null ? '—' : result.record.cohensD.toFixed(3),
        result.record.threshold.toFixed(6),
        result.record.valid ? 'yes' : 'NO',
        String(result.record.noiseRepeats),
        String(result.record.signalRepeats),
        result.record.fingerprint,
      ],
    ]),
  );
}
