/**
 * Gate trials on the simulation task: a simulated study (corpus, calibration,
 * incumbent and candidates of known true quality) whose decisions are made by
 * the real gate (`decide`) or by the naive rule "accept if the mean went up",
 * so both can be measured on the same draws (`bench/gate-bench.ts`).
 *
 * Calibration is simulated the way `calibrateStudy` measures it: the
 * incumbent is evaluated `noiseRepeats` times, the noise SD is the SD of the
 * optimization partition's run-level composites, per-example SDs come from
 * every partition, and τ = k × the rolling maximum of the noise SD over the
 * last W calibrations (`measureNoise` and `rollingThreshold`, the same code).
 */
import type { PartitionScore } from '../../evaluator/partition-score.ts';
import type { GateCalibration, GateDecision, GateSettings } from '../../gate/gate.ts';
import { DEFAULT_GATE_SETTINGS, decide } from '../../gate/gate.ts';
import type { RandomSource } from '../../stats/index.ts';
import { measureNoise, rollingThreshold } from '../../calibration/calibration.ts';
import {
  createExampleEffects,
  runLevelNoiseSd,
  simulatePartitionScore,
  trueComposite,
} from './simulate-partition-score.ts';

/** A simulated study: sizes, noise and repeat counts. Composite units throughout. */
export interface GateScenario {
  /** q of the incumbent. */
  trueQuality: number;
  /** SD of the per-example difficulty offsets. */
  exampleEffectSd: number;
  perExampleNoiseSd: number;
  perRunNoiseSd: number;
  examples: { optimization: number; anchor: number; shadow: number };
  /** R: evaluation repeats per artifact and partition in a decision. */
  repeats: number;
  /**
   * Repeats of the incumbent in a decision: the loop tops a stochastic
   * incumbent up by R each round it stays the incumbent, up to
   * `gate.incumbentRepeats` (default 4R). Default R (a freshly accepted incumbent).
   */
  incumbentRepeats?: number;
  /** Repeats of the incumbent per calibration. */
  noiseRepeats: number;
  /** W: calibrations in the rolling maximum. */
  calibrationWindow: number;
  clamp: boolean;
  /**
   * A temperature-0 world: each example is noise-free (neither noise term)
   * with probability `share`, drawn with the corpus; `slip` gives those a
   * rare different answer (see `simulatePartitionScore`). Default: every
   * example noisy (and no extra draw, so the other scenarios' draws are unchanged).
   */
  noiseFree?: { share: number; slip?: { probability: number; size: number } };
}

/** The three partitions' example offsets. */
export interface SimulatedCorpus {
  optimization: Record<string, number>;
  anchor: Record<string, number>;
  shadow: Record<string, number>;
  /** Examples (any partition) with no noise: `scenario.noiseFree`. Absent: none. */
  noiseFree?: ReadonlySet<string>;
}

/** True qualities per partition: an overfitting artifact is better on optimization only. */
export interface PartitionQualities {
  optimization: number;
  anchor: number;
  shadow: number;
}

/** One artifact evaluated on the three partitions (R repeats each). */
export interface SimulatedEvaluation {
  /** True quality on the optimization partition. */
  trueQuality: number;
  optimization: PartitionScore;
  anchor: PartitionScore;
  shadow: PartitionScore;
}

/** The outcome of W simulated calibrations of one incumbent. */
export interface SimulatedCalibration {
  /** Noise SD of each calibration, newest first. */
  noiseSds: number[];
  /** Per-example SDs of the newest calibration. */
  exampleSds: Record<string, number>;
  /** Repeats of each calibration. */
  noiseRepeats: number;
}

/**
 * σ of the scenario's optimization partition (what calibration estimates).
 * With a noise-free share f (slips p, s): the run noise reaches the (1 − f)·n
 * noisy examples only, so σ² = ((1 − f)·perRun)² + ((1 − f)·perExample² +
 * f·p(1 − p)·s²)/n, in expectation over the share.
 */
