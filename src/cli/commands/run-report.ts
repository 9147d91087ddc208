/**
 * What `kloop run` prints: one progress line per run event, and the final
 * report (text; `--json` prints the report object as it is).
 */
import type { RunEvent } from '../../loop/run-study.ts';
import type { PartitionSizes, StudyReport } from '../../report/report.ts';
import { describeFlakyExamples } from '../../evaluator/flaky-examples.ts';
import { describeUnscored } from '../../evaluator/partition-score.ts';
import { componentColumns, formatScore, print, table } from '../output.ts';
import type { StudyHeadline } from '../../loop/loaded-study.ts';
import { headlineValue } from '../../loop/loaded-study.ts';
import { INVALID_INCUMBENT } from '../../doctor/proposer-fit.ts';
import { STOP_REASONS } from '../../loop/stop-reasons.ts';

/** What each stop reason means, for the report (from the table of src/loop/stop-reasons.ts). */
export const STOP_REASON_MEANINGS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(STOP_REASONS).map(([reason, info]) => [reason, info.meaning]),
);

/**
 * One progress line per run event. `optimizationSize` is the optimization
 * partition's size when the event happened: the best composite of a round is
 * on the partition as it was then (graduations between rounds change it).
 * With a `headline` (e.g. misroute rate = 1 − composite) each decision's
 * optimization figure and the round's best are given in it, named, as the
 * report gives them.
 */
export function describeEvent(event: RunEvent, optimizationSize: number, headline?: StudyHeadline): string {
  switch (event.type) {
    case 'start':
      return `run ${event.runId}: evaluator ${event.fingerprint}, ${event.experiments} experiments so far, incumbent version ${event.incumbent}`;
    case 'baseline':
      return `baseline: ${JSON.stringify(event.scores)}`;
    case 'round':
      return `round ${event.round}: ${event.candidates} candidates proposed${event.failures > 0 ? `, ${event.failures} proposal failures` : ''}`;
    case 'decision':
      return `  #${event.experimentId} ${event.decision === 'accepted' ? 'ACCEPTED' : event.decision === 'skipped' ? 'skipped ' : 'refused '} ${event.decision === 'accepted' ? '' : `(${event.reason}) `}${event.delta}${event.optimization !== null ? `  [optimization ${headline === undefined || headline.name === 'composite' ? '' : `${headline.name} `}${formatScore(headlineValue(headline, event.optimization))}]` : ''}`;
    case 'round-end':
      // In the study's headline, as the report prints it (a routing study's misroute rate, 1 − composite).
      return `round ${event.round} done: ${event.accepted} accepted, ${event.refused} refused; best optimization ${headline?.name ?? 'composite'} ${formatScore(headlineValue(headline, event.best))} (on ${optimizationSize} examples); delta diversity mean ${formatScore(event.diversity.mean)} min ${formatScore(event.diversity.min)}`;
    case 'stop':
      return `stopped: ${event.reason} — ${event.detail}`;
  }
}

function sizesText(sizes: PartitionSizes): string {
  return (['optimization', 'anchor', 'shadow'] as const).map((name) => `${name} ${sizes[name]}`).join(', ');
}

/**
 * The report's lines on what the comparison stands on (reports stored before
 * these fields have none): the partitions seed and best are evaluated on,
 * the graduations and rotations of the run, and each partition on which the
 * best artifact is below the baseline, flagged.
 */
export function describeComparison(report: StudyReport): string[] {
  const lines: string[] = [];
  if (report.comparison !== undefined) {
    const { sizes, sizesAtStart, changed } = report.comparison;
    lines.push(
      `seed and best are both evaluated on the partitions as they are now: ${sizesText(sizes)}${changed ? ` (at the start of this run: ${sizesText(sizesAtStart)})` : ' (unchanged during this run)'}`,
    );
  }
  const moves = report.corpusMoves ?? [];
  if (moves.length > 0) {
    lines.push(`corpus moves during this run (${moves.length}):`);
    for (const move of moves) {
      const when = move.afterExperiment === null ? 'before any experiment' : `after experiment ${move.afterExperiment}`;
      const what =
        move.kind === 'graduated'
          ? 'shadow example(s) graduated into optimization'
          : 'example(s) rotated out of the spent shadow into optimization';
      lines.push(`  ${when}: ${move.exampleIds.length} ${what} (${move.exampleIds.join(', ')})`);
    }
  }
  const headline = report.headline ?? { name: 'composite', complement: false };
  for (const below of report.belowBaseline ?? []) {
    const seed = headlineValue(headline, below.baseline);
    const best = headlineValue(headline, below.best);
    lines.push(
      `WARNING: the best artifact (v${report.bestVersion}) is below the baseline (v${report.baselineVersion}) on ${below.partition}: ${headline.name} ${formatScore(best)} against ${formatScore(seed)}` +
        `${headline.complement ? ' (lower is better)' : ''}, composite ${below.delta.toFixed(4)}${report.comparison?.changed === true ? '; each change was judged on the partitions of its time, and these moved since' : ''}`,
    );
  }
  for (const [who, ids] of [
    [`baseline (v${report.baselineVersion})`, report.unscored?.baseline ?? []],
    [`best (v${report.bestVersion})`, report.unscored?.best ?? []],
  ] as const) {
    if (ids.length > 0) lines.push(`${who}: ${describeUnscored(ids)}`);
  }
  if (report.flaky !== undefined && report.flaky.repeats >= 2) {
    for (const [who, flaky] of [
      [`baseline (v${report.baselineVersion})`, report.flaky.baseline],
      [`best (v${report.bestVersion})`, report.flaky.best],
    ] as const) {
      const line = describeFlakyExamples(flaky);
      if (line !== null) lines.push(`${who}: ${line}`);
    }
  }
  return lines;
}

