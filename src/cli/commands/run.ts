/** `kloop run <study>`: run or continue the optimization loop. */
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import type { RunEvent } from '../../study/run-study.ts';
import { createStudyEvaluator, runStudy } from '../../study/run-study.ts';
import type { StudyReport } from '../../study/report.ts';
import { buildStudyReport } from '../../study/report.ts';
import { formatScore, print, printJson, progress, table } from '../output.ts';
import { openStudy } from './study-session.ts';

/** Stop reasons that mean the run failed (exit code 1). */
const FAILED_STOPS = new Set(['infrastructure_failure', 'consecutive_failures']);

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run (or continue) the loop on a study folder until a stopping criterion holds.')
    .argument('<study>', 'study folder (holds kloop.yaml, program.md, the artifact and the corpus)')
    .option('--json', 'print one JSON report object on stdout')
    .option('--quiet', 'no progress lines on stderr')
    .option('--max-experiments <n>', 'override stopping.maxExperiments (a study total)', parseCount)
    .action(async (studyDir: string, options: { json?: boolean; quiet?: boolean; maxExperiments?: number }) => {
      const started = Date.now();
      const session = await openStudy(studyDir);
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
        if (study.gate.requireCalibration) {
          throw new InputError('this study requires a calibration for the current evaluator: run `kloop calibrate` first, or `kloop run --calibrate`', {
            file: study.dir,
            field: 'gate.requireCalibration',
          });
        }
        progress(`kloop: ${study.dir} — ${study.corpus.length} examples (optimization ${study.partitions.optimization.length}, anchor ${study.partitions.anchor.length}, shadow ${study.partitions.shadow.length}), executor ${study.executor.id}, proposer ${study.proposer.id}`, quiet);
        if (study.executor.deterministic) progress('kloop: deterministic executor: run-to-run noise is 0, τ = 0; the paired test carries the decision', quiet);
        const outcome = await runStudy({
          study,
          db: session.db,
          signal: controller.signal,
          onEvent: (event) => progress(describeEvent(event), quiet),
        });
        const report = await buildStudyReport(session.db, study, createStudyEvaluator(study, session.db), {
          runId: outcome.runId,
          stopReason: outcome.stopReason,
          stopDetail: outcome.stopDetail,
          wallTimeMs: Date.now() - started,
        });
        if (options.json === true) printJson(report);
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
