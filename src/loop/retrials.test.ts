import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../gate/gate.ts';
import { createSeededRandom } from '../stats/index.ts';
import {
  createSimulatedCorpus,
  decideSimulated,
  evaluateSimulatedArtifact,
  evaluateSimulatedIncumbent,
  firstRepeats,
  gateCalibrationFor,
  scenarioSigma,
  simulateCalibration,
  MAIN_SCENARIO,
  type GateScenario,
} from '../test-support/simulation/index.ts';
import type { JudgedExperiment } from './retrials.ts';
import { DEFAULT_RETRIALS, RETRIABLE_REASONS, retrialSettings, retrialVerdict } from './retrials.ts';

const judged = (id: number, baseVersionId: number, reason: string): JudgedExperiment => ({
  id,
  delta: 'hint += "name the customer"',
  baseVersionId,
  decision: reason === 'accepted' ? 'accepted' : 'refused',
  reason,
});

describe('retrialVerdict', () => {
  it('judges a delta never judged as fresh, and skips one judged on the same incumbent unless it may deepen', () => {
    expect(retrialVerdict([], 3, 2)).toEqual({ kind: 'fresh' });
    // A deterministic executor (deepen off, the default) would answer the same again: skipped, as before.
    expect(retrialVerdict([judged(7, 3, 'not_significant')], 3, 2)).toEqual({
      kind: 'skip',
      reason: 'already judged on this incumbent (version 3): experiment #7, refused not_significant',
    });
  });

  it('with deepen (a sampled executor), re-tries a noisy refusal on the same incumbent with more repeats', () => {
    const deepen = { deepen: true };
    // Judged once on version 3: judged again there with 2 × gate.repeats (the stored repeats and as many fresh ones).
    expect(retrialVerdict([judged(7, 3, 'not_significant')], 3, 2, deepen)).toEqual({
      kind: 'retrial',
      trial: 2,
      of: 3,
      earlier: [7],
      repeatsFactor: 2,
    });
    // Judged on version 1, then on version 3: a third trial on version 3 has 2 × the repeats (one judgement there).
    expect(retrialVerdict([judged(7, 1, 'futility'), judged(9, 3, 'not_confirmed')], 3, 2, deepen)).toEqual({
      kind: 'retrial',
      trial: 3,
      of: 3,
      earlier: [7, 9],
      repeatsFactor: 2,
    });
    expect(retrialVerdict([judged(7, 3, 'not_significant'), judged(9, 3, 'not_confirmed')], 3, 2, deepen)).toEqual({
      kind: 'retrial',
      trial: 3,
      of: 3,
      earlier: [7, 9],
      repeatsFactor: 3,
    });
    expect(retrialVerdict([judged(7, 3, 'specialization')], 3, 2, deepen)).toEqual({
      kind: 'skip',
      reason: 'already judged on this incumbent (version 3): experiment #7, refused specialization',
    });
    expect(retrialVerdict([judged(7, 3, 'not_significant')], 3, 0, deepen)).toEqual({
      kind: 'skip',
      reason:
        'already judged on this incumbent (version 3): experiment #7, refused not_significant; its re-trials are spent (judged 1 times, gate.retrials 0)',
    });
  });

  it('re-tries a noisy refusal against a changed incumbent, numbering the trial, until gate.retrials are spent', () => {
    expect(retrialVerdict([judged(7, 1, 'not_confirmed')], 3, 2)).toEqual({
      kind: 'retrial',
      trial: 2,
      of: 3,
      earlier: [7],
    });
    expect(retrialVerdict([judged(7, 1, 'not_confirmed'), judged(9, 2, 'futility')], 3, 2)).toEqual({
      kind: 'retrial',
      trial: 3,
      of: 3,
      earlier: [7, 9],
    });
    expect(
      retrialVerdict([judged(7, 1, 'not_confirmed'), judged(9, 2, 'futility'), judged(12, 3, 'not_significant')], 4, 2),
    ).toEqual({
      kind: 'skip',
      reason: 'its re-trials are spent: judged 3 times (#7, #9, #12), gate.retrials 2',
    });
    expect(retrialVerdict([judged(7, 1, 'not_significant')], 3, 0)).toMatchObject({
      kind: 'skip',
      reason: 'its re-trials are spent: judged 1 times (#7), gate.retrials 0',
    });
  });

  it('never reopens a refusal that is not noise, nor a delta whose near-duplicate was accepted', () => {
    expect(retrialVerdict([judged(7, 1, 'specialization')], 3, 2)).toMatchObject({
      kind: 'skip',
      reason: expect.stringContaining('refused specialization (experiment #7)'),
    });
    expect(retrialVerdict([judged(7, 1, 'below_margin')], 3, 2)).toMatchObject({ kind: 'skip' });
    // More invalid outputs than the incumbent is a count compared by a test at α for a sampled model: reopened.
    expect(retrialVerdict([judged(7, 1, 'invalid')], 3, 2)).toMatchObject({ kind: 'retrial', trial: 2 });
    // An anchor's tolerance is a multiple of its calibrated noise: its refusal is reopened like the other noisy ones.
    expect(retrialVerdict([judged(7, 1, 'anchor_regression')], 3, 2)).toEqual({
      kind: 'retrial',
      trial: 2,
      of: 3,
      earlier: [7],
    });
    expect(retrialVerdict([judged(7, 1, 'accepted')], 3, 2)).toEqual({
      kind: 'skip',
      reason: 'a near-duplicate was accepted (experiment #7)',
    });
    expect(RETRIABLE_REASONS).toEqual(['not_significant', 'not_confirmed', 'futility', 'anchor_regression', 'invalid']);
  });

  it('judges a re-trial at α/K and shadowAlpha/K, the first trial at the configured levels', () => {
    expect(retrialSettings(DEFAULT_GATE_SETTINGS, 1, 2)).toBe(DEFAULT_GATE_SETTINGS);
    expect(retrialSettings(DEFAULT_GATE_SETTINGS, 2, 2)).toEqual({
      ...DEFAULT_GATE_SETTINGS,
      alpha: 0.025,
      shadowAlpha: 0.025,
    });
    expect(retrialSettings(DEFAULT_GATE_SETTINGS, 3, 4)).toEqual({
      ...DEFAULT_GATE_SETTINGS,
      alpha: 0.0125,
      shadowAlpha: 0.0125,
    });
    // On the same incumbent: the repeats too.
    expect(retrialSettings({ ...DEFAULT_GATE_SETTINGS, repeats: 5 }, 2, 2, 2)).toEqual({
      ...DEFAULT_GATE_SETTINGS,
      alpha: 0.025,
      shadowAlpha: 0.025,
      repeats: 10,
    });
  });
});