/** The report's table of scores: baseline and best on each partition (a partition not evaluated says why), in the study's headline. */
function scoreTable(report: StudyReport): { rows: string[][]; columns: string[]; headline: StudyHeadline } {
  const partitions = ['optimization', 'anchor', 'shadow'] as const;
  // Reports of older runs (stored before the task was reported) name the intent task's columns.
  const order = report.task?.components ?? ['appType', 'entityRecall', 'roleAccuracy', 'behaviorCoverage'];
  const summaries = [report.details.baseline, report.details.best].flatMap((details) =>
    partitions.map((partition) => details[partition]),
  );
  const columns = componentColumns(order, summaries);
  const headline = report.headline ?? { name: 'composite', complement: false };
  const notEvaluated = report.notEvaluated ?? [];
  const reasonOf = (artifact: 'baseline' | 'best', partition: string): string | undefined =>
    notEvaluated.find((entry) => entry.artifact === artifact && entry.partition === partition)?.reason;
  const rows = [['', 'partition', headline.name, ...columns, 'invalid']];
  for (const [artifact, label, details] of [
    ['baseline', `baseline (v${report.baselineVersion})`, report.details.baseline],
    ['best', `best (v${report.bestVersion})`, report.details.best],
  ] as const) {
    for (const partition of partitions) {
      const summary = details[partition];
      const missing = reasonOf(artifact, partition);
      if (missing !== undefined) {
        rows.push([
          partition === 'optimization' ? label : '',
          `${partition} (${summary.examples})`,
          `not evaluated (${missing})`,
          ...columns.map(() => ''),
          '',
        ]);
        continue;
      }
      rows.push([
        partition === 'optimization' ? label : '',
        `${partition} (${summary.examples})`,
        formatScore(headlineValue(headline, summary.composite)),
        ...columns.map((name) => formatScore(summary.components[name])),
        String(summary.invalid),
      ]);
    }
  }
  return { rows, columns, headline };
}

/** Prints the human-readable final report. */
export function printReport(report: StudyReport): void {
  print(`kloop study ${report.study}`);
  print();
  const { rows, columns, headline } = scoreTable(report);
  const notEvaluated = report.notEvaluated ?? [];
  print(table(rows));
  if (headline.complement)
    print(`${headline.name} = 1 − ${columns.length === 1 ? columns[0] : 'composite'} (lower is better)`);
  if (notEvaluated.length > 0) {
    print(
      `not evaluated: ${notEvaluated.length} of 6 partition scores (the report never spends beyond the budget, and makes no model call after an interrupt):`,
    );
    for (const entry of notEvaluated)
      print(`  ${entry.artifact} (v${entry.version}) ${entry.partition}: ${entry.reason} — ${entry.detail}`);
  }
  for (const line of describeComparison(report)) print(line);
  print();
  const refusedTotal = Object.values(report.refused).reduce((sum, count) => sum + count, 0);
  print(
    `experiments evaluated: ${report.experiments} (this run: ${report.thisRun.experiments}); accepted ${report.accepted}, refused ${refusedTotal}`,
  );
  const reasons = Object.entries(report.refused).sort((left, right) => right[1] - left[1]);
  if (reasons.length > 0)
    print(`refused by reason: ${reasons.map(([reason, count]) => `${reason} ${count}`).join(', ')}`);
  if (report.skipped > 0)
    print(
      `skipped before evaluation (tried before, or a near-duplicate of a delta already evaluated): ${report.skipped}`,
    );
  if (report.rebased > 0)
    print(`rebased onto an incumbent merged earlier in their round, and judged again: ${report.rebased}`);
  if (report.racing !== undefined) {
    const { decisions, stoppedEarly, acceptedEarly, evaluated, planned } = report.racing;
    const early = acceptedEarly === undefined ? '' : `, ${acceptedEarly} passed an interim look of early acceptance`;
    print(
      `raced: ${decisions} decision(s), ${stoppedEarly} stopped early for futility${early}; optimization example-repeats evaluated ${evaluated} of ${planned} a full evaluation plans (${planned === 0 ? '—' : `${((100 * evaluated) / planned).toFixed(0)}%`})`,
    );
  }
  const failures = Object.entries(report.proposalFailures).sort((left, right) => right[1] - left[1]);
  if (failures.length > 0) {
    const total = failures.reduce((sum, [, count]) => sum + count, 0);
    const unreadable = report.proposalFailures[INVALID_INCUMBENT] ?? 0;
    const retried =
      unreadable === total
        ? 'not retried: the proposer cannot read the incumbent artifact, the same failure on every attempt'
        : unreadable > 0
          ? `retried with a fresh sample, but for ${INVALID_INCUMBENT} (the proposer cannot read the incumbent artifact: not retried)`
          : 'each retried with a fresh sample';
    print(
      `failed proposer answers: ${total} (${failures.map(([code, count]) => `${code} ${count}`).join(', ')}); ${retried} — \`kloop history\` lists them`,
    );
  }
  print(
    `stop reason: ${report.stopReason} (${STOP_REASON_MEANINGS[report.stopReason] ?? 'see docs/reliability.md'}) — ${report.stopDetail}`,
  );
  if (report.stuck !== null) {
    print();
    print(`stuck: ${report.stuck.message}`);
    for (const step of report.stuck.steps) print(`  - ${step}`);
  }
  print(`best artifact: ${report.bestArtifact}`);
  print(`database: ${report.database}`);
  print(`wall time: ${(report.wallTimeMs / 1000).toFixed(1)} s`);
}
