/**
 * Gate benchmark (`npm run bench:gate`): kloop's gate against the naive rule
 * "accept if the mean went up", on the same simulated draws.
 *
 * The simulation (src/test-support/simulation) gives every artifact a known true
 * quality and every evaluation seeded noise, per example and per run. For
 * each trial: a fresh corpus (example difficulty offsets on optimization,
 * anchor and shadow), a calibration of the incumbent (W calibrations of
 * `noiseRepeats` runs; τ = k × rolling max noise SD, per-example SDs for the
 * anchors — the same `measureNoise`/`rollingThreshold` code as
 * `calibrateStudy`), one evaluation of the incumbent and of candidates whose
 * true quality is the incumbent's plus 0, 0.5σ, 1σ and 2σ on every partition
 * (R runs each; the incumbent with its topped-up repeats, 4R). Kloop's
 * decision is the real `decide` (α = 0.05, one-sided paired and Welch tests,
 * anchors, shadow with γ = 0.5 and its one test at shadowAlpha = 0.05); the
 * naive rule accepts when the candidate's optimization composite is higher.
 * An *overfit* candidate has a true 2σ gain on the optimization partition
 * and none on anchor and shadow.
 *
 * σ is the run-to-run SD of the run-level optimization composite (one run):
 * √(perRunNoiseSd² + perExampleNoiseSd² / n) — exactly what calibration
 * estimates. An improvement of 2σ is a true gain of 2σ composite points.
 *
 * The ratchet part runs 50 no-op proposals in sequence; an accepted
 * candidate becomes the incumbent with the evaluation that won (as a study
 * reuses stored results), so the recorded score drifts above the truth by
 * selection alone. Drift = recorded optimization composite − true composite.
 *
 * Everything is seeded; the output is identical on every run.
 */
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { DEFAULT_GATE_SETTINGS } from '../src/gate/gate.ts';
import { DEFAULT_EARLY_TEST } from '../src/gate/gate-defaults.ts';
import type { GateCalibration, GateSettings } from '../src/gate/gate.ts';
import type { RacingSettings } from '../src/gate/racing/index.ts';
import { DEFAULT_FUTILITY_LEVEL, DEFAULT_RACING_BATCH_SIZE } from '../src/config/config.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import { printAdaptiveRepeats, runAdaptiveRepeats } from './adaptive-repeats-bench.ts';
import {
  createSimulatedCorpus,
  decideSimulated,
  drawCandidate,
  evaluateSimulatedArtifact,
  evaluateSimulatedIncumbent,
  gateCalibrationFor,
  naiveAccepts,
  runRatchet,
  scenarioSigma,
  simulateCalibration,
  simulateRound,
  type GateScenario,
  type SimulatedChange,
  type SimulatedCorpus,
  type SimulatedEvaluation,
  MAIN_SCENARIO,
} from '../src/test-support/simulation/index.ts';

const ALPHA = 0.05;
/** The configured defaults of `gate.thresholdK` and `gate.anchorK` (src/config/config.ts). */
const DEFAULT_K = DEFAULT_GATE_SETTINGS.thresholdK;
const DEFAULT_ANCHOR_K = DEFAULT_GATE_SETTINGS.anchorK;
const EFFECTS_IN_SIGMA = [0, 0.5, 1, 2] as const;
const DECISIONS = 2000;
const SIDE_DECISIONS = 600;
const RATCHET_SEEDS = 150;
const PROPOSALS = 50;
const TARGET_FALSE_ACCEPT = 0.05;
const TARGET_ACCEPT_2SIGMA = 0.8;
const TARGET_OVERFIT = 0.05;
/** The shipped racing settings (gate.racing defaults, src/config/config.ts). */
const RACING: RacingSettings = { batchSize: DEFAULT_RACING_BATCH_SIZE, futilityLevel: DEFAULT_FUTILITY_LEVEL };
/** Racing beside full evaluation: the shipped settings, and with early acceptance under each spending rule (its default test). */
const RACING_MODES: ReadonlyArray<{ label: string; settings: RacingSettings }> = [
  { label: 'racing', settings: RACING },
  {
    label: "racing + early acceptance (O'Brien–Fleming)",
    settings: { ...RACING, earlyAcceptance: 'obrien-fleming', earlyTest: DEFAULT_EARLY_TEST },
  },
  {
    label: 'racing + early acceptance (Haybittle–Peto)',
    settings: { ...RACING, earlyAcceptance: 'haybittle-peto', earlyTest: DEFAULT_EARLY_TEST },
  },
];
const TARGET_RACING_COST = 0.5;
const TARGET_RACING_2SIGMA_GAP = 0.03;
const ROUNDS = 2000;
/** The false-accept target of adaptive repeats (issue #34 item 4): no-op false accepts ≤ 0.5%. */
const TARGET_ADAPTIVE_FALSE_ACCEPT = 0.005;

// R = 5, n = 40/10/20, the incumbent topped up to 4R (src/test-support/simulation/main-scenario.ts).
const MAIN: GateScenario = MAIN_SCENARIO;

/**
 * A gate configuration: `gate.thresholdK` sets τ = k × rolling max noise SD
 * (compared with Δ after scaling by √(2/R)); `gate.anchorK` sets the anchor
 * tolerance (anchorK × per-example SD × √(2/R)). The "coupled" rows use one k
 * for both, as an earlier design did, for comparison.
 */
