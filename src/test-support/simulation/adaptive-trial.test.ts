import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../gate/gate.ts';
import { createSeededRandom } from '../../stats/index.ts';
import type { GateScenario } from './index.ts';
import {
  adaptiveCandidate,
  adaptiveIncumbent,
  createSimulatedCorpus,
  decideSimulated,
  evaluateSimulatedArtifact,
  evaluateSimulatedIncumbent,
  gateCalibrationFor,
  MAIN_SCENARIO,
  scenarioSigma,
  simulateCalibration,
} from './index.ts';

/** bench:gate's temperature-0 world: a third of the examples noise-free, 1% rare different answers of −0.1. */
const WORLD: GateScenario = {
  ...MAIN_SCENARIO,
  noiseFree: { share: 1 / 3, slip: { probability: 0.01, size: 0.1 } },
};

describe('the temperature-0 world', () => {
  it('draws noise-free examples with the corpus and leaves them without noise', () => {
    const random = createSeededRandom(11);
    const { noiseFree: _, ...noisy } = WORLD;
    const exact: GateScenario = { ...noisy, noiseFree: { share: 1 / 3 } };
    const corpus = createSimulatedCorpus(exact, random);
    expect(corpus.noiseFree?.size).toBe(20);
    const score = evaluateSimulatedArtifact(exact, corpus, 0.6, random).optimization;
    const id = [...corpus.noiseFree!].find((each) => each.startsWith('o'))!;
    const values = score.examples
      .filter((record) => record.exampleId === id)
      .map((record) => (record.valid ? record.composite : Number.NaN));
    expect(values).toHaveLength(5);
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toBe(0.6 + corpus.optimization[id]!);
  });

  it('σ in expectation: ((1 − f)·perRun)² + ((1 − f)·perExample² + f·p(1 − p)s²)/n', () => {
    const f = 1 / 3;
    const expected = Math.sqrt(((1 - f) * 0.01) ** 2 + ((1 - f) * 0.08 ** 2 + f * 0.01 * 0.99 * 0.1 ** 2) / 40);
    expect(scenarioSigma(WORLD)).toBeCloseTo(expected, 15);
  });
});

describe('adaptive repeats on simulated draws', () => {
  it('copies a no-op candidate’s agreeing noise-free draws and skips the incumbent’s top-ups there, exactly', () => {
    const { noiseFree: _, ...noisy } = WORLD;
    const exact: GateScenario = { ...noisy, noiseFree: { share: 1 / 3 } };
    const random = createSeededRandom(5);
    const corpus = createSimulatedCorpus(exact, random);
    const calibration = gateCalibrationFor(simulateCalibration(exact, corpus, random));
    const incumbent = evaluateSimulatedIncumbent(exact, corpus, random);
    const cutIncumbent = adaptiveIncumbent(incumbent, calibration, 5);
    const noiseFree = corpus.noiseFree!.size;
    // Every noise-free example's first 5 repeats agree: 15 top-up repeats each are copied.
    expect(cutIncumbent.saved).toBe(15 * noiseFree);
    expect(cutIncumbent.evaluation.optimization.runComposites).toEqual(incumbent.optimization.runComposites);
    const candidate = evaluateSimulatedArtifact(exact, corpus, 0.6, random);
    const cut = adaptiveCandidate(candidate, cutIncumbent.evaluation, calibration);
    const onOptimizationAndAnchor = [...corpus.noiseFree!].filter((id) => !id.startsWith('s')).length;
    expect(cut.saved).toBe(4 * onOptimizationAndAnchor);
    expect(cut.evaluation.optimization.composite).toBe(candidate.optimization.composite);
    expect(cut.evaluation.shadow).toBe(candidate.shadow);
  });

  it('accepts a no-op no more often than α, and a 2σ gain within 3 of full repeats, on the same seeded draws', async () => {
    const sigma = scenarioSigma(WORLD);
    const counts = { noOp: [0, 0], gain: [0, 0], saved: 0 };
    const trials = 150;
    for (let trial = 0; trial < trials; trial += 1) {
      const random = createSeededRandom(70_000 + trial);
      const corpus = createSimulatedCorpus(WORLD, random);
      const calibration = gateCalibrationFor(simulateCalibration(WORLD, corpus, random));
      const incumbent = evaluateSimulatedIncumbent(WORLD, corpus, random);
      const cutIncumbent = adaptiveIncumbent(incumbent, calibration, WORLD.repeats);
      for (const [key, effect] of [
        ['noOp', 0],
        ['gain', 2 * sigma],
      ] as const) {
        const candidate = evaluateSimulatedArtifact(WORLD, corpus, 0.6 + effect, random);
        const full = await decideSimulated(incumbent, candidate, calibration, DEFAULT_GATE_SETTINGS);
        const cut = adaptiveCandidate(candidate, cutIncumbent.evaluation, calibration);
        const rule = await decideSimulated(cutIncumbent.evaluation, cut.evaluation, calibration, DEFAULT_GATE_SETTINGS);
        if (full.accepted) counts[key][0]! += 1;
        if (rule.accepted) counts[key][1]! += 1;
        counts.saved += cut.saved;
      }
    }
    // α = 0.05: at most 7 of 150 no-ops; none is accepted either way.
    expect(counts.noOp).toEqual([0, 0]);
    expect(counts.noOp[1]! / trials).toBeLessThanOrEqual(DEFAULT_GATE_SETTINGS.alpha);
    // The rule pulls the incumbent's skipped top-ups toward their agreeing value (no slips): 3 fewer gains pass here.
    // (119 and 116 before the anchors' SD floor, src/gate/gate-checks.ts anchorSds: an anchor calibrated at SD 0
    // no longer refuses a gain for one rare draw.)
    expect(counts.gain).toEqual([121, 118]);
    expect(counts.saved).toBe(8_888);
  });
});