export function scenarioSigma(scenario: GateScenario): number {
  const share = scenario.noiseFree?.share ?? 0;
  if (share === 0)
    return runLevelNoiseSd({
      perExampleNoiseSd: scenario.perExampleNoiseSd,
      perRunNoiseSd: scenario.perRunNoiseSd,
      examples: scenario.examples.optimization,
    });
  const slip = scenario.noiseFree?.slip ?? { probability: 0, size: 0 };
  const n = scenario.examples.optimization;
  const slipVariance = slip.probability * (1 - slip.probability) * slip.size ** 2;
  return Math.sqrt(
    ((1 - share) * scenario.perRunNoiseSd) ** 2 +
      ((1 - share) * scenario.perExampleNoiseSd ** 2 + share * slipVariance) / n,
  );
}

/** Draws a fresh corpus (example offsets) for the scenario. */
export function createSimulatedCorpus(scenario: GateScenario, random: RandomSource): SimulatedCorpus {
  const corpus: SimulatedCorpus = {
    optimization: createExampleEffects({
      prefix: 'o',
      count: scenario.examples.optimization,
      sd: scenario.exampleEffectSd,
      random,
    }),
    anchor: createExampleEffects({
      prefix: 'a',
      count: scenario.examples.anchor,
      sd: scenario.exampleEffectSd,
      random,
    }),
    shadow: createExampleEffects({
      prefix: 's',
      count: scenario.examples.shadow,
      sd: scenario.exampleEffectSd,
      random,
    }),
  };
  const share = scenario.noiseFree?.share;
  if (share === undefined) return corpus;
  const ids = [corpus.optimization, corpus.anchor, corpus.shadow].flatMap((effects) => Object.keys(effects));
  return { ...corpus, noiseFree: new Set(ids.filter(() => random() < share)) };
}

function simulate(
  scenario: GateScenario,
  corpus: Pick<SimulatedCorpus, 'noiseFree'>,
  effects: Record<string, number>,
  partition: string,
  trueQuality: number,
  repeats: number,
  random: RandomSource,
): PartitionScore {
  return simulatePartitionScore({
    partition,
    trueQuality,
    exampleEffects: effects,
    perExampleNoiseSd: scenario.perExampleNoiseSd,
    perRunNoiseSd: scenario.perRunNoiseSd,
    repeats,
    clamp: scenario.clamp,
    random,
    ...(corpus.noiseFree !== undefined ? { noiseFreeIds: corpus.noiseFree } : {}),
    ...(scenario.noiseFree?.slip !== undefined ? { slip: scenario.noiseFree.slip } : {}),
  });
}

/**
 * Evaluates an artifact on every partition, `scenario.repeats` times: of true
 * quality `trueQuality` everywhere, or per partition (an overfitting artifact:
 * better on optimization, unchanged on anchor and shadow).
 */
export function evaluateSimulatedArtifact(
  scenario: GateScenario,
  corpus: SimulatedCorpus,
  trueQuality: number | PartitionQualities,
  random: RandomSource,
  repeats: number = scenario.repeats,
): SimulatedEvaluation {
  const quality: PartitionQualities =
    typeof trueQuality === 'number'
      ? { optimization: trueQuality, anchor: trueQuality, shadow: trueQuality }
      : trueQuality;
  return {
    trueQuality: quality.optimization,
    optimization: simulate(
      scenario,
      corpus,
      corpus.optimization,
      'optimization',
      quality.optimization,
      repeats,
      random,
    ),
    anchor: simulate(scenario, corpus, corpus.anchor, 'anchor', quality.anchor, repeats, random),
    shadow: simulate(scenario, corpus, corpus.shadow, 'shadow', quality.shadow, repeats, random),
  };
}

/** The incumbent of a decision: evaluated with `scenario.incumbentRepeats` (default R). */
export function evaluateSimulatedIncumbent(
  scenario: GateScenario,
  corpus: SimulatedCorpus,
  random: RandomSource,
): SimulatedEvaluation {
  return evaluateSimulatedArtifact(
    scenario,
    corpus,
    scenario.trueQuality,
    random,
    scenario.incumbentRepeats ?? scenario.repeats,
  );
}