interface GateVariant {
  label: string;
  tauK: number;
  anchorK: number;
}
const coupled = (k: number): GateVariant => ({ label: `one k = ${k} for τ and anchors`, tauK: k, anchorK: k });
const decoupled = (tauK: number): GateVariant => ({
  label:
    tauK === DEFAULT_K
      ? `thresholdK = ${tauK}, anchorK = ${DEFAULT_ANCHOR_K} (default)`
      : `thresholdK = ${tauK}, anchorK = ${DEFAULT_ANCHOR_K}`,
  tauK,
  anchorK: DEFAULT_ANCHOR_K,
});
const COUPLED = [1, 2].map(coupled);
const DECOUPLED = [0, 0.5, 1, 2].map(decoupled);

interface Tally {
  accepted: number;
  total: number;
  reasons: Record<string, number>;
}
const newTally = (): Tally => ({ accepted: 0, total: 0, reasons: {} });

function settingsFor(variant: GateVariant): GateSettings {
  return { ...DEFAULT_GATE_SETTINGS, alpha: ALPHA, thresholdK: variant.tauK, anchorK: variant.anchorK };
}

/** Wilson 95% interval of a proportion. */
function wilson(successes: number, total: number): [number, number] {
  const z = 1.959964;
  const p = successes / total;
  const denominator = 1 + (z * z) / total;
  const center = (p + (z * z) / (2 * total)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / total + (z * z) / (4 * total * total))) / denominator;
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`;
function rate(tally: Tally): string {
  const [low, high] = wilson(tally.accepted, tally.total);
  return `${percent(tally.accepted / tally.total)} [${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)}]`;
}
function topRefusal(tally: Tally): string {
  const top = Object.entries(tally.reasons).sort((a, b) => b[1] - a[1])[0];
  return top === undefined ? '—' : `${top[0]} ${percent(top[1] / tally.total)}`;
}
function refusals(tally: Tally): string {
  return Object.entries(tally.reasons)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
}

interface DecisionResults {
  sigma: number;
  meanCalibratedSd: number;
  meanRollingMaxSd: number;
  naive: Tally[];
  byVariant: Tally[][];
  /** Overfitting candidates: a true 2σ gain on optimization, 0 on anchor and shadow. */
  naiveOverfit: Tally;
  overfitByVariant: Tally[];
  /** Racing beside the default gate on the same draws (when asked): tallies and candidate example-repeats evaluated, per column and for overfits. */
  racing?: RacedTallies[];
}

/** One racing mode's tallies and candidate example-repeats evaluated, per column and for overfits; stops: futility, complete, early. */
interface RacedTallies {
  tallies: Tally[];
  overfit: Tally;
  cost: Cost[];
  overfitCost: Cost;
  harmfulCost: Cost;
  stops: number[];
}

/** Candidate example-repeats evaluated (optimization, anchor, shadow), full evaluation and raced, summed over the decisions. */
interface Cost {
  full: number;
  raced: number;
  /** Optimization example-repeats an early-accepted candidate did not evaluate: paid at the next round as the new incumbent's. */
  deferred: number;
  decisions: number;
}
const newCost = (): Cost => ({ full: 0, raced: 0, deferred: 0, decisions: 0 });
const fullCost = (scenario: GateScenario, shadowConsulted: boolean): number =>
  scenario.repeats *
  (scenario.examples.optimization + scenario.examples.anchor + (shadowConsulted ? scenario.examples.shadow : 0));

/** `decisions` trials; each: fresh corpus, calibration, incumbent, one candidate per effect size, every variant on the same draws. */
async function runDecisions(
  scenario: GateScenario,
  variants: readonly GateVariant[],
  decisions: number,
  seedBase: number,
  racingModes?: readonly RacingSettings[],
): Promise<DecisionResults> {
  const sigma = scenarioSigma(scenario);
  const naive = EFFECTS_IN_SIGMA.map(newTally);
  const byVariant = variants.map(() => EFFECTS_IN_SIGMA.map(newTally));
  const naiveOverfit = newTally();
  const overfitByVariant = variants.map(newTally);
  let sumSd = 0;
  let sumMax = 0;
  const defaultIndex = variants.findIndex(
    (variant) => variant.tauK === DEFAULT_K && variant.anchorK === DEFAULT_ANCHOR_K,
  );
  const racedModes: RacedTallies[] | undefined =
    racingModes === undefined || defaultIndex < 0
      ? undefined
      : racingModes.map(() => ({
          tallies: EFFECTS_IN_SIGMA.map(newTally),
          overfit: newTally(),
          cost: EFFECTS_IN_SIGMA.map(newCost),
          overfitCost: newCost(),
          harmfulCost: newCost(),
          stops: [0, 0, 0],
        }));
  /** The raced decisions of one candidate, every racing mode, on the same draws as the full one (whose decision `full` is). */
  const race = async (
    corpus: SimulatedCorpus,
    calibration: GateCalibration,
    incumbent: SimulatedEvaluation,
    candidate: SimulatedEvaluation,
    change: SimulatedChange,
    full: { accepted: boolean; shadowConsulted: boolean },
    pick: (raced: RacedTallies) => { tally: Tally | undefined; cost: Cost },
    planSeed: number,
  ): Promise<void> => {
    if (racedModes === undefined || racingModes === undefined) return;
    for (const [mode, raced] of racedModes.entries()) {
      const { tally, cost } = pick(raced);
      await raceOne(
        corpus,
        calibration,
        incumbent,
        candidate,
        change,
        full,
        raced,
        racingModes[mode]!,
        tally,
        cost,
        planSeed,
      );
    }
  };
  const raceOne = async (
    corpus: SimulatedCorpus,
    calibration: GateCalibration,
    incumbent: SimulatedEvaluation,
    candidate: SimulatedEvaluation,
    change: SimulatedChange,
    full: { accepted: boolean; shadowConsulted: boolean },
    raced: RacedTallies,
    racing: RacingSettings,
    tally: Tally | undefined,
    cost: Cost,
    planSeed: number,
  ): Promise<void> => {
    const q = scenario.trueQuality;
    const outcome = await simulateRound({
      scenario,
      corpus,
      calibration,
      settings: settingsFor(variants[defaultIndex]!),
      incumbent: { qualities: { optimization: q, anchor: q, shadow: q }, evaluation: incumbent },
      changes: [change],
      evaluations: [candidate],
      random: createSeededRandom(planSeed),
      racing,
      planSeed,
    });
    const decision = outcome.decisions[0]!;
    cost.full += fullCost(scenario, full.shadowConsulted);
    cost.raced += outcome.evaluations;
    if (decision.accepted && decision.stop === 'early' && decision.race !== undefined)
      cost.deferred += decision.race.planned - decision.race.evaluated;
    cost.decisions += 1;
    raced.stops[decision.stop === 'futility' ? 0 : decision.stop === 'early' ? 2 : 1]! += 1;
    if (tally === undefined) return;
    tally.total += 1;
    if (decision.accepted) tally.accepted += 1;
    else tally.reasons[decision.reason] = (tally.reasons[decision.reason] ?? 0) + 1;
  };
  for (let trial = 0; trial < decisions; trial += 1) {
    const random = createSeededRandom(seedBase + trial);
    const corpus = createSimulatedCorpus(scenario, random);
    const calibration = simulateCalibration(scenario, corpus, random);
    sumSd += calibration.noiseSds[0]!;
    sumMax += Math.max(...calibration.noiseSds);
    const incumbent = evaluateSimulatedIncumbent(scenario, corpus, random);
    for (const [column, effect] of EFFECTS_IN_SIGMA.entries()) {
      const candidate = evaluateSimulatedArtifact(scenario, corpus, scenario.trueQuality + effect * sigma, random);
      const naiveTally = naive[column]!;
      naiveTally.total += 1;
      if (naiveAccepts(incumbent, candidate)) naiveTally.accepted += 1;
      for (const [index, variant] of variants.entries()) {
        const decision = await decideSimulated(
          incumbent,
          candidate,
          gateCalibrationFor(calibration),
          settingsFor(variant),
        );
        const tally = byVariant[index]![column]!;
        tally.total += 1;
        if (decision.accepted) tally.accepted += 1;
        else tally.reasons[decision.reason] = (tally.reasons[decision.reason] ?? 0) + 1;
        if (index === defaultIndex) {
          const shift = effect * sigma;
          await race(
            corpus,
            gateCalibrationFor(calibration),
            incumbent,
            candidate,
            { optimization: shift, anchor: shift, shadow: shift },
            decision,
            (raced) => ({ tally: raced.tallies[column]!, cost: raced.cost[column]! }),
            seedBase + trial,
          );
        }
      }
    }
    const q = scenario.trueQuality;
    const overfit = evaluateSimulatedArtifact(
      scenario,
      corpus,
      { optimization: q + 2 * sigma, anchor: q, shadow: q },
      random,
    );
    naiveOverfit.total += 1;
    if (naiveAccepts(incumbent, overfit)) naiveOverfit.accepted += 1;
    for (const [index, variant] of variants.entries()) {
      const decision = await decideSimulated(incumbent, overfit, gateCalibrationFor(calibration), settingsFor(variant));
      const tally = overfitByVariant[index]!;
      tally.total += 1;
      if (decision.accepted) tally.accepted += 1;
      else tally.reasons[decision.reason] = (tally.reasons[decision.reason] ?? 0) + 1;
      if (index === defaultIndex) {
        await race(
          corpus,
          gateCalibrationFor(calibration),
          incumbent,
          overfit,
          { optimization: 2 * sigma, anchor: 0, shadow: 0 },
          decision,
          (raced) => ({ tally: raced.overfit, cost: raced.overfitCost }),
          seedBase + trial,
        );
      }
    }
    if (racedModes !== undefined) {
      // A harmful candidate (−2σ everywhere): costs only (full evaluation refuses it too).
      const harmful = evaluateSimulatedArtifact(scenario, corpus, q - 2 * sigma, random);
      const full = await decideSimulated(
        incumbent,
        harmful,
        gateCalibrationFor(calibration),
        settingsFor(variants[defaultIndex]!),
      );
      await race(
        corpus,
        gateCalibrationFor(calibration),
        incumbent,
        harmful,
        { optimization: -2 * sigma, anchor: -2 * sigma, shadow: -2 * sigma },
        full,
        (raced) => ({ tally: undefined, cost: raced.harmfulCost }),
        seedBase + trial,
      );
    }
  }
  return {
    sigma,
    meanCalibratedSd: sumSd / decisions,
    meanRollingMaxSd: sumMax / decisions,
    naive,
    byVariant,
    naiveOverfit,
    overfitByVariant,
    ...(racedModes !== undefined ? { racing: racedModes } : {}),
  };
}

interface DriftResult {
  meanDrift: number;
  driftSe: number;
  meanAccepted: number;
}

function summarizeDrift(drifts: readonly number[], accepted: readonly number[]): DriftResult {
  const meanDrift = drifts.reduce((sum, value) => sum + value, 0) / drifts.length;
  const variance = drifts.reduce((sum, value) => sum + (value - meanDrift) ** 2, 0) / (drifts.length - 1);
  return {
    meanDrift,
    driftSe: Math.sqrt(variance / drifts.length),
    meanAccepted: accepted.reduce((sum, value) => sum + value, 0) / accepted.length,
  };
}

/** Ratchets of 50 no-op proposals, the same proposals for every rule (common random numbers). */
async function runDrift(
  scenario: GateScenario,
  variants: readonly GateVariant[],
  seeds: number,
  seedBase: number,
  racingModes: readonly RacingSettings[] = [],
): Promise<{ naive: DriftResult; byVariant: DriftResult[]; raced: DriftResult[] }> {
  const naive = { drifts: [] as number[], accepted: [] as number[] };
  const racedModes = racingModes.map(() => ({ drifts: [] as number[], accepted: [] as number[] }));
  const defaultIndex = variants.findIndex(
    (variant) => variant.tauK === DEFAULT_K && variant.anchorK === DEFAULT_ANCHOR_K,
  );
  const byVariant = variants.map(() => ({ drifts: [] as number[], accepted: [] as number[] }));
  for (let seed = 0; seed < seeds; seed += 1) {
    const random = createSeededRandom(seedBase + seed);
    const corpus = createSimulatedCorpus(scenario, random);
    const calibration = simulateCalibration(scenario, corpus, random);
    const initial = evaluateSimulatedArtifact(scenario, corpus, scenario.trueQuality, random);
    const proposals: SimulatedEvaluation[] = Array.from({ length: PROPOSALS }, () =>
      evaluateSimulatedArtifact(scenario, corpus, scenario.trueQuality, random),
    );
    const outcome = await runRatchet(initial, proposals, corpus, naiveAccepts);
    naive.drifts.push(outcome.drift);
    naive.accepted.push(outcome.accepted);
    for (const [index, variant] of variants.entries()) {
      const gateCalibration = gateCalibrationFor(calibration);
      const settings = settingsFor(variant);
      const result = await runRatchet(
        initial,
        proposals,
        corpus,
        async (incumbent, candidate) =>
          (await decideSimulated(incumbent, candidate, gateCalibration, settings)).accepted,
      );
      byVariant[index]!.drifts.push(result.drift);
      byVariant[index]!.accepted.push(result.accepted);
    }
    for (const [mode, racing] of racingModes.entries()) {
      if (defaultIndex < 0) break;
      // The same ratchet with every proposal raced (no-ops: the incumbent's true qualities are q throughout).
      const gateCalibration = gateCalibrationFor(calibration);
      const q = scenario.trueQuality;
      const noOp: SimulatedChange = { optimization: 0, anchor: 0, shadow: 0 };
      let proposal = 0;
      const result = await runRatchet(initial, proposals, corpus, async (incumbent, candidate) => {
        proposal += 1;
        const outcome = await simulateRound({
          scenario,
          corpus,
          calibration: gateCalibration,
          settings: settingsFor(variants[defaultIndex]!),
          incumbent: { qualities: { optimization: q, anchor: q, shadow: q }, evaluation: incumbent },
          changes: [noOp],
          evaluations: [candidate],
          random: createSeededRandom(seedBase + seed),
          racing,
          planSeed: seedBase + seed * 100 + proposal,
        });
        return outcome.decisions[0]!.accepted;
      });
      racedModes[mode]!.drifts.push(result.drift);
      racedModes[mode]!.accepted.push(result.accepted);
    }
  }
  return {
    naive: summarizeDrift(naive.drifts, naive.accepted),
    byVariant: byVariant.map((entry) => summarizeDrift(entry.drifts, entry.accepted)),
    raced: racedModes.map((entry) => summarizeDrift(entry.drifts, entry.accepted)),
  };
}

/** Rounds of 4 candidates (3 no-ops and one 2σ gain, in a seeded order), full evaluation and raced on the same first draws. */
interface RoundResults {
  rounds: number;
  full: RoundTally;
  /** One per racing mode. */
  raced: RoundTally[];
}
interface RoundTally {
  accepted: number;
  until: number;
  total: number;
  decisions: number;
}

async function runRounds(
  scenario: GateScenario,
  rounds: number,
  seedBase: number,
  racingModes: readonly RacingSettings[],
): Promise<RoundResults> {
  const sigma = scenarioSigma(scenario);
  const result: RoundResults = {
    rounds,
    full: { accepted: 0, until: 0, total: 0, decisions: 0 },
    raced: racingModes.map(() => ({ accepted: 0, until: 0, total: 0, decisions: 0 })),
  };
  const noOp: SimulatedChange = { optimization: 0, anchor: 0, shadow: 0 };
  const good: SimulatedChange = { optimization: 2 * sigma, anchor: 2 * sigma, shadow: 2 * sigma };
  for (let trial = 0; trial < rounds; trial += 1) {
    const random = createSeededRandom(seedBase + trial);
    const corpus = createSimulatedCorpus(scenario, random);
    const calibration = gateCalibrationFor(simulateCalibration(scenario, corpus, random));
    const q = scenario.trueQuality;
    const incumbent = {
      qualities: { optimization: q, anchor: q, shadow: q },
      evaluation: evaluateSimulatedIncumbent(scenario, corpus, random),
    };
    const watch = Math.floor(random() * 4);
    const changes = [0, 1, 2, 3].map((index) => (index === watch ? good : noOp));
    const evaluations = changes.map((change) => drawCandidate(scenario, corpus, incumbent.qualities, change, random));
    for (const mode of [-1, ...racingModes.keys()]) {
      const outcome = await simulateRound({
        scenario,
        corpus,
        calibration,
        incumbent,
        changes,
        evaluations,
        random: createSeededRandom(seedBase + trial + 7_000_000),
        watch,
        planSeed: seedBase + trial,
        ...(mode >= 0 ? { racing: racingModes[mode]! } : {}),
      });
      const tally = mode < 0 ? result.full : result.raced[mode]!;
      tally.total += outcome.evaluations;
      tally.decisions += outcome.decisions.length;
      if (outcome.evaluationsUntilWatched !== null) {
        tally.accepted += 1;
        tally.until += outcome.evaluationsUntilWatched;
      }
    }
  }
  return result;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]): string =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function driftCell(result: DriftResult, sigma: number): string {
  return `${(result.meanDrift / sigma).toFixed(2)}σ ± ${(result.driftSe / sigma).toFixed(2)} (${result.meanDrift >= 0 ? '+' : ''}${result.meanDrift.toFixed(4)}), ${result.meanAccepted.toFixed(2)} acc.`;
}

function describe(scenario: GateScenario, sigma: number): string {
  return [
    `  true quality q = ${scenario.trueQuality}; example difficulty offsets ~ N(0, ${scenario.exampleEffectSd}²), a fresh corpus per trial; composites ${scenario.clamp ? 'clamped to [0, 1]' : 'unclamped'}`,
    `  noise SDs (composite units): per example and run ${scenario.perExampleNoiseSd}, per run (shared by a run's examples) ${scenario.perRunNoiseSd}`,
    `  partitions: optimization n = ${scenario.examples.optimization}, anchor ${scenario.examples.anchor}, shadow ${scenario.examples.shadow}; R = ${scenario.repeats} repeats per evaluation`,
    `  calibration: ${scenario.noiseRepeats} noise repeats, τ = k × rolling max noise SD over W = ${scenario.calibrationWindow} calibrations`,
    `  σ = √(perRun² + perExample²/n) = ${sigma.toFixed(5)}: the run-to-run SD of the run-level optimization composite (one run), what calibration measures`,
  ].join('\n');
}

