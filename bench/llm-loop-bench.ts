/**
 * The LLM loop against simulated worlds of known truth (`npm run
 * bench:llm-loop`): `kloop run --calibrate` on examples/intent-llm with its
 * shipped settings and a 40-proposal budget, against the prompt-sensitive
 * model of tests/simulated-llm-world.ts on loopback HTTP (hint lines of known
 * good, neutral, harmful and overfitting effect; 20% malformed proposer
 * answers), for 3 seeds in each world:
 *
 * - `today` — the world as it was: 10 good, 8 neutral, 6 harmful and 6
 *   overfitting lines, the same noise on every goal, a proposer that draws
 *   each line afresh;
 * - `fewer-good` — 4 good, 3 neutral, 2 harmful lines (and the overfitting rules);
 * - `repeating` — a proposer that repeats a line it offered before at a set
 *   rate (15%, as issue #34 measured a peer's), else offers one it never did;
 * - `varied-noise` — per-goal noise: none on a third of the goals (a
 *   temperature-0 model answering them alike), 0.5–2 × on the others.
 *
 * Prints per world and seed: stop reason, evaluated candidates, the budget
 * left unspent at the stop, good lines kept / good lines in the world
 * (recall), precision, model calls per accepted good change, and where the
 * calls went — calibration, proposer, screening, candidates, incumbent
 * top-ups, shadow, other — as kloop's usage meter counted them where they
 * were made (src/providers/call-stage.ts; the run's `usage.callsByStage`),
 * checked against the calls the simulated server answered.
 *
 * Exits 1 when a target is missed: issue #34's (per world over its seeds:
 * recall ≥ 0.9, precision ≥ 0.95, calls per accepted good change ≤ 400, no
 * run stopping with more than a quarter of its budget unspent while good
 * lines are left), the LLM-trust issue's (no overfit accepted, no malformed
 * answer adopted, no failed stop), or an accounting that does not add up.
 *
 * `KLOOP_BENCH_WORLDS=today,varied-noise` runs some worlds only, `KLOOP_BENCH_SEEDS=1` some seeds;
 * `KLOOP_BENCH_MODES=off,on` also runs each with `gate.racing` off (default
 * `on`: the shipped setting); `KLOOP_BENCH_BUDGET` sets the proposals.
 * Everything is seeded: the figures are the same on every run.
 */
import { runLoopWorld, type LoopWorldRun } from '../tests/llm-loop-world.ts';
import type { WorldOptions } from '../tests/simulated-llm-world.ts';

const SEEDS = (process.env.KLOOP_BENCH_SEEDS ?? '1,2,3').split(',').map(Number);
const BUDGET = Number(process.env.KLOOP_BENCH_BUDGET ?? 40);
const MODES = (process.env.KLOOP_BENCH_MODES ?? 'on').split(',').map((mode) => mode.trim()) as Array<'off' | 'on'>;
const STAGES = ['calibration', 'proposer', 'screening', 'candidates', 'incumbent', 'shadow', 'other'] as const;
const extra = process.argv.slice(2);

const WORLDS: Record<string, Partial<WorldOptions>> = {
  today: {},
  'fewer-good': { counts: { good: 4, neutral: 3, harmful: 2 } },
  repeating: { repeatRate: 0.15 },
  'varied-noise': { noiseProfile: 'varied' },
};
const worldNames = (process.env.KLOOP_BENCH_WORLDS ?? Object.keys(WORLDS).join(','))
  .split(',')
  .map((name) => name.trim());
for (const name of worldNames)
  if (WORLDS[name] === undefined)
    throw new Error(`KLOOP_BENCH_WORLDS: no world "${name}" (known: ${Object.keys(WORLDS).join(', ')})`);

interface Totals {
  acceptedGood: number;
  acceptedAll: number;
  goodInWorld: number;
  calls: number;
  precision: number;
  recall: number;
  callsPerGood: number;
  byStage: Record<string, number>;
}

const sum = (runs: readonly LoopWorldRun[], pick: (run: LoopWorldRun) => number): number =>
  runs.reduce((total, run) => total + pick(run), 0);
const callsOf = (run: LoopWorldRun): number => run.executorCalls + run.proposerCalls;
const acceptedOf = (run: LoopWorldRun): number =>
  run.accepted.good + run.accepted.neutral + run.accepted.harmful + run.accepted.overfit + run.acceptedUnknown;
const perGood = (value: number): string => (Number.isFinite(value) ? value.toFixed(0) : '—');
const share = (part: number, whole: number): string =>
  `${part} (${whole === 0 ? 0 : Math.round((100 * part) / whole)}%)`;

