/**
 * The LLM loop against a simulated world of known truth (`npm run
 * bench:llm-loop`): `kloop run --calibrate` on examples/intent-llm with its
 * shipped settings and a 40-proposal budget, against the prompt-sensitive
 * model of tests/simulated-llm-world.ts on loopback HTTP (hint lines of known
 * good, neutral, harmful and overfitting effect; 20% malformed proposer
 * answers), for 3 seeds. Prints per seed: stop reason, evaluated candidates,
 * hints offered and accepted by kind, precision and recall of good hints,
 * proposal failures, rebased decisions, model calls and calls per accepted
 * good change; then the totals. Exits 1 when a target of the LLM-trust issue
 * is missed (precision ≥ 0.95, recall ≥ 0.85, no overfit accepted, no
 * malformed answer adopted, no failed stop).
 *
 * Everything is seeded: the figures are the same on every run.
 */
import { runLoopWorld, type LoopWorldRun } from '../tests/llm-loop-world.ts';

const SEEDS = [1, 2, 3];
const BUDGET = Number(process.env.KLOOP_BENCH_BUDGET ?? 40);
const extra = process.argv.slice(2);

const runs: LoopWorldRun[] = [];
for (const seed of SEEDS) {
  const started = Date.now();
  const run = await runLoopWorld(seed, BUDGET, {}, extra);
  runs.push(run);
  process.stderr.write(`seed ${seed}: ${run.stopReason} after ${run.evaluated} evaluated, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const cell = (accepted: number, offered: number): string => `${accepted}/${offered}`;
const rows = [
  ['seed', 'stop', 'exit', 'evaluated', 'good', 'neutral', 'harmful', 'overfit', 'precision', 'recall', 'failed answers', 'rebased', 'model calls', 'calls / accepted good'],
  ...runs.map((run) => [
    String(run.seed), run.stopReason, String(run.exitCode), String(run.evaluated),
    cell(run.accepted.good, run.offered.good), cell(run.accepted.neutral, run.offered.neutral), cell(run.accepted.harmful, run.offered.harmful), cell(run.accepted.overfit, run.offered.overfit),
    run.precision.toFixed(2), run.recall.toFixed(2), String(run.proposalFailures), String(run.rebasedDecisions),
    String(run.executorCalls + run.proposerCalls), Number.isFinite(run.callsPerAcceptedGood) ? run.callsPerAcceptedGood.toFixed(0) : '—',
  ]),
];
const sum = (pick: (run: LoopWorldRun) => number): number => runs.reduce((total, run) => total + pick(run), 0);
const acceptedGood = sum((run) => run.accepted.good);
const acceptedAll = sum((run) => run.accepted.good + run.accepted.neutral + run.accepted.harmful + run.accepted.overfit + run.acceptedUnknown);
const offeredGood = sum((run) => run.offered.good);
const calls = sum((run) => run.executorCalls + run.proposerCalls);
const precision = acceptedAll === 0 ? 1 : acceptedGood / acceptedAll;
const recall = offeredGood === 0 ? 1 : acceptedGood / offeredGood;
rows.push([
  'all', '', '', String(sum((run) => run.evaluated)),
  cell(acceptedGood, offeredGood), cell(sum((run) => run.accepted.neutral), sum((run) => run.offered.neutral)),
  cell(sum((run) => run.accepted.harmful), sum((run) => run.offered.harmful)), cell(sum((run) => run.accepted.overfit), sum((run) => run.offered.overfit)),
  precision.toFixed(2), recall.toFixed(2), String(sum((run) => run.proposalFailures)), String(sum((run) => run.rebasedDecisions)),
  String(calls), acceptedGood === 0 ? '—' : (calls / acceptedGood).toFixed(0),
]);
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
const line = (row: string[]): string => `| ${row.map((value, column) => value.padEnd(widths[column]!)).join(' | ')} |`;
console.log(`LLM loop, simulated world, examples/intent-llm shipped settings, budget ${BUDGET} proposals; cells: accepted/offered distinct hints`);
console.log(line(rows[0]!));
console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
for (const row of rows.slice(1)) console.log(line(row));

const problems: string[] = [];
if (precision < 0.95) problems.push(`precision ${precision.toFixed(2)} < 0.95`);
if (recall < 0.85) problems.push(`recall ${recall.toFixed(2)} < 0.85`);
if (sum((run) => run.accepted.overfit) > 0) problems.push('an overfitting hint was accepted');
if (sum((run) => run.acceptedUnknown) > 0) problems.push('an accepted change carries no known hint');
for (const run of runs) if (run.exitCode !== 0) problems.push(`seed ${run.seed} stopped as ${run.stopReason} (exit ${run.exitCode})`);
if (problems.length > 0) {
  console.log(`\nMISSED: ${problems.join('; ')}`);
  process.exitCode = 1;
} else console.log('\nall targets met: precision ≥ 0.95, recall ≥ 0.85, no overfit accepted, no malformed answer adopted, every stop honest');
