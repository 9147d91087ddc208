/**
 * Online-gate benchmark (`npm run bench:online`): kloop's online gate beside
 * (a) the naive rule "peek daily, accept when the candidate's reply rate is
 * higher" and (b) a fixed-horizon Welch t-test (one-sided, α = 0.05) that
 * peeks daily, on the same **simulated** experiments.
 *
 * The world is the simulated cold-email audience of src/online/simulation/
 * (5% replies, 0.5% unsubscribes, weekday seasonality, reply and unsubscribe
 * delays, a 72 h attribution window), drawn as per-day counts
 * (src/online/simulation/daily-stream.ts). Each experiment starts on a
 * different weekday and runs at most MAX_DAYS days; every rule looks once a
 * day at the units whose window has closed (exposed ≥ 3 days before).
 *
 * kloop: `decideOnline` with DEFAULT_ONLINE_GATE_SETTINGS, τ from three A/A
 * calibrations, the unit budget MAX_UNITS_PER_ARM for the decision window,
 * the unsubscribe guardrail with an absolute margin of 0.004; after the look
 * where the primary and the guardrail pass, the decision window is frozen
 * and later exposures form the confirmation window. The baselines use the
 * same minimum units and budget, and no guardrail.
 *
 * Everything is seeded; the output is identical on every run.
 */
import {
  alwaysValidPValues,
  calibrationTau,
  decideOnline,
  DEFAULT_ONLINE_GATE_SETTINGS,
} from '../src/online/gate/online-gate.ts';
import { createAudienceWorld, DAY_MS, HOUR_MS } from '../src/online/simulation/audience-world.ts';
import {
  binomialDraw,
  simulateDailyStream,
  type ArmDays,
  type DailyStream,
} from '../src/online/simulation/daily-stream.ts';
import { listHintLines } from '../src/online/simulation/hint-lines.ts';
import type { ArmStatistics, OnlineGateInput, OnlineGateSettings, OnlineGuardrail } from '../src/online/types.ts';
import { createSeededRandom, welchTTestFromMoments, type RandomSource } from '../src/stats/index.ts';

const SEED = 20_261_207;
const MEAN_DAILY_UNITS = 6000;
const MAX_DAYS = 35;
const ATTRIBUTION_DAYS = 3;
/** The documented unit budget of a decision window, per arm. */
const MAX_UNITS_PER_ARM = 30_000;
/**
 * Analysed units per arm before the primary is judged: about a week of this
 * audience's traffic per arm, so that a decision window spans a weekly cycle
 * and a novelty effect has faded before the confirmation window opens.
 * `--min-units-per-arm N` runs the bench with another minimum.
 */
const MIN_UNITS_PER_ARM = minimumFromArguments(process.argv.slice(2)) ?? 20_000;

function minimumFromArguments(argv: readonly string[]): number | undefined {
  const index = argv.indexOf('--min-units-per-arm');
  if (index === -1) return undefined;
  const value = Number(argv[index + 1]);
  if (!Number.isInteger(value) || value < 2)
    throw new RangeError(`--min-units-per-arm needs an integer ≥ 2; got ${argv[index + 1]}`);
  return value;
}
const A_A_EXPERIMENTS = 1000;
const EXPERIMENTS = 500;
/**
 * The SRM scenario: a larger audience, 14 days without a unit budget (the
 * check runs as long as units are assigned): a 2% loss moves the share by
 * 0.5 points, which no test sees in a few tens of thousands of units.
 */
const SRM = { meanDailyUnits: 40_000, days: 14, experiments: 1000, droppedShare: 0.02 };
const MONDAY = Date.UTC(2026, 0, 5);
const PRIMARY = { name: 'reply_rate', kind: 'binary', direction: 'increase' } as const;
const GUARDRAIL: OnlineGuardrail = {
  metric: { name: 'unsubscribe_rate', kind: 'binary', direction: 'decrease' },
  margin: 0.004,
};

