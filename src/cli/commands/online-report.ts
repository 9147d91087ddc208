/**
 * The text of an online study's report (`kloop run` on a `mode: online`
 * study, `kloop show`): where every experiment stands, what this step
 * decided and started, and the stop with its meaning. A simulated run is
 * labelled SIMULATED on every block.
 */
import type { OnlineCheck } from '../../online/types.ts';
import type { ExperimentStanding } from '../../online/study/standing.ts';
import type { SlowLoopReport } from '../../online/study/slow-loop.ts';
import { ONLINE_STOP_REASONS } from '../../online/study/stop-reasons.ts';
import { table } from '../output.ts';

const percent = (value: number): string => `${(value * 100).toFixed(2)}%`;
/** A signed number; an unbounded end (±Infinity, stored in JSON as null) as ∞. */
const signed = (value: number | null, digits = 4): string =>
  value === null || !Number.isFinite(value)
    ? value !== null && value < 0
      ? '−∞'
      : '∞'
    : `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;

/** One row per experiment: arms, units, lift and interval, decision or what it waits for. */
export function standingsTable(experiments: readonly ExperimentStanding[]): string {
  const rows = [
    [
      'id',
      'kind',
      'status',
      'variant',
      'share',
      'units (decision i/c)',
      'units (confirm i/c)',
      'primary i → c',
      'lift',
      'Δ interval',
      'reason / waiting for',
    ],
  ];
  for (const experiment of experiments) {
    const { primary, units } = experiment;
    rows.push([
      String(experiment.id),
      experiment.kind === 'aa' ? 'A/A' : 'A/B',
      experiment.status,
      experiment.rationale.length > 40 ? `${experiment.rationale.slice(0, 39)}…` : experiment.rationale,
      experiment.candidateShare === 0 ? '—' : percent(experiment.candidateShare),
      `${units.decision.incumbent}/${units.decision.candidate}`,
      `${units.confirmation.incumbent}/${units.confirmation.candidate}`,
      primary.analysedUnits === 0 ? '—' : `${percent(primary.incumbentMean)} → ${percent(primary.candidateMean)}`,
      primary.relativeLift === null || primary.analysedUnits === 0 ? '—' : `${signed(primary.relativeLift * 100, 1)}%`,
      primary.interval === null
        ? '—'
        : `[${signed(primary.interval.lower ?? Number.NEGATIVE_INFINITY)}, ${signed(primary.interval.upper ?? Number.POSITIVE_INFINITY)}]`,
      experiment.reason ?? (experiment.waitingFor === null ? '' : `waiting: ${experiment.waitingFor}`),
    ]);
  }
  return table(rows);
}

/** The checks of one look: statistic, threshold, verdict, and the account of each. */
export function checksTable(checks: readonly OnlineCheck[]): string {
  const format = (value: number | null | undefined): string =>
    value === null || value === undefined ? '—' : Number.isInteger(value) ? String(value) : value.toPrecision(4);
  const rows = [['check', 'verdict', 'statistic', 'threshold', 'p', 'detail']];
  for (const check of checks)
    rows.push([
      check.name,
      check.verdict,
      format(check.statistic),
      format(check.threshold),
      format(check.pValue),
      check.detail,
    ]);
  return table(rows);
}

/** The whole report of a slow-loop step, as lines. */
export function slowLoopReportLines(report: SlowLoopReport, studyDir: string, simulated: boolean): string[] {
  const label = simulated ? 'SIMULATED — ' : '';
  const lines = [
    `${label}online study ${studyDir} at ${report.at}${simulated ? ' (simulated clock, simulated audience: no real traffic)' : ''}`,
    '',
  ];
  lines.push(standingsTable(report.experiments), '');
  for (const decided of report.decided)
    lines.push(
      `${label}experiment ${decided.id}: ${decided.status}${decided.reason === null || decided.reason === decided.status ? '' : ` (${decided.reason})`}`,
    );
  for (const id of report.started) lines.push(`${label}experiment ${id} started`);
  const accepted = report.experiments.filter((experiment) => experiment.status === 'accepted').length;
  const refused = report.experiments.filter(
    (experiment) => experiment.status === 'refused' || experiment.status === 'invalid',
  ).length;
  lines.push(
    `${label}${accepted} accepted, ${refused} refused of ${report.experiments.filter((experiment) => experiment.kind === 'ab').length} A/B experiments; active version ${report.activeVersionId ?? '—'}`,
  );
  if (report.stopped !== undefined) {
    const meaning = ONLINE_STOP_REASONS[report.stopped.reason]?.meaning ?? 'unknown stop reason';
    lines.push(`${label}stop reason: ${report.stopped.reason} (${meaning}) — ${report.stopped.detail}`);
  } else {
    const running = report.experiments.find(
      (experiment) => experiment.status === 'decision' || experiment.status === 'confirmation',
    );
    lines.push(
      running === undefined
        ? `${label}no experiment running`
        : `${label}running: experiment ${running.id} (${running.status} window), waiting for ${running.waitingFor ?? 'its next look'}; run again after more attribution windows close`,
    );
  }
  return lines;
}

/** The exit code of a report: the stop's, else 0 (a step that leaves an experiment running). */
export function onlineExitCode(report: SlowLoopReport): number {
  return report.stopped === undefined ? 0 : (ONLINE_STOP_REASONS[report.stopped.reason]?.exitCode ?? 1);
}