const meetsTargets = (tallies: Tally[], overfit?: Tally): boolean =>
  tallies[0]!.accepted / tallies[0]!.total <= TARGET_FALSE_ACCEPT &&
  tallies[3]!.accepted / tallies[3]!.total >= TARGET_ACCEPT_2SIGMA &&
  (overfit === undefined || overfit.accepted / overfit.total <= TARGET_OVERFIT);

function sweepTable(results: DecisionResults, variants: readonly GateVariant[], drift?: DriftResult[]): string {
  return table(
    [
      'gate',
      'false accepts (no-op)',
      'accept 0.5σ',
      'accept 1σ',
      'accept 2σ',
      'accepted overfits',
      ...(drift ? ['drift after 50 no-ops'] : []),
      '2σ refused mostly by',
      'margin refusals (no-op / 2σ)',
      'targets',
    ],
    variants.map((variant, index) => {
      const tallies = results.byVariant[index]!;
      const overfit = results.overfitByVariant[index]!;
      return [
        variant.label,
        ...tallies.map(rate),
        rate(overfit),
        ...(drift ? [driftCell(drift[index]!, results.sigma)] : []),
        topRefusal(tallies[3]!),
        `${percent((tallies[0]!.reasons.below_margin ?? 0) / tallies[0]!.total)} / ${percent((tallies[3]!.reasons.below_margin ?? 0) / tallies[3]!.total)}`,
        meetsTargets(tallies, overfit)
          ? 'all'
          : tallies[0]!.accepted / tallies[0]!.total <= TARGET_FALSE_ACCEPT
            ? 'no-op only'
            : 'none',
      ];
    }),
  );
}

