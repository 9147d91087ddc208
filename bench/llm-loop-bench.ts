/**
 * The LLM loop against a simulated world of known truth (`npm run
 * bench:llm-loop`): `kloop run --calibrate` on examples/intent-llm with its
 * shipped settings and a 40-proposal budget, against the prompt-sensitive
 * model of tests/simulated-llm-world.ts on loopback HTTP (hint lines of known
 * good, neutral, harmful and overfitting effect; 20% malformed proposer
 * answers), for 3 seeds — twice: with `gate.racing` off (every candidate
 * evaluated in full) and on (as shipped). Prints per run: stop reason,
 * evaluated candidates, hints offered and accepted by kind, precision and
 * recall of good hints, proposal failures, rebased decisions, futility stops,
 * model calls and calls per accepted good change; then the totals of each
 * mode and racing's calls per accepted good change against racing off.
 *
 * Exits 1 when a target is missed: the LLM-trust issue's (precision ≥ 0.95,
 * recall ≥ 0.85, no overfit accepted, no malformed answer adopted, no failed
 * stop) for either mode, or racing's (model calls per accepted good change
 * ≤ 50% of racing off, precision and recall within ±0.05 of racing off).
 *
 * `KLOOP_BENCH_MODES=on` (or `off`) runs one mode only. Everything is
 * seeded: the figures are the same on every run.
 */
import { runLoopWorld, type LoopWorldRun } from '../tests/llm-loop-world.ts';

const SEEDS = [1, 2, 3];
const BUDGET = Number(process.env.KLOOP_BENCH_BUDGET ?? 40);
const MODES = (process.env.KLOOP_BENCH_MODES ?? 'off,on').split(',').map((mode) => mode.trim()) as Array<'off' | 'on'>;
const extra = process.argv.slice(2);

interface Totals {
  acceptedGood: number;
  acceptedAll: number;
  offeredGood: number;
  calls: number;
  precision: number;
  recall: number;
  callsPerGood: number;
}

const cell = (accepted: number, offered: number): string => `${accepted}/${offered}`;
const sum = (runs: readonly LoopWorldRun[], pick: (run: LoopWorldRun) => number): number => runs.reduce((total, run) => total + pick(run), 0);

function totalsOf(runs: readonly LoopWorldRun[]): Totals {
  const acceptedGood = sum(runs, (run) => run.accepted.good);
  const acceptedAll = sum(runs, (run) => run.accepted.good + run.accepted.neutral + run.accepted.harmful + run.accepted.overfit + run.acceptedUnknown);
  const offeredGood = sum(runs, (run) => run.offered.good);
  const calls = sum(runs, (run) => run.executorCalls + run.proposerCalls);
  return {
    acceptedGood,
    acceptedAll,
    offeredGood,
    calls,
    precision: acceptedAll === 0 ? 1 : acceptedGood / acceptedAll,
    recall: offeredGood === 0 ? 1 : acceptedGood / offeredGood,
    callsPerGood: acceptedGood === 0 ? Number.POSITIVE_INFINITY : calls / acceptedGood,
  };
}