function totalsOf(runs: readonly LoopWorldRun[]): Totals {
  const acceptedGood = sum(runs, (run) => run.accepted.good);
  const acceptedAll = sum(runs, acceptedOf);
  const goodInWorld = sum(runs, (run) => run.goodInWorld);
  const calls = sum(runs, callsOf);
  const byStage = Object.fromEntries(STAGES.map((stage) => [stage, sum(runs, (run) => run.callsByStage[stage] ?? 0)]));
  return {
    acceptedGood,
    acceptedAll,
    goodInWorld,
    calls,
    precision: acceptedAll === 0 ? 1 : acceptedGood / acceptedAll,
    recall: goodInWorld === 0 ? 1 : acceptedGood / goodInWorld,
    callsPerGood: acceptedGood === 0 ? Number.POSITIVE_INFINITY : calls / acceptedGood,
    byStage,
  };
}

function printTable(title: string, runs: readonly LoopWorldRun[]): void {
  const totals = totalsOf(runs);
  const header = [
    'seed',
    'stop',
    'evaluated',
    'unspent',
    'good kept / in world',
    'recall',
    'precision',
    'model calls',
    'calls / accepted good',
    ...STAGES,
  ];
  const rows = [
    header,
    ...runs.map((run) => [
      String(run.seed),
      run.stopReason,
      String(run.evaluated),
      `${Math.round(100 * run.budgetUnspent)}%`,
      `${run.accepted.good}/${run.goodInWorld}`,
      run.recallOfWorld.toFixed(2),
      run.precision.toFixed(2),
      String(callsOf(run)),
      perGood(run.callsPerAcceptedGood),
      ...STAGES.map((stage) => share(run.callsByStage[stage] ?? 0, run.meteredCalls)),
    ]),
    [
      'all',
      '',
      String(sum(runs, (run) => run.evaluated)),
      '',
      `${totals.acceptedGood}/${totals.goodInWorld}`,
      totals.recall.toFixed(2),
      totals.precision.toFixed(2),
      String(totals.calls),
      perGood(totals.callsPerGood),
      ...STAGES.map((stage) =>
        share(
          totals.byStage[stage] ?? 0,
          sum(runs, (run) => run.meteredCalls),
        ),
      ),
    ],
  ];
  const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]): string =>
    `| ${row.map((value, column) => value.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(rows[0]!));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows.slice(1)) console.log(line(row));
}

console.log(
  `LLM loop, simulated worlds, examples/intent-llm shipped settings (4 candidates per round, 5 repeats), budget ${BUDGET} proposals, seeds ${SEEDS.join(', ')}`,
);
console.log(
  'stage columns: model calls counted where they were made (share of the run\'s metered calls); "unspent": budget left at the stop',
);
const results: Array<{ world: string; mode: 'off' | 'on'; runs: LoopWorldRun[] }> = [];
for (const world of worldNames) {
  for (const mode of MODES) {
    const runs: LoopWorldRun[] = [];
    for (const seed of SEEDS) {
      const started = Date.now();
      const run = await runLoopWorld(seed, BUDGET, WORLDS[world]!, extra, { racing: mode === 'on' });
      runs.push(run);
      process.stderr.write(
        `${world}, racing ${mode}, seed ${seed}: ${run.stopReason} after ${run.evaluated} evaluated, ${callsOf(run)} model calls, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
      );
    }
    results.push({ world, mode, runs });
    // Each world's table as soon as its runs are done (a long bench shows what it has).
    printTable(`world ${world}, racing ${mode}${mode === 'on' ? ' (shipped)' : ''}`, runs);
  }
}

const problems: string[] = [];
for (const { world, mode, runs } of results) {
  const name = `${world}, racing ${mode}`;
  const totals = totalsOf(runs);
  if (totals.precision < 0.95) problems.push(`${name}: precision ${totals.precision.toFixed(2)} < 0.95`);
  if (totals.recall < 0.9) problems.push(`${name}: recall ${totals.recall.toFixed(2)} < 0.9`);
  if (totals.callsPerGood > 400)
    problems.push(`${name}: ${perGood(totals.callsPerGood)} model calls per accepted good change > 400`);
  if (sum(runs, (run) => run.accepted.overfit) > 0) problems.push(`${name}: an overfitting hint was accepted`);
  if (sum(runs, (run) => run.acceptedUnknown) > 0) problems.push(`${name}: an accepted change carries no known hint`);
  for (const run of runs) {
    if (run.exitCode !== 0)
      problems.push(`${name}, seed ${run.seed}: stopped as ${run.stopReason} (exit ${run.exitCode})`);
    if (run.budgetUnspent > 0.25 && run.accepted.good < run.goodInWorld)
      problems.push(
        `${name}, seed ${run.seed}: stopped (${run.stopReason}) with ${Math.round(100 * run.budgetUnspent)}% of its budget unspent and good lines left`,
      );
    const staged = STAGES.reduce((total, stage) => total + (run.callsByStage[stage] ?? 0), 0);
    if (staged !== run.meteredCalls || run.meteredCalls !== callsOf(run))
      problems.push(
        `${name}, seed ${run.seed}: the accounting does not add up (stages ${staged}, metered ${run.meteredCalls}, server ${callsOf(run)})`,
      );
  }
}
if (problems.length > 0) {
  console.log(`\nMISSED: ${problems.join('; ')}`);
  process.exitCode = 1;
} else console.log('\nall targets met');