const hint = (id: string): string => listHintLines().find((line) => line.id === id)!.text;
const INCUMBENT = ['# Sequence strategy', '- Three emails, four days apart.', `- ${hint('neutral-signoff')}`].join(
  '\n',
);
const withLine = (id: string): string => `${INCUMBENT}\n- ${hint(id)}`;

interface Scenario {
  name: string;
  candidates: string[];
  experiments: number;
  meanDailyUnits: number;
  days: number;
  droppedShare: number;
  /** No unit budget (the SRM scenarios). Default false. */
  unbudgeted?: boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'A/A',
    candidates: [INCUMBENT],
    experiments: A_A_EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: '+10%',
    candidates: [withLine('good-10')],
    experiments: EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: '+20%',
    candidates: [withLine('good-20')],
    experiments: EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: '+30%',
    candidates: [withLine('good-30')],
    experiments: EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: 'novelty',
    candidates: [withLine('novelty-news')],
    experiments: EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: 'guardrail-breaking',
    candidates: [withLine('harmful-daily'), withLine('harmful-urgency')],
    experiments: EXPERIMENTS,
    meanDailyUnits: MEAN_DAILY_UNITS,
    days: MAX_DAYS,
    droppedShare: 0,
  },
  {
    name: 'SRM: 2% dropped',
    candidates: [INCUMBENT],
    experiments: SRM.experiments,
    meanDailyUnits: SRM.meanDailyUnits,
    days: SRM.days,
    droppedShare: SRM.droppedShare,
    unbudgeted: true,
  },
  {
    name: 'SRM: none dropped',
    candidates: [INCUMBENT],
    experiments: SRM.experiments,
    meanDailyUnits: SRM.meanDailyUnits,
    days: SRM.days,
    droppedShare: 0,
    unbudgeted: true,
  },
];

/** How one rule ended one experiment. */
interface Ending {
  outcome: 'accept' | 'refuse' | 'unfinished';
  reason: string;
  /** Units assigned per arm (mean of the two) until the decision. */
  unitsPerArm: number;
}

/** Prefix sums of an arm's days, so any window's statistics cost O(1). */
function prefix(values: readonly number[]): number[] {
  const sums = [0];
  for (const value of values) sums.push(sums.at(-1)! + value);
  return sums;
}

interface ArmSums {
  units: number[];
  replies: number[];
  unsubscribes: number[];
}
const sumsOf = (days: ArmDays): ArmSums => ({
  units: prefix(days.units),
  replies: prefix(days.replies),
  unsubscribes: prefix(days.unsubscribes),
});

/** Binary statistics of days first..last (inclusive; empty when last < first). */
function window(arm: ArmSums, metric: 'replies' | 'unsubscribes', first: number, last: number): ArmStatistics {
  if (last < first) return { units: 0, sum: 0, sumOfSquares: 0 };
  const units = arm.units[last + 1]! - arm.units[first]!;
  const sum = arm[metric][last + 1]! - arm[metric][first]!;
  return { units, sum, sumOfSquares: sum };
}

const assignedPerArm = (incumbent: ArmSums, candidate: ArmSums, look: number): number =>
  (incumbent.units[look + 1]! + candidate.units[look + 1]!) / 2;