function printTable(mode: 'off' | 'on', runs: readonly LoopWorldRun[]): void {
  const totals = totalsOf(runs);
  const rows = [
    ['seed', 'stop', 'exit', 'evaluated', 'good', 'neutral', 'harmful', 'overfit', 'precision', 'recall', 'failed answers', 'rebased', 'futility stops', 'model calls', 'calls / accepted good'],
    ...runs.map((run) => [
      String(run.seed), run.stopReason, String(run.exitCode), String(run.evaluated),
      cell(run.accepted.good, run.offered.good), cell(run.accepted.neutral, run.offered.neutral), cell(run.accepted.harmful, run.offered.harmful), cell(run.accepted.overfit, run.offered.overfit),
      run.precision.toFixed(2), run.recall.toFixed(2), String(run.proposalFailures), String(run.rebasedDecisions), String(run.futilityStops),
      String(run.executorCalls + run.proposerCalls), Number.isFinite(run.callsPerAcceptedGood) ? run.callsPerAcceptedGood.toFixed(0) : '—',
    ]),
    [
      'all', '', '', String(sum(runs, (run) => run.evaluated)),
      cell(totals.acceptedGood, totals.offeredGood), cell(sum(runs, (run) => run.accepted.neutral), sum(runs, (run) => run.offered.neutral)),
      cell(sum(runs, (run) => run.accepted.harmful), sum(runs, (run) => run.offered.harmful)), cell(sum(runs, (run) => run.accepted.overfit), sum(runs, (run) => run.offered.overfit)),
      totals.precision.toFixed(2), totals.recall.toFixed(2), String(sum(runs, (run) => run.proposalFailures)), String(sum(runs, (run) => run.rebasedDecisions)), String(sum(runs, (run) => run.futilityStops)),
      String(totals.calls), Number.isFinite(totals.callsPerGood) ? totals.callsPerGood.toFixed(0) : '—',
    ],
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]): string => `| ${row.map((value, column) => value.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(`\nracing ${mode}${mode === 'on' ? ' (the shipped gate.racing)' : ' (gate.racing: false)'}; budget ${BUDGET} proposals; cells: accepted/offered distinct hints`);
  console.log(line(rows[0]!));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows.slice(1)) console.log(line(row));
}

const results = new Map<'off' | 'on', LoopWorldRun[]>();
for (const mode of MODES) {
  const runs: LoopWorldRun[] = [];
  for (const seed of SEEDS) {
    const started = Date.now();
    const run = await runLoopWorld(seed, BUDGET, {}, extra, { racing: mode === 'on' });
    runs.push(run);
    process.stderr.write(`racing ${mode}, seed ${seed}: ${run.stopReason} after ${run.evaluated} evaluated, ${run.executorCalls + run.proposerCalls} model calls, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  }
  results.set(mode, runs);
}

console.log('LLM loop, simulated world, examples/intent-llm shipped settings (4 candidates per round, 5 repeats), 3 seeds');
for (const [mode, runs] of results) printTable(mode, runs);

const problems: string[] = [];
for (const [mode, runs] of results) {
  const totals = totalsOf(runs);
  if (totals.precision < 0.95) problems.push(`racing ${mode}: precision ${totals.precision.toFixed(2)} < 0.95`);
  if (totals.recall < 0.85) problems.push(`racing ${mode}: recall ${totals.recall.toFixed(2)} < 0.85`);
  if (sum(runs, (run) => run.accepted.overfit) > 0) problems.push(`racing ${mode}: an overfitting hint was accepted`);
  if (sum(runs, (run) => run.acceptedUnknown) > 0) problems.push(`racing ${mode}: an accepted change carries no known hint`);
  for (const run of runs) if (run.exitCode !== 0) problems.push(`racing ${mode}, seed ${run.seed}: stopped as ${run.stopReason} (exit ${run.exitCode})`);
}
const off = results.get('off');
const on = results.get('on');
if (off !== undefined && on !== undefined) {
  const before = totalsOf(off);
  const after = totalsOf(on);
  const ratio = after.callsPerGood / before.callsPerGood;
  console.log(
    `\nmodel calls per accepted good change: racing off ${before.callsPerGood.toFixed(0)}, racing on ${after.callsPerGood.toFixed(0)} (${(100 * ratio).toFixed(1)}% of off; target ≤ 50%); ` +
      `precision ${before.precision.toFixed(2)} → ${after.precision.toFixed(2)}, recall ${before.recall.toFixed(2)} → ${after.recall.toFixed(2)} (target: within ±0.05); total model calls ${before.calls} → ${after.calls}`,
  );
  if (ratio > 0.5) problems.push(`racing on: ${(100 * ratio).toFixed(1)}% of racing off's calls per accepted good change (target ≤ 50%)`);
  if (Math.abs(after.precision - before.precision) > 0.05 + 1e-9) problems.push(`racing on: precision ${after.precision.toFixed(2)} vs ${before.precision.toFixed(2)} off (more than ±0.05)`);
  if (Math.abs(after.recall - before.recall) > 0.05 + 1e-9) problems.push(`racing on: recall ${after.recall.toFixed(2)} vs ${before.recall.toFixed(2)} off (more than ±0.05)`);
}
if (problems.length > 0) {
  console.log(`\nMISSED: ${problems.join('; ')}`);
  process.exitCode = 1;
} else console.log('\nall targets met');