const verdictsOfRacing: string[] = [];

/** The racing section: full evaluation and each racing mode on the same draws, the round of four, the targets. */
function printRacing(
  results: DecisionResults,
  rounds: RoundResults,
  full: Tally[],
  fullOverfit: Tally,
  verdicts: string[],
  fullDrift: DriftResult,
  racedDrift: DriftResult[],
): void {
  const modes = results.racing!;
  const perDecision = (cost: Cost, side: 'full' | 'raced'): number => cost[side] / cost.decisions;
  const columnsOf = (raced: RacedTallies): Cost[] => [...raced.cost, raced.overfitCost];
  const meanOf = (raced: RacedTallies, side: 'full' | 'raced'): number =>
    columnsOf(raced).reduce((sum, cost) => sum + perDecision(cost, side), 0) / columnsOf(raced).length;
  const evaluations = (raced: RacedTallies, side: 'full' | 'raced'): string =>
    columnsOf(raced)
      .map((cost) => perDecision(cost, side).toFixed(0))
      .join(' / ');
  const roundPer = (tally: RoundTally): number => tally.total / tally.decisions;
  const untilOf = (tally: RoundTally): number => tally.until / tally.accepted;
  const fullMean = meanOf(modes[0]!, 'full');
  console.log(
    `\nRacing (gate.racing: batches of ${RACING.batchSize} example-repeats, futilityLevel ${RACING.futilityLevel}; early acceptance with the ${DEFAULT_EARLY_TEST} test) beside full evaluation, on the same draws, R = ${MAIN.repeats}; evaluations = the candidate's example-repeats (optimization ${MAIN.examples.optimization}×${MAIN.repeats}, anchor ${MAIN.examples.anchor}×${MAIN.repeats}, shadow ${MAIN.examples.shadow}×${MAIN.repeats} when consulted):`,
  );
  console.log(
    table(
      [
        'evaluation',
        'evaluations per decision (no-op / 0.5σ / 1σ / 2σ / overfit)',
        'mean of the five',
        'false accepts (no-op)',
        'accept 0.5σ',
        'accept 1σ',
        'accept 2σ',
        'accepted overfits',
        'drift after 50 no-ops',
        'round of 4, one 2σ gain: evaluations until accepted',
        'per decision in the round',
      ],
      [
        [
          'full',
          evaluations(modes[0]!, 'full'),
          fullMean.toFixed(0),
          ...full.map(rate),
          rate(fullOverfit),
          driftCell(fullDrift, results.sigma),
          untilOf(rounds.full).toFixed(0),
          roundPer(rounds.full).toFixed(0),
        ],
        ...modes.map((raced, mode) => [
          RACING_MODES[mode]!.label,
          evaluations(raced, 'raced'),
          `${meanOf(raced, 'raced').toFixed(0)} (${percent(meanOf(raced, 'raced') / fullMean)})`,
          ...raced.tallies.map(rate),
          rate(raced.overfit),
          driftCell(racedDrift[mode]!, results.sigma),
          `${untilOf(rounds.raced[mode]!).toFixed(0)} (${percent(untilOf(rounds.raced[mode]!) / untilOf(rounds.full))})`,
          `${roundPer(rounds.raced[mode]!).toFixed(0)} (${percent(roundPer(rounds.raced[mode]!) / roundPer(rounds.full))})`,
        ]),
      ],
    ),
  );
  for (const [mode, raced] of modes.entries()) {
    const deferred = columnsOf(raced).reduce((sum, cost) => sum + cost.deferred / cost.decisions, 0) / 5;
    if (deferred > 0)
      console.log(
        `  ${RACING_MODES[mode]!.label}: an accepted candidate becomes the incumbent, whose optimization repeats the next round evaluates in full: counting the ones early acceptance left out, ${(meanOf(raced, 'raced') + deferred).toFixed(0)} evaluations per decision (${percent((meanOf(raced, 'raced') + deferred) / fullMean)} of full)`,
      );
    const harmful = raced.harmfulCost;
    const [futile, complete, early] = raced.stops as [number, number, number];
    console.log(
      `  ${RACING_MODES[mode]!.label}: a harmful candidate (−2σ everywhere) ${perDecision(harmful, 'full').toFixed(0)} → ${perDecision(harmful, 'raced').toFixed(0)} evaluations (${percent(perDecision(harmful, 'raced') / perDecision(harmful, 'full'))}), refused both ways; of ${futile + complete + early} raced decisions ${futile} stopped for futility (on optimization or on the shadow), ${early} accepted early on optimization (then gated on anchors and shadow in full), ${complete} evaluated in full; the 2σ gain of the round accepted in ${percent(rounds.raced[mode]!.accepted / rounds.rounds)} of ${rounds.rounds} rounds (full ${percent(rounds.full.accepted / rounds.rounds)})`,
    );
    const gap = full[3]!.accepted / full[3]!.total - raced.tallies[3]!.accepted / raced.tallies[3]!.total;
    const racedTwo = raced.tallies[3]!.accepted / raced.tallies[3]!.total;
    const costRatio = meanOf(raced, 'raced') / fullMean;
    const roundRatio = roundPer(rounds.raced[mode]!) / roundPer(rounds.full);
    const falseAccepts = raced.tallies[0]!.accepted / raced.tallies[0]!.total;
    verdicts.push(
      `  ${RACING_MODES[mode]!.label}: evaluations per decision ${percent(costRatio)} of full over the five single-decision columns, ${percent(roundRatio)} in the round of four (target ≤ ${percent(TARGET_RACING_COST)}: ${costRatio <= TARGET_RACING_COST ? 'met' : 'missed'} on the columns, ${roundRatio <= TARGET_RACING_COST ? 'met' : 'missed'} in the round); ` +
        `no-op false accepts ${percent(falseAccepts)} (≤ ${percent(TARGET_FALSE_ACCEPT)}: ${falseAccepts <= TARGET_FALSE_ACCEPT ? 'met' : 'missed'}); ` +
        `2σ acceptance ${percent(racedTwo)}, ${(gap * 100).toFixed(1)} points below full (within ${(TARGET_RACING_2SIGMA_GAP * 100).toFixed(0)} and ≥ ${percent(TARGET_ACCEPT_2SIGMA)}: ${gap <= TARGET_RACING_2SIGMA_GAP && racedTwo >= TARGET_ACCEPT_2SIGMA ? 'met' : 'missed'}); ` +
        `accepted overfits ${percent(raced.overfit.accepted / raced.overfit.total)} (≤ ${percent(TARGET_OVERFIT)}: ${raced.overfit.accepted / raced.overfit.total <= TARGET_OVERFIT ? 'met' : 'missed'})`,
    );
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const sigma = scenarioSigma(MAIN);
  console.log(
    'kloop gate benchmark — kloop\'s gate (the real `decide`) vs the naive rule "accept if the mean went up", on the same simulated draws\n',
  );
  console.log('Settings (main scenario):');
  console.log(describe(MAIN, sigma));
  console.log(
    `  gate: α = ${ALPHA}, margin Δ > τ·√(1/R + 1/R_incumbent), one-sided paired t-test on per-example composites + Welch's t-test on the R run-level composites; anchors: no drop beyond ${DEFAULT_GATE_SETTINGS.anchorTolerance} + anchorK × per-example SD × √(2/R); shadow: Δshadow > 0, ≥ ${DEFAULT_GATE_SETTINGS.generalizationRatio}·Δopt − ${DEFAULT_GATE_SETTINGS.shadowMarginSe} SE, and one one-sided paired t-test, its variance with the calibrated run-shared noise, at shadowAlpha = ${DEFAULT_GATE_SETTINGS.shadowAlpha} (Δshadow > 0 unproven: not_confirmed)`,
  );
  console.log(
    `  improvements: the candidate's true quality is q + 0.5σ, 1σ or 2σ on every partition; no-op: q; overfit: q + 2σ on optimization only`,
  );
  console.log(
    `  the incumbent is evaluated with ${MAIN.incumbentRepeats} repeats, as the loop tops it up after three rounds as the incumbent (gate.incumbentRepeats default 4R); a freshly accepted one is shown apart`,
  );
  console.log(
    `  ${DECISIONS} decisions per column in the main tables (${SIDE_DECISIONS} in the side tables); drift: ${RATCHET_SEEDS} seeds × ${PROPOSALS} no-op proposals in sequence`,
  );
  console.log(
    `  targets: false-accept rate on no-ops ≤ ${TARGET_FALSE_ACCEPT}; acceptance of 2σ improvements ≥ ${percent(TARGET_ACCEPT_2SIGMA)}; accepted overfits ≤ ${percent(TARGET_OVERFIT)}`,
  );
  console.log(
    '  rates with their 95% Wilson interval; drift = recorded − true optimization composite, mean ± SE in σ (composite units), and mean accepted no-ops\n',
  );

  const variants = [...COUPLED, ...DECOUPLED];
  const racingModes = RACING_MODES.map((mode) => mode.settings);
  const results = await runDecisions(MAIN, variants, DECISIONS, 1_000_000, racingModes);
  const drift = await runDrift(MAIN, variants, RATCHET_SEEDS, 2_000_000, racingModes);
  console.log(
    `Calibration here: mean single-calibration noise SD ${results.meanCalibratedSd.toFixed(5)} (σ = ${sigma.toFixed(5)}); mean rolling max over W = ${MAIN.calibrationWindow}: ${results.meanRollingMaxSd.toFixed(5)} = ${(results.meanRollingMaxSd / sigma).toFixed(2)}σ, so τ ≈ ${(results.meanRollingMaxSd / sigma).toFixed(2)}·k·σ\n`,
  );

  const defaultIndex = variants.findIndex(
    (variant) => variant.tauK === DEFAULT_K && variant.anchorK === DEFAULT_ANCHOR_K,
  );
  const kloopDefault = results.byVariant[defaultIndex]!;
  console.log(`Side by side, R = ${MAIN.repeats}:`);
  console.log(
    table(
      [
        'rule',
        'false accepts (no-op)',
        'accept 0.5σ',
        'accept 1σ',
        'accept 2σ',
        'accepted overfits',
        'drift after 50 no-ops',
      ],
      [
        ['naive: mean went up', ...results.naive.map(rate), rate(results.naiveOverfit), driftCell(drift.naive, sigma)],
        [
          `kloop gate (thresholdK ${DEFAULT_K}, anchorK ${DEFAULT_ANCHOR_K})`,
          ...kloopDefault.map(rate),
          rate(results.overfitByVariant[defaultIndex]!),
          driftCell(drift.byVariant[defaultIndex]!, sigma),
        ],
      ],
    ),
  );
  console.log(
    `  kloop default refusals of no-ops: ${refusals(kloopDefault[0]!)}; of 2σ improvements: ${refusals(kloopDefault[3]!)}; of overfits: ${refusals(results.overfitByVariant[defaultIndex]!)} (of ${DECISIONS} each)`,
  );
  console.log(
    '  overfit: a true 2σ gain on the optimization partition and none on anchor and shadow (a rule keyed to optimization-example words)',
  );
  const inflation = results.meanRollingMaxSd / sigma;
  const spread = Math.sqrt(1 / MAIN.repeats + 1 / (MAIN.incumbentRepeats ?? MAIN.repeats));
  const marginPass = 1 - normalCdf((inflation * DEFAULT_K * spread - 2) / spread, 0, 1);
  console.log(
    `  margin: τ ≈ ${inflation.toFixed(2)} × ${DEFAULT_K} × σ, compared with Δ after scaling by √(1/R + 1/R_incumbent) = ${spread.toFixed(2)}; Δopt of a true 2σ gain ~ N(2σ, (${spread.toFixed(2)}σ)²), ` +
      `so the margin alone passes it with probability ≈ ${percent(marginPass)}; the rest of the refusals come from the tests (Welch on R run-level composites is the weakest with few repeats).`,
  );

  printRacing(
    results,
    await runRounds(MAIN, ROUNDS, 6_000_000, racingModes),
    kloopDefault,
    results.overfitByVariant[defaultIndex]!,
    verdictsOfRacing,
    drift.byVariant[defaultIndex]!,
    drift.raced,
  );

  // Adaptive repeats: a temperature-0 world (a third of the examples noise-free, 1% rare different answers of −0.1).
  const temperatureZero: GateScenario = {
    ...MAIN,
    noiseFree: { share: 1 / 3, slip: { probability: 0.01, size: 0.1 } },
  };
  const adaptive = await runAdaptiveRepeats(temperatureZero, DECISIONS, 8_000_000);
  const exact = await runAdaptiveRepeats({ ...MAIN, noiseFree: { share: 1 / 3 } }, SIDE_DECISIONS, 8_500_000);
  const unchanged = await runAdaptiveRepeats(MAIN, SIDE_DECISIONS, 8_700_000);
  verdictsOfRacing.push(
    ...printAdaptiveRepeats(adaptive, exact, table, {
      falseAccept: TARGET_ADAPTIVE_FALSE_ACCEPT,
      accept2Sigma: TARGET_ACCEPT_2SIGMA,
      overfit: TARGET_OVERFIT,
    }),
  );
  console.log(
    `  the main scenario (normal noise on every example: none is noise-free): ${unchanged.differing} of ${unchanged.trials * 5} decisions differ, evaluations ${(unchanged.adaptive.evaluations.reduce((sum, value) => sum + value, 0) / unchanged.trials / 5).toFixed(0)} vs ${(unchanged.full.evaluations.reduce((sum, value) => sum + value, 0) / unchanged.trials / 5).toFixed(0)} per decision`,
  );

  console.log(
    `\nk sweep, R = ${MAIN.repeats} (thresholdK sets τ = k × rolling max noise SD; anchorK the anchor tolerance anchorK × per-example SD × √(2/R); "one k" rows use the same k for both):`,
  );
  console.log(sweepTable(results, variants, drift.byVariant));

  const sideVariants = [...[0.5, 1, 1.5, 2].map(coupled), ...DECOUPLED];
  const verdicts: string[] = [];
  const record = (repeats: number, result: DecisionResults, list: readonly GateVariant[]): void => {
    const passing = list
      .filter((_, index) => meetsTargets(result.byVariant[index]!, result.overfitByVariant[index]!))
      .map((variant) => variant.label);
    verdicts.push(
      `  R = ${repeats}: ${passing.length === 0 ? 'no gate setting meets all targets' : `meets all targets: ${passing.join('; ')}`}`,
    );
  };
  record(MAIN.repeats, results, variants);
  for (const repeats of [1, 3, 8]) {
    const scenario: GateScenario = { ...MAIN, repeats, incumbentRepeats: 4 * repeats };
    const side = await runDecisions(scenario, sideVariants, SIDE_DECISIONS, 3_000_000 + repeats * 10_000);
    console.log(`\nOther repeats: R = ${repeats}, everything else equal (σ is unchanged: it is the one-run SD):`);
    console.log(sweepTable(side, sideVariants));
    record(repeats, side, sideVariants);
  }

  // A freshly accepted incumbent: its R winning repeats, not yet topped up.
  const fresh: GateScenario = { ...MAIN, incumbentRepeats: MAIN.repeats };
  const freshResults = await runDecisions(fresh, [decoupled(DEFAULT_K)], SIDE_DECISIONS, 5_000_000);
  console.log(
    `\nA freshly accepted incumbent (evaluated with its R = ${MAIN.repeats} repeats, not yet topped up), default gate:`,
  );
  console.log(sweepTable(freshResults, [decoupled(DEFAULT_K)]));

  // Robustness: most noise shared within a run. The paired test alone would be fooled
  // (a lucky run lifts every example); the margin and Welch's test must hold.
  const runHeavy: GateScenario = { ...MAIN, perRunNoiseSd: 0.03 };
  const robustVariants = [decoupled(0), decoupled(0.5), decoupled(DEFAULT_K), decoupled(2)];
  const robust = await runDecisions(runHeavy, robustVariants, SIDE_DECISIONS, 4_000_000);
  console.log(
    `\nRobustness: per-run noise 0.03 (σ = ${scenarioSigma(runHeavy).toFixed(5)}, mostly shared within a run), R = ${MAIN.repeats}:`,
  );
  console.log(sweepTable(robust, robustVariants));

  console.log(
    '\nVerdict (targets: no-op false accepts ≤ 5%, 2σ acceptance ≥ 80%, accepted overfits ≤ 5%; racing: evaluations per decision ≤ 50% of full, 2σ acceptance within 3 points of full):',
  );
  console.log([...verdicts, ...verdictsOfRacing].join('\n'));
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

await main();