function runKloop(stream: DailyStream, settings: OnlineGateSettings): Ending {
  const incumbent = sumsOf(stream.incumbent);
  const candidate = sumsOf(stream.candidate);
  const days = stream.incumbent.units.length;
  let frozenAt: number | undefined;
  let previousPValues: Record<string, number> = {};
  for (let look = 0; look < days; look += 1) {
    const closed = look - ATTRIBUTION_DAYS;
    const decisionLast = frozenAt === undefined ? closed : frozenAt - ATTRIBUTION_DAYS;
    const pair = (metric: 'replies' | 'unsubscribes', first: number, last: number) => ({
      incumbent: window(incumbent, metric, first, last),
      candidate: window(candidate, metric, first, last),
    });
    const input: OnlineGateInput = {
      primary: { metric: PRIMARY, arms: pair('replies', 0, decisionLast) },
      guardrails: [{ guardrail: GUARDRAIL, arms: pair('unsubscribes', 0, decisionLast) }],
      assignments: [{ incumbent: incumbent.units[look + 1]!, candidate: candidate.units[look + 1]! }],
      ...(frozenAt === undefined ? {} : { confirmation: pair('replies', frozenAt + 1, closed) }),
      looks: look + 1,
      previousPValues,
      budgetExhausted: look === days - 1,
    };
    const decision = decideOnline(input, settings);
    previousPValues = { ...previousPValues, ...alwaysValidPValues(decision) };
    if (decision.outcome !== 'continue')
      return {
        outcome: decision.outcome,
        reason: decision.outcome === 'refuse' ? decision.reason : 'accept',
        unitsPerArm: assignedPerArm(incumbent, candidate, look),
      };
    if (decision.waitingFor === 'confirmation' && frozenAt === undefined) frozenAt = look;
  }
  return {
    outcome: 'unfinished',
    reason: frozenAt === undefined ? 'unfinished' : 'confirming',
    unitsPerArm: assignedPerArm(incumbent, candidate, days - 1),
  };
}

/** The baselines: the naive rule (mean higher) or a peeking one-sided Welch test, daily, same minimum units and budget. */
function runBaseline(stream: DailyStream, rule: 'naive' | 'welch', settings: OnlineGateSettings): Ending {
  const incumbent = sumsOf(stream.incumbent);
  const candidate = sumsOf(stream.candidate);
  const days = stream.incumbent.units.length;
  for (let look = 0; look < days; look += 1) {
    const closed = look - ATTRIBUTION_DAYS;
    const a = window(candidate, 'replies', 0, closed);
    const b = window(incumbent, 'replies', 0, closed);
    const units = Math.min(a.units, b.units);
    if (units >= settings.minUnitsPerArm) {
      const meanA = a.sum / a.units;
      const meanB = b.sum / b.units;
      const accepted =
        rule === 'naive'
          ? meanA > meanB
          : welchTTestFromMoments(
              { size: a.units, mean: meanA, variance: (a.sum - a.sum * meanA) / (a.units - 1) },
              { size: b.units, mean: meanB, variance: (b.sum - b.sum * meanB) / (b.units - 1) },
              { alternative: 'greater' },
            ).pValue < settings.alpha;
      if (accepted)
        return { outcome: 'accept', reason: 'accept', unitsPerArm: assignedPerArm(incumbent, candidate, look) };
      if (units >= settings.maxUnitsPerArm)
        return { outcome: 'refuse', reason: 'budget', unitsPerArm: assignedPerArm(incumbent, candidate, look) };
    }
  }
  return { outcome: 'unfinished', reason: 'unfinished', unitsPerArm: assignedPerArm(incumbent, candidate, days - 1) };
}

/** τ from three A/A calibrations of 5 000 units per arm of the incumbent (binomial draws at the base rate). */
function calibrate(random: RandomSource): number {
  const arm = (): ArmStatistics => {
    const sum = binomialDraw(random, 5000, 0.05 * (16 / 17));
    return { units: 5000, sum, sumOfSquares: sum };
  };
  return calibrationTau(
    [0, 1, 2].map(() => ({ incumbent: arm(), candidate: arm() })),
    PRIMARY,
  );
}

