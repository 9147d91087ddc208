/**
 * bench:gate's main scenario (bench/gate-bench.ts), shared by the tests that
 * check the gate's rules on the world the benchmark measures.
 */
import type { GateScenario } from './gate-trial.ts';

/**
 * True quality 0.6; examples differ by SD 0.15, a run's answer to an example
 * by SD 0.08 and a whole run by 0.01; n = 40 / 10 / 20; R = 5, the incumbent
 * topped up to 4R = 20 (as the loop evaluates an incumbent that has stayed
 * the incumbent for three rounds); 8 noise repeats, a window of 5
 * calibrations; scores not clamped to [0, 1].
 */
export const MAIN_SCENARIO: GateScenario = {
  trueQuality: 0.6,
  exampleEffectSd: 0.15,
  perExampleNoiseSd: 0.08,
  perRunNoiseSd: 0.01,
  examples: { optimization: 40, anchor: 10, shadow: 20 },
  repeats: 5,
  incumbentRepeats: 20,
  noiseRepeats: 8,
  calibrationWindow: 5,
  clamp: false,
};