/**
 * Simulates the W calibrations of the rolling window (each `noiseRepeats`
 * evaluations of the incumbent); the newest one covers every partition and
 * gives the per-example SDs.
 */
export function simulateCalibration(
  scenario: GateScenario,
  corpus: SimulatedCorpus,
  random: RandomSource,
): SimulatedCalibration {
  const q = scenario.trueQuality;
  const newest = measureNoise([
    simulate(scenario, corpus, corpus.optimization, 'optimization', q, scenario.noiseRepeats, random),
    simulate(scenario, corpus, corpus.anchor, 'anchor', q, scenario.noiseRepeats, random),
    simulate(scenario, corpus, corpus.shadow, 'shadow', q, scenario.noiseRepeats, random),
  ]);
  const noiseSds = [newest.partitionSds.optimization ?? 0];
  for (let index = 1; index < scenario.calibrationWindow; index += 1) {
    const older = measureNoise([
      simulate(scenario, corpus, corpus.optimization, 'optimization', q, scenario.noiseRepeats, random),
    ]);
    noiseSds.push(older.partitionSds.optimization ?? 0);
  }
  return { noiseSds, exampleSds: newest.exampleSds, noiseRepeats: scenario.noiseRepeats };
}

/** What the gate reads: the rolling maximum of the noise SDs (τ = `thresholdK` × it, at decision time) and the per-example SDs. */
export function gateCalibrationFor(calibration: SimulatedCalibration): GateCalibration {
  return {
    noiseSd: rollingThreshold(1, calibration.noiseSds),
    exampleSds: calibration.exampleSds,
    noiseRepeats: calibration.noiseRepeats,
  };
}

/** The real gate on two simulated evaluations (stochastic executor: Welch's test is on). */
export function decideSimulated(
  incumbent: SimulatedEvaluation,
  candidate: SimulatedEvaluation,
  calibration: GateCalibration,
  settings: Readonly<GateSettings> = DEFAULT_GATE_SETTINGS,
): Promise<GateDecision> {
  return decide(
    {
      constraints: { passed: true, violations: [] },
      optimization: { incumbent: incumbent.optimization, candidate: candidate.optimization },
      anchor: { incumbent: incumbent.anchor, candidate: candidate.anchor },
      evaluateShadow: async () => ({ incumbent: incumbent.shadow, candidate: candidate.shadow }),
      calibration,
      stochastic: true,
    },
    settings,
  );
}

/** The naive rule: accept when the candidate's optimization composite is above the incumbent's. */
export function naiveAccepts(incumbent: SimulatedEvaluation, candidate: SimulatedEvaluation): boolean {
  return (candidate.optimization.composite ?? -Infinity) > (incumbent.optimization.composite ?? -Infinity);
}

/** Outcome of a ratchet over a sequence of proposals. */
export interface RatchetOutcome {
  accepted: number;
  /** The incumbent's recorded optimization composite at the end minus its true expected composite. */
  drift: number;
}

/**
 * Runs a ratchet over pre-drawn candidate evaluations: each accepted candidate
 * becomes the incumbent *with the evaluation that won* (as a study reuses
 * stored results), so selection bias accumulates in the recorded score.
 *
 * @param accepts the rule (kloop's gate or the naive rule)
 */
export async function runRatchet(
  initial: SimulatedEvaluation,
  proposals: readonly SimulatedEvaluation[],
  corpus: SimulatedCorpus,
  accepts: (incumbent: SimulatedEvaluation, candidate: SimulatedEvaluation) => boolean | Promise<boolean>,
): Promise<RatchetOutcome> {
  let incumbent = initial;
  let accepted = 0;
  for (const candidate of proposals) {
    if (await accepts(incumbent, candidate)) {
      incumbent = candidate;
      accepted += 1;
    }
  }
  return {
    accepted,
    drift: (incumbent.optimization.composite ?? Number.NaN) - trueComposite(incumbent.trueQuality, corpus.optimization),
  };
}