/** bench:gate's main scenario (n = 40/10/20, R = 5, the incumbent topped up to 20 repeats), fewer noise repeats. */
const SCENARIO: GateScenario = MAIN_SCENARIO;

/**
 * One delta's life under the re-trial rule: judged once at the configured
 * levels; while refused for a noisy reason, judged again (a fresh
 * evaluation against a changed incumbent of the same true quality) at
 * α/K, shadowAlpha/K, at most K = DEFAULT_RETRIALS times.
 */
async function lifeOfDelta(seed: number, gainInSigma: number): Promise<Life> {
  const random = createSeededRandom(seed);
  const corpus = createSimulatedCorpus(SCENARIO, random);
  const calibration = gateCalibrationFor(simulateCalibration(SCENARIO, corpus, random));
  const quality = SCENARIO.trueQuality + gainInSigma * scenarioSigma(SCENARIO);
  return judgeTrials(calibration, () => ({
    incumbent: evaluateSimulatedIncumbent(SCENARIO, corpus, random),
    candidate: evaluateSimulatedArtifact(SCENARIO, corpus, quality, random),
  }));
}

type Life = { trials: string[]; accepted: boolean };

/** Judges trial 1, 2, … of one delta (`evaluations(trial)`) at the re-trial levels, while it is refused by noise. */
async function judgeTrials(
  calibration: ReturnType<typeof gateCalibrationFor>,
  evaluations: (trial: number) => {
    incumbent: ReturnType<typeof evaluateSimulatedIncumbent>;
    candidate: ReturnType<typeof evaluateSimulatedIncumbent>;
  },
): Promise<Life> {
  const trials: string[] = [];
  for (let trial = 1; trial <= 1 + DEFAULT_RETRIALS; trial += 1) {
    const { incumbent, candidate } = evaluations(trial);
    const decision = await decideSimulated(
      incumbent,
      candidate,
      calibration,
      retrialSettings(DEFAULT_GATE_SETTINGS, trial, DEFAULT_RETRIALS),
    );
    trials.push(decision.accepted ? 'accepted' : decision.reason);
    if (decision.accepted) return { trials, accepted: true };
    if (!RETRIABLE_REASONS.includes(decision.reason)) break;
  }
  return { trials, accepted: false };
}

