/**
 * The study builder's settings: one function turns a study definition —
 * `kloop.yaml` as parsed (with the flags that replace its values), or the
 * options of `createStudy` — into the settings a run uses: the composite's
 * weights, the gate's settings with their defaults, the stopping criteria,
 * the proposer's round size and concurrency, the seed. `loadStudy` (the CLI)
 * and `createStudy` (the library) both call it, so a default is applied in
 * one place and the two front ends cannot drift apart (src/study/study-settings.test.ts,
 * tests/front-end-settings.test.ts).
 *
 * Defaults: the `kloop.yaml` schema's for each gate and stopping key
 * (`studyConfigSchema`, which both front ends parse those keys with), and
 * src/config/study-defaults.ts for the rest (`candidatesPerRound` 6,
 * `concurrency` 4, `seed` 1, `requireCalibration` and `incumbentRepeats` by
 * the executor's determinism, racing on for a non-deterministic executor).
 *
 * @module
 */
import type { Task } from '../tasks/task.ts';
import { composeWeights } from './compose.ts';
import type { GateConfig, StoppingConfig } from '../config/config.ts';
import { racingSettingsOf, withRacing } from '../config/config.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import {
  DEFAULT_CANDIDATES_PER_ROUND,
  DEFAULT_PROPOSER_CONCURRENCY,
  DEFAULT_SEED,
  defaultIncumbentRepeats,
  defaultRequireCalibration,
} from '../config/study-defaults.ts';

/** The settings a run uses, as {@link LoadedStudy} holds them. */
export type StudySettings = Pick<
  LoadedStudy,
  'weights' | 'gate' | 'stopping' | 'candidatesPerRound' | 'concurrency' | 'seed'
>;

/** What the builder reads: the study's keys as parsed, and what its executor and task say. */
export interface StudyDefinition {
  /** The study's task (its components name the weights). */
  task: Task;
  /** Whether the study's executor gives the same output for the same artifact and input (after `--deterministic`). */
  deterministic: boolean;
  /** `gate:` parsed by the schema (`studyConfigSchema.shape.gate`): its keys' defaults applied. */
  gate: GateConfig;
  /** `stopping:` parsed by the schema. */
  stopping: StoppingConfig;
  /** Weights by component name; absent = the task's. */
  weights?: Readonly<Record<string, number>> | undefined;
  /** Candidates per round, integer ≥ 1; absent = {@link DEFAULT_CANDIDATES_PER_ROUND}. */
  candidatesPerRound?: number | undefined;
  /** Candidates evaluated at once, integer ≥ 1; absent = {@link DEFAULT_PROPOSER_CONCURRENCY}. */
  concurrency?: number | undefined;
  /** Integer ≥ 0; absent = {@link DEFAULT_SEED}. */
  seed?: number | undefined;
  /** `kloop.yaml` and the line of each key, for errors; absent for a study built in code. */
  configPath?: string | undefined;
  lines?: Readonly<Record<string, number>> | undefined;
}

/**
 * The run settings of a study definition, every default applied.
 *
 * @throws InputError (field `weights.<name>` or `weights`, and kloop.yaml's
 *   line when there is one) for a weight that names no component of the
 *   task, or weights that are all 0
 */
export function composeStudySettings(definition: StudyDefinition): StudySettings {
  const { gate, stopping, deterministic } = definition;
  return {
    weights: composeWeights(definition.task, {
      ...(definition.weights !== undefined ? { weights: { ...definition.weights } } : {}),
      ...(definition.configPath !== undefined ? { configPath: definition.configPath } : {}),
      ...(definition.lines !== undefined ? { lines: definition.lines } : {}),
    }),
    gate: {
      alpha: gate.alpha,
      shadowAlpha: gate.shadowAlpha,
      generalizationRatio: gate.generalizationRatio,
      shadowMarginSe: gate.shadowMarginSe,
      anchorTolerance: gate.anchorTolerance,
      thresholdK: gate.thresholdK,
      anchorK: gate.anchorK,
      repeats: gate.repeats,
      minDeltaDistance: gate.minDeltaDistance,
      retrials: gate.retrials,
      requireCalibration: gate.requireCalibration ?? defaultRequireCalibration(deterministic),
      calibrationWindow: gate.calibrationWindow,
      incumbentRepeats: gate.incumbentRepeats ?? defaultIncumbentRepeats(gate.repeats, deterministic),
      adaptiveRepeats: gate.adaptiveRepeats,
      ...withRacing(racingSettingsOf(gate.racing, deterministic)),
    },
    stopping: {
      maxExperiments: stopping.maxExperiments,
      plateauRounds: stopping.plateauRounds,
      plateauMinSpent: stopping.plateauMinSpent,
      idleRounds: stopping.idleRounds,
      maxConsecutiveFailures: stopping.maxConsecutiveFailures,
      ...(stopping.target !== undefined ? { target: stopping.target } : {}),
      ...(stopping.maxRounds !== undefined ? { maxRounds: stopping.maxRounds } : {}),
      ...(stopping.maxFailureRate !== undefined ? { maxFailureRate: stopping.maxFailureRate } : {}),
    },
    candidatesPerRound: definition.candidatesPerRound ?? DEFAULT_CANDIDATES_PER_ROUND,
    concurrency: definition.concurrency ?? DEFAULT_PROPOSER_CONCURRENCY,
    seed: definition.seed ?? DEFAULT_SEED,
  };
}
