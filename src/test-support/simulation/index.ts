/**
 * The simulation task: artifacts of known true quality with seeded noise, and
 * gate trials that drive the real gate with them. Used by `bench/gate-bench.ts`
 * and the gate's statistical tests; not part of the public API.
 *
 * @module
 */
export {
  createExampleEffects,
  createNormalSampler,
  firstRepeats,
  runLevelNoiseSd,
  simulatePartitionScore,
  trueComposite,
  type NormalSampler,
  type SimulatePartitionOptions,
  type SimulationRandomness,
} from './simulate-partition-score.ts';
export {
  createSimulatedCorpus,
  decideSimulated,
  evaluateSimulatedArtifact,
  evaluateSimulatedIncumbent,
  gateCalibrationFor,
  naiveAccepts,
  runRatchet,
  scenarioSigma,
  simulateCalibration,
  type GateScenario,
  type PartitionQualities,
  type RatchetOutcome,
  type SimulatedCalibration,
  type SimulatedCorpus,
  type SimulatedEvaluation,
} from './gate-trial.ts';
export { MAIN_SCENARIO } from './main-scenario.ts';
export {
  drawCandidate,
  simulateRound,
  type SimulatedChange,
  type SimulatedIncumbent,
  type SimulatedRoundDecision,
  type SimulatedRoundInput,
  type SimulatedRoundOutcome,
} from './race-trial.ts';
export { adaptiveCandidate, adaptiveIncumbent, type AdaptiveEvaluation } from './adaptive-trial.ts';