/** The rules compared, on the same streams. The baselines peek from kloop's minimum, and from 1 000 units per arm. */
const RULES = [
  {
    key: 'kloop',
    label: 'kloop online gate',
    run: (stream: DailyStream, settings: OnlineGateSettings) => runKloop(stream, settings),
  },
  {
    key: 'naive',
    label: 'naive (mean higher), daily',
    run: (stream: DailyStream, settings: OnlineGateSettings) => runBaseline(stream, 'naive', settings),
  },
  {
    key: 'welch',
    label: 'Welch t-test, peeking daily',
    run: (stream: DailyStream, settings: OnlineGateSettings) => runBaseline(stream, 'welch', settings),
  },
  {
    key: 'naive-early',
    label: 'naive, daily from 1,000 units',
    run: (stream: DailyStream, settings: OnlineGateSettings) =>
      runBaseline(stream, 'naive', { ...settings, minUnitsPerArm: 1000 }),
  },
  {
    key: 'welch-early',
    label: 'Welch, daily from 1,000 units',
    run: (stream: DailyStream, settings: OnlineGateSettings) =>
      runBaseline(stream, 'welch', { ...settings, minUnitsPerArm: 1000 }),
  },
] as const;
type RuleKey = (typeof RULES)[number]['key'];

interface ScenarioResult {
  scenario: Scenario;
  endings: Record<RuleKey, Ending[]>;
  /** Fixed-horizon χ² p < 0.001 at some daily look (kloop's SRM check uses the always-valid p instead). */
  fixedSrmAlarms: number;
}

function runScenario(scenario: Scenario, budgeted: OnlineGateSettings, random: RandomSource): ScenarioResult {
  const settings = scenario.unbudgeted === true ? { ...budgeted, maxUnitsPerArm: Number.POSITIVE_INFINITY } : budgeted;
  const world = createAudienceWorld({ seed: SEED });
  const result: ScenarioResult = {
    scenario,
    endings: { kloop: [], naive: [], welch: [], 'naive-early': [], 'welch-early': [] },
    fixedSrmAlarms: 0,
  };
  for (let experiment = 0; experiment < scenario.experiments; experiment += 1) {
    const stream = simulateDailyStream({
      world,
      incumbentText: INCUMBENT,
      candidateText: scenario.candidates[experiment % scenario.candidates.length]!,
      start: MONDAY + (experiment % 7) * DAY_MS,
      days: scenario.days,
      meanDailyUnits: scenario.meanDailyUnits,
      split: settings.split,
      attributionWindowMs: ATTRIBUTION_DAYS * 24 * HOUR_MS,
      droppedCandidateShare: scenario.droppedShare,
      random,
    });
    for (const rule of RULES) result.endings[rule.key].push(rule.run(stream, settings));
    result.fixedSrmAlarms += fixedSrmAlarm(stream) ? 1 : 0;
  }
  return result;
}

/** Whether Pearson's χ² (fixed horizon, 1 df) on the cumulative assignments is below 0.001 at some daily look: |z| > 3.2905. */
function fixedSrmAlarm(stream: DailyStream): boolean {
  let incumbent = 0;
  let candidate = 0;
  for (let day = 0; day < stream.incumbent.units.length; day += 1) {
    incumbent += stream.incumbent.units[day]!;
    candidate += stream.candidate.units[day]!;
    const total = incumbent + candidate;
    if (total > 0 && Math.abs(candidate - total / 2) / Math.sqrt(total / 4) > 3.2905267314919) return true;
  }
  return false;
}

const share = (endings: Ending[], predicate: (ending: Ending) => boolean): string => {
  const count = endings.filter(predicate).length;
  return `${((100 * count) / endings.length).toFixed(1)}% (${count}/${endings.length})`;
};
const accepted = (ending: Ending): boolean => ending.outcome === 'accept';
const meanUnits = (endings: Ending[]): string =>
  Math.round(endings.reduce((sum, ending) => sum + ending.unitsPerArm, 0) / endings.length).toLocaleString('en-US');

