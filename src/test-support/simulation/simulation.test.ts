import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../gate/gate.ts';
import { createSeededRandom, mean, standardDeviation } from '../../stats/index.ts';
import type { GateScenario } from './index.ts';
import {
  createExampleEffects,
  createSimulatedCorpus,
  decideSimulated,
  evaluateSimulatedArtifact,
  gateCalibrationFor,
  naiveAccepts,
  runLevelNoiseSd,
  scenarioSigma,
  simulateCalibration,
  simulatePartitionScore,
  trueComposite,
} from './index.ts';

/** The bench's main scenario (bench/gate-bench.ts). */
const SCENARIO: GateScenario = {
  trueQuality: 0.6,
  exampleEffectSd: 0.15,
  perExampleNoiseSd: 0.08,
  perRunNoiseSd: 0.01,
  examples: { optimization: 40, anchor: 10, shadow: 20 },
  repeats: 3,
  noiseRepeats: 8,
  calibrationWindow: 5,
  clamp: false,
};

describe('simulatePartitionScore', () => {
  const effects = createExampleEffects({ prefix: 'o', count: 40, sd: 0.15, seed: 3 });
  const base = {
    partition: 'optimization',
    trueQuality: 0.6,
    exampleEffects: effects,
    perExampleNoiseSd: 0.08,
    perRunNoiseSd: 0.01,
  };

  it('is reproducible from its seed and shaped like an evaluator result', () => {
    const first = simulatePartitionScore({ ...base, repeats: 3, seed: 11 });
    const second = simulatePartitionScore({ ...base, repeats: 3, seed: 11 });
    expect(second).toEqual(first);
    expect(first.runComposites).toHaveLength(3);
    expect(first.total).toBe(120);
    expect(first.invalid).toBe(0);
    expect(Object.keys(effects)[0]).toBe('o00');
  });

  it('has run-to-run SD σ = √(perRun² + perExample²/n) around the true composite', () => {
    const score = simulatePartitionScore({ ...base, repeats: 4000, seed: 5 });
    const runs = score.runComposites as number[];
    const sigma = runLevelNoiseSd({ perExampleNoiseSd: 0.08, perRunNoiseSd: 0.01, examples: 40 });
    expect(standardDeviation(runs) / sigma).toBeGreaterThan(0.95);
    expect(standardDeviation(runs) / sigma).toBeLessThan(1.05);
    expect(Math.abs(mean(runs) - trueComposite(0.6, effects))).toBeLessThan(3 * (sigma / Math.sqrt(4000)));
  });

  it('clamps to [0, 1] only when asked', () => {
    const extreme = { ...base, trueQuality: 0.95, perExampleNoiseSd: 0.3, repeats: 2 };
    const clamped = simulatePartitionScore({ ...extreme, seed: 1, clamp: true });
    const free = simulatePartitionScore({ ...extreme, seed: 1 });
    const values = (score: typeof free) =>
      score.examples.map((record) => (record.valid ? record.composite : Number.NaN));
    expect(values(clamped).every((value) => value >= 0 && value <= 1)).toBe(true);
    expect(values(free).some((value) => value > 1)).toBe(true);
  });
});

describe("the real gate on simulated no-op proposals (kloop's false-accept rate)", () => {
  it('accepts at most α = 5% of 300 no-op proposals at the default k, where the naive rule accepts about half', async () => {
    const decisions = 300;
    let gateAccepted = 0;
    let naiveAccepted = 0;
    for (let trial = 0; trial < decisions; trial += 1) {
      const random = createSeededRandom(20_260_101 + trial);
      const corpus = createSimulatedCorpus(SCENARIO, random);
      const calibration = simulateCalibration(SCENARIO, corpus, random);
      const incumbent = evaluateSimulatedArtifact(SCENARIO, corpus, SCENARIO.trueQuality, random);
      const candidate = evaluateSimulatedArtifact(SCENARIO, corpus, SCENARIO.trueQuality, random); // true effect 0
      const decision = await decideSimulated(incumbent, candidate, gateCalibrationFor(calibration));
      if (decision.accepted) gateAccepted += 1;
      if (naiveAccepts(incumbent, candidate)) naiveAccepted += 1;
    }
    expect(gateAccepted / decisions).toBeLessThanOrEqual(0.05);
    // Four of these no-ops pass the optimization checks by chance; the shadow's own paired test refuses all four.
    expect(gateAccepted).toBe(0);
    // The same draws fool the naive rule about half of the time: the noise is real.
    expect(naiveAccepted).toBe(145);
  });

  it('still holds α without the margin (τ = 0): the tests alone bound false accepts', async () => {
    const decisions = 300;
    let accepted = 0;
    for (let trial = 0; trial < decisions; trial += 1) {
      const random = createSeededRandom(7_000 + trial);
      const corpus = createSimulatedCorpus(SCENARIO, random);
      const calibration = simulateCalibration(SCENARIO, corpus, random);
      const incumbent = evaluateSimulatedArtifact(SCENARIO, corpus, SCENARIO.trueQuality, random);
      const candidate = evaluateSimulatedArtifact(SCENARIO, corpus, SCENARIO.trueQuality, random);
      const decision = await decideSimulated(incumbent, candidate, gateCalibrationFor(calibration), {
        ...DEFAULT_GATE_SETTINGS,
        thresholdK: 0,
      });
      if (decision.accepted) accepted += 1;
    }
    expect(accepted / decisions).toBeLessThanOrEqual(0.05);
    expect(accepted).toBe(0);
  });

  it('σ of the scenario is what calibration estimates', () => {
    const random = createSeededRandom(99);
    const corpus = createSimulatedCorpus(SCENARIO, random);
    const estimates = Array.from({ length: 200 }, () => simulateCalibration(SCENARIO, corpus, random).noiseSds[0]!);
    expect(mean(estimates) / scenarioSigma(SCENARIO)).toBeGreaterThan(0.9);
    expect(mean(estimates) / scenarioSigma(SCENARIO)).toBeLessThan(1.05);
  });
});