/** 200 lives of a 2σ gain and of a no-op: the gains refused by noise at the first trial, those recovered, the no-ops accepted. */
async function countLives(life: (seed: number, gainInSigma: number) => Promise<Life>) {
  const SEEDS = 200;
  let goodRefusedByNoise = 0;
  let goodRecovered = 0;
  let noOpAccepted = 0;
  let noOpTrials = 0;
  for (let seed = 1; seed <= SEEDS; seed += 1) {
    const good = await life(seed, 2);
    if (good.trials.length > 1) {
      goodRefusedByNoise += 1;
      if (good.accepted) goodRecovered += 1;
    }
    const noOp = await life(100_000 + seed, 0);
    noOpTrials += noOp.trials.length;
    if (noOp.accepted) noOpAccepted += 1;
  }
  return { counts: { goodRefusedByNoise, goodRecovered, noOpAccepted }, noOpTrials, seeds: SEEDS };
}

describe('re-trials by seeded simulation (the gate as bench:gate runs it)', () => {
  it('accepts on re-trial a 2σ gain the first trial refused by noise, while a no-op re-tried as often is never accepted', async () => {
    const { counts, noOpTrials, seeds } = await countLives(lifeOfDelta);
    // Exact for these seeds: 29 of the 200 good deltas were refused by noise at the first trial and 25 of those
    // were accepted on a re-trial; no no-op was accepted in any of its trials (the rule's bound:
    // α·shadowAlpha·(1 + 1/K) = 0.375% of deltas, under 1 expected in 200).
    expect(counts).toEqual({ goodRefusedByNoise: 29, goodRecovered: 25, noOpAccepted: 0 });
    expect(noOpTrials).toBeGreaterThan(seeds);
  });
});

/**
 * One delta's life on one incumbent: the proposer offers it again while the
 * incumbent stands, and each re-trial is judged on (j + 1) × R repeats, the
 * stored ones and R fresh (src/loop/retrials.ts), at α/K and shadowAlpha/K.
 */
async function lifeOnOneIncumbent(seed: number, gainInSigma: number): Promise<Life> {
  const random = createSeededRandom(seed);
  const corpus = createSimulatedCorpus(SCENARIO, random);
  const calibration = gateCalibrationFor(simulateCalibration(SCENARIO, corpus, random));
  const quality = SCENARIO.trueQuality + gainInSigma * scenarioSigma(SCENARIO);
  const incumbent = evaluateSimulatedIncumbent(SCENARIO, corpus, random);
  // Every repeat the candidate may ever have; trial j reads the first j × R of them.
  const all = evaluateSimulatedArtifact(SCENARIO, corpus, quality, random, SCENARIO.repeats * (1 + DEFAULT_RETRIALS));
  return judgeTrials(calibration, (trial) => ({
    incumbent,
    candidate: {
      trueQuality: all.trueQuality,
      optimization: firstRepeats(all.optimization, SCENARIO.repeats * trial),
      anchor: firstRepeats(all.anchor, SCENARIO.repeats * trial),
      shadow: firstRepeats(all.shadow, SCENARIO.repeats * trial),
    },
  }));
}

describe('re-trials on the same incumbent, with more repeats, by seeded simulation', () => {
  it('accepts on re-trial some 2σ gains the first trial refused by noise, while no no-op re-tried as often is accepted', async () => {
    const { counts, noOpTrials, seeds } = await countLives(lifeOnOneIncumbent);
    // Exact for these seeds: 30 of the 200 good deltas were refused by noise at the first trial and 27 of those
    // were accepted on a re-trial with 10 or 15 repeats; no no-op was accepted in any of its trials (the union
    // bound over its 1 + K judgements: α·shadowAlpha·(1 + 1/K) = 0.375% of deltas, under 1 expected in 200).
    expect(counts).toEqual({ goodRefusedByNoise: 30, goodRecovered: 27, noOpAccepted: 0 });
    expect(noOpTrials).toBeGreaterThan(seeds);
  });
});