function printTables(results: ScenarioResult[], settings: OnlineGateSettings, seconds: number): void {
  const main = results.filter((result) => !result.scenario.name.startsWith('SRM'));
  console.log(
    `bench:online — simulated cold-email audience (5% replies, 0.5% unsubscribes), ${MEAN_DAILY_UNITS.toLocaleString('en-US')} recipients/day, daily looks, 72 h attribution window, at most ${MAX_DAYS} days, ${settings.minUnitsPerArm.toLocaleString('en-US')} to ${MAX_UNITS_PER_ARM.toLocaleString('en-US')} units per arm in the decision window; τ = ${settings.tau.toFixed(4)} (A/A), confirmation ${settings.confirmationUnits.toLocaleString('en-US')} units per arm; seed ${SEED}\n`,
  );
  console.log('accepted (share of experiments)');
  console.log(`| rule | ${main.map((result) => result.scenario.name).join(' | ')} |`);
  console.log(`|---|${main.map(() => '---').join('|')}|`);
  for (const rule of RULES)
    console.log(`| ${rule.label} | ${main.map((result) => share(result.endings[rule.key], accepted)).join(' | ')} |`);
  console.log('\nmean units assigned per arm until the decision (or the end)');
  console.log(`| rule | ${main.map((result) => result.scenario.name).join(' | ')} |`);
  console.log(`|---|${main.map(() => '---').join('|')}|`);
  for (const rule of RULES)
    console.log(`| ${rule.label} | ${main.map((result) => meanUnits(result.endings[rule.key])).join(' | ')} |`);
  console.log('\nkloop: how experiments ended');
  for (const result of main) {
    const counts = new Map<string, number>();
    for (const ending of result.endings.kloop) counts.set(ending.reason, (counts.get(ending.reason) ?? 0) + 1);
    console.log(`- ${result.scenario.name}: ${[...counts].map(([reason, count]) => `${reason} ${count}`).join(', ')}`);
  }
  const dropped = results.find((result) => result.scenario.name === 'SRM: 2% dropped')!;
  const clean = results.filter((result) => result.scenario.droppedShare === 0);
  const falseAlarms = clean
    .flatMap((result) => result.endings.kloop)
    .filter((ending) => ending.reason === 'srm').length;
  const cleanCount = clean.reduce((sum, result) => sum + result.scenario.experiments, 0);
  const big = results.find((result) => result.scenario.name === 'SRM: none dropped')!;
  console.log(
    `\nSRM (${SRM.meanDailyUnits.toLocaleString('en-US')} recipients/day, ${SRM.days} days, no unit budget, 2% of the candidate's exposures dropped):`,
  );
  console.log(`| check | detected (2% dropped) | false alarms (nothing dropped) |`);
  console.log(`|---|---|---|`);
  console.log(
    `| kloop (always-valid χ², p < ${settings.srmAlpha}) | ${share(dropped.endings.kloop, (ending) => ending.reason === 'srm')} | ${((100 * falseAlarms) / cleanCount).toFixed(2)}% (${falseAlarms}/${cleanCount}, every scenario without a drop) |`,
  );
  console.log(
    `| fixed-horizon χ² p < 0.001, every look | ${share(dropped.endings.kloop, () => false).replace(/^.*$/, `${((100 * dropped.fixedSrmAlarms) / dropped.scenario.experiments).toFixed(1)}% (${dropped.fixedSrmAlarms}/${dropped.scenario.experiments})`)} | ${((100 * big.fixedSrmAlarms) / big.scenario.experiments).toFixed(2)}% (${big.fixedSrmAlarms}/${big.scenario.experiments}) |`,
  );
  console.log(
    `2% dropped: mean units assigned per arm when kloop stopped the experiment ${meanUnits(dropped.endings.kloop)}`,
  );
  console.log(`\n${seconds.toFixed(1)} s`);
}

function main(): void {
  const started = performance.now();
  const random = createSeededRandom(SEED);
  const settings: OnlineGateSettings = {
    ...DEFAULT_ONLINE_GATE_SETTINGS,
    tau: calibrate(random),
    minUnitsPerArm: MIN_UNITS_PER_ARM,
    maxUnitsPerArm: MAX_UNITS_PER_ARM,
  };
  const results = SCENARIOS.map((scenario) => runScenario(scenario, settings, random));
  printTables(results, settings, (performance.now() - started) / 1000);
}

main();
