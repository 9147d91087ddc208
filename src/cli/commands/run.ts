/** `kloop run <study>`: run or continue the optimization loop. */
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import type { RunEvent } from '../../study/run-study.ts';
import { createStudyEvaluator, runStudy } from '../../study/run-study.ts';
import type { StudyReport } from '../../study/report.ts';
import { buildStudyReport } from '../../study/report.ts';
import { formatScore, print, printJson, progress, table } from '../output.ts';
import { latestCalibration } from '../../study/calibration.ts';
import { calibrate } from './calibrate.ts';
import type { ModelOptions } from './study-session.ts';
import { addModelOptions, openStudy } from './study-session.ts';

/** Stop reasons that mean the run failed (exit code 1). */
const FAILED_STOPS = new Set(['infrastructure_failure', 'consecutive_failures']);

export function registerRunCommand(program: Command): void {
  addModelOptions(
    program
      .command('run')
      .description('Run (or continue) the loop on a study folder until a stopping criterion holds.')
      .argument('<study>', 'study folder (holds kloop.yaml, program.md, the artifact and the corpus)')
      .option('--json', 'print one JSON report object on stdout')
      .option('--quiet', 'no progress lines on stderr')
      .option('--calibrate', 'calibrate the evaluator first (noise, signal, τ) and use it')
      .option('--max-experiments <n>', 'override stopping.maxExperiments (a study total)', parseCount),
  ).action(async (studyDir: string, options: ModelOptions & { json?: boolean; calibrate?: boolean; maxExperiments?: number }) => {
      const started = Date.now();
      const session = await openStudy(studyDir, options);
      const quiet = options.quiet === true;
      const controller = new AbortController();
      let interrupts = 0;
      const onSignal = (): void => {
        interrupts += 1;
        if (interrupts > 1) process.exit(130);
        progress('kloop: interrupted — finishing the decision in flight (press Ctrl-C again to quit at once)');
        controller.abort(new Error('interrupted'));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const study = session.study;
        if (options.maxExperiments !== undefined) study.stopping.maxExperiments = options.maxExperiments;
        session.plugins.checkBudget(study);
        const fingerprint = createStudyEvaluator(study).fingerprint;
        if (options.calibrate === true) {
          const result = await calibrate(study, session.db, quiet);
          progress(`kloop: ${result.message}`, quiet);
          if (!result.ok) throw new InputError(`calibration failed: ${result.message}`, { file: study.dir, field: 'calibration' });
        }
        const calibration = await latestCalibration(session.db, fingerprint);
        if (calibration === undefined && study.gate.requireCalibration) {
          throw new InputError('this study requires a valid calibration for the current evaluator (gate.requireCalibration): run `kloop calibrate` first, or `kloop run --calibrate`', {
            file: study.config?.configPath ?? study.dir,
            field: 'gate.requireCalibration',
          });
        }
        progress(`kloop: ${study.dir} — ${study.corpus.length} examples (optimization ${study.partitions.optimization.length}, anchor ${study.partitions.anchor.length}, shadow ${study.partitions.shadow.length}), executor ${study.executor.id}, proposer ${study.proposer.id}`, quiet);
        if (calibration !== undefined) progress(`kloop: calibration ${calibration.record.createdAt}: noise SD ${calibration.record.noiseSd.toFixed(6)}, τ = ${calibration.record.threshold.toFixed(6)}`, quiet);
        else if (study.executor.deterministic) progress('kloop: deterministic executor, no calibration stored: run-to-run noise is 0, τ = 0; the paired test carries the decision', quiet);
        else progress('kloop: WARNING: stochastic executor without a calibration: τ = 0 and no per-example tolerance; run `kloop calibrate` first', quiet);
        const outcome = await runStudy({
          study,
          db: session.db,
          ...(calibration !== undefined ? { calibration: calibration.calibration } : {}),
          signal: controller.signal,
          onEvent: (event) => progress(describeEvent(event), quiet),
        });
        const report = await buildStudyReport(session.db, study, createStudyEvaluator(study, session.db), {
          runId: outcome.runId,
          stopReason: outcome.stopReason,
          stopDetail: outcome.stopDetail,
          wallTimeMs: Date.now() - started,
        });
        const usage = session.plugins.usage();
        const withUsage = { ...report, usage };
        if (options.json === true) printJson(withUsage);
        else printReport(report);
        process.exitCode = FAILED_STOPS.has(outcome.stopReason) ? 1 : 0;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await session.close();
      }
  });
}

function parseCount(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InputError(`expected a whole number ≥ 0, got "${value}"`, { field: '--max-experiments' });
  return parsed;
}

function describeEvent(event: RunEvent): string {
  switch (event.type) {
    case 'start':
      return `run ${event.runId}: evaluator ${event.fingerprint}, ${event.experiments} experiments so far, incumbent version ${event.incumbent}`;
    case 'baseline':
      return `baseline: ${JSON.stringify(event.scores)}`;
    case 'round':
      return `round ${event.round}: ${event.candidates} candidates proposed${event.failures > 0 ? `, ${event.failures} proposal failures` : ''}`;
    case 'decision':
      return `  #${event.experimentId} ${event.decision === 'accepted' ? 'ACCEPTED' : event.decision === 'skipped' ? 'skipped ' : 'refused '} ${event.decision === 'accepted' ? '' : `(${event.reason}) `}${event.delta}${event.optimization !== null ? `  [optimization ${formatScore(event.optimization)}]` : ''}`;
    case 'round-end':
      return `round ${event.round} done: ${event.accepted} accepted, ${event.refused} refused; best optimization composite ${formatScore(event.best)}; delta diversity mean ${formatScore(event.diversity.mean)} min ${formatScore(event.diversity.min)}`;
    case 'stop':
      return `stopped: ${event.reason} — ${event.detail}`;
  }
}

/** Prints the human-readable final report. */
export function printReport(report: StudyReport): void {
  print(`kloop study ${report.study}`);
  print();
  const partitions = ['optimization', 'anchor', 'shadow'] as const;
  const rows = [['', 'partition', 'composite', 'appType', 'entityRecall', 'roleAccuracy', 'behaviorCoverage', 'invalid']];
  for (const [label, details] of [
    [`baseline (v${report.baselineVersion})`, report.details.baseline],
    [`best (v${report.bestVersion})`, report.details.best],
  ] as const) {
    for (const partition of partitions) {
      const summary = details[partition];
      rows.push([
        partition === 'optimization' ? label : '',
        `${partition} (${summary.examples})`,
        formatScore(summary.composite),
        formatScore(summary.components.appType),
        formatScore(summary.components.entityRecall),
        formatScore(summary.components.roleAccuracy),
        formatScore(summary.components.behaviorCoverage),
        String(summary.invalid),
      ]);
    }
  }
  print(table(rows));
  print();
  const refusedTotal = Object.entries(report.refused)
    .filter(([reason]) => reason !== 'duplicate')
    .reduce((sum, [, count]) => sum + count, 0);
  print(`experiments evaluated: ${report.experiments} (this run: ${report.thisRun.experiments}); accepted ${report.accepted}, refused ${refusedTotal}`);
  const reasons = Object.entries(report.refused).sort((left, right) => right[1] - left[1]);
  if (reasons.length > 0) print(`refused or skipped by reason: ${reasons.map(([reason, count]) => `${reason} ${count}`).join(', ')}`);
  print(`stop reason: ${report.stopReason} — ${report.stopDetail}`);
  print(`best artifact: ${report.bestArtifact}`);
  print(`database: ${report.database}`);
  print(`wall time: ${(report.wallTimeMs / 1000).toFixed(1)} s`);
}
