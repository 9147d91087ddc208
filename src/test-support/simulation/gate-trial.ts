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
}

/** The three partitions' example offsets. */
export interface SimulatedCorpus {
  optimization: Record<string, number>;
  anchor: Record<string, number>;
  shadow: Record<string, number>;
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
}

/** σ of the scenario's optimization partition (what calibration estimates). */
export function scenarioSigma(scenario: GateScenario): number {
  return runLevelNoiseSd({
    perExampleNoiseSd: scenario.perExampleNoiseSd,
    perRunNoiseSd: scenario.perRunNoiseSd,
    examples: scenario.examples.optimization,
  });
}

/** Draws a fresh corpus (example offsets) for the scenario. */
export function createSimulatedCorpus(scenario: GateScenario, random: RandomSource): SimulatedCorpus {
  return {
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
}

function simulate(
  scenario: GateScenario,
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
    optimization: simulate(scenario, corpus.optimization, 'optimization', quality.optimization, repeats, random),
    anchor: simulate(scenario, corpus.anchor, 'anchor', quality.anchor, repeats, random),
    shadow: simulate(scenario, corpus.shadow, 'shadow', quality.shadow, repeats, random),
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
    simulate(scenario, corpus.optimization, 'optimization', q, scenario.noiseRepeats, random),
    simulate(scenario, corpus.anchor, 'anchor', q, scenario.noiseRepeats, random),
    simulate(scenario, corpus.shadow, 'shadow', q, scenario.noiseRepeats, random),
  ]);
  const noiseSds = [newest.partitionSds.optimization ?? 0];
  for (let index = 1; index < scenario.calibrationWindow; index += 1) {
    const older = measureNoise([
      simulate(scenario, corpus.optimization, 'optimization', q, scenario.noiseRepeats, random),
    ]);
    noiseSds.push(older.partitionSds.optimization ?? 0);
  }
  return { noiseSds, exampleSds: newest.exampleSds };
}

/** What the gate reads: the rolling maximum of the noise SDs (τ = `thresholdK` × it, at decision time) and the per-example SDs. */
export function gateCalibrationFor(calibration: SimulatedCalibration): GateCalibration {
  return { noiseSd: rollingThreshold(1, calibration.noiseSds), exampleSds: calibration.exampleSds };
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
