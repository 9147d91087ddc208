/**
 * A study as the loop sees it once loaded and validated: configuration,
 * program, artifact, corpus split by named partition, executor and proposer.
 */
import type { Example, PartitionName } from '../corpus/example.ts';
import type { FileAdmission, PartitionLeak } from '../corpus/file-admission.ts';
import type { FileExample } from '../corpus/lifecycle.ts';
import type { GateSettings } from '../gate/gate.ts';
import type { RacingSettings } from '../gate/racing/index.ts';
import type { Proposer } from '../proposers/proposer.ts';
import type { ExampleFormat } from '../corpus/example-format.ts';
import type { Executor } from '../executors/executor.ts';
import type { Task } from '../tasks/task.ts';
import type { StudyConfig } from '../config/config.ts';

/** Mechanical constraints of the program, as the loop applies them. */
export interface MechanicalConstraintChecker {
  editableSections: string[];
  maxArtifactCharacters: number;
  check(
    incumbentText: string,
    candidateText: string,
  ): { passed: boolean; violations: Array<{ constraint: string; message: string }> };
}

export interface StoppingCriteria {
  maxExperiments: number;
  plateauRounds: number;
  /** Share of `maxExperiments` evaluated before a plateau may stop the run, in [0, 1]; absent = 0 (see src/config/stopping-schema.ts). */
  plateauMinSpent?: number;
  /**
   * Stop as `no_new_proposals` after this many rounds in a row that brought
   * nothing new to evaluate (every candidate tried before or a near-duplicate).
   * Absent = 2.
   */
  idleRounds?: number;
  target?: number;
  maxConsecutiveFailures: number;
  /** Most failed proposals per proposal attempted in a run, in [0, 1]; absent = no such stop. */
  maxFailureRate?: number;
  maxRounds?: number;
}

/**
 * The figure reports lead with: the composite, or the task's own name for
 * it (a classification task reporting a misroute rate: 1 − accuracy).
 */
export interface StudyHeadline {
  /** `composite`, or the task's name of the figure, e.g. `misroute rate`. */
  name: string;
  /** True when the figure is 1 − composite (a rate of errors: lower is better). */
  complement: boolean;
}

/** The headline figure of a composite: itself, or 1 − it for a complement headline; null stays null. */
export function headlineValue(headline: StudyHeadline | undefined, composite: number | null): number | null {
  if (composite === null) return null;
  return headline?.complement === true ? 1 - composite : composite;
}

export interface LoadedStudy {
  /** The validated `kloop.yaml` (read-only); absent for studies built in code. */
  config?: StudyConfig;
  /** Absolute path of the study folder. */
  dir: string;
  /** Absolute path of the artifact file (the seed). */
  artifactPath: string;
  /** Text of the artifact file. */
  artifactText: string;
  instructions: string;
  constraintsText: string;
  constraints: MechanicalConstraintChecker;
  /**
   * The corpus the loop uses: the corpus files' examples and the admitted ones
   * (`kloop corpus add`), each with its current partition from the corpus
   * lifecycle (`src/corpus/lifecycle.ts`). The loop replaces `corpus` and
   * `partitions` (never their contents) at round boundaries when examples
   * graduate or rotate.
   */
  corpus: readonly Example[];
  partitions: Readonly<Record<PartitionName, readonly Example[]>>;
  /**
   * The examples of the corpus files the study uses (partitions as written),
   * with their files and lines: the records already in the study and those
   * admitted at load; refused records are left out. Absent for studies built in code.
   */
  fileCorpus?: readonly FileExample[];
  /** The admission of the corpus files' new records and the leaks between partitions found at load (src/corpus/file-admission.ts). */
  corpusAdmission?: { admission: FileAdmission; leaks: readonly PartitionLeak[] };
  /** The task: schemas, scorer, components and metrics (src/tasks/task.ts), built from `kloop.yaml` `task:` (src/study/compose.ts). */
  task: Task;
  /** How the study's corpus records are read and written (the task's schemas; `goal` records for intent). */
  exampleFormat: ExampleFormat;
  /** The figure reports lead with (src/study/compose.ts); absent = the composite. */
  headline?: StudyHeadline;
  executor: Executor;
  proposer: Proposer;
  /** Weights by component name: the task's defaults merged with `kloop.yaml` `weights:`; only ratios matter. */
  weights: Readonly<Record<string, number>>;
  gate: Readonly<GateSettings> & {
    repeats: number;
    minDeltaDistance: number;
    /** Times a delta refused by a noisy test may be judged again against a changed incumbent (src/loop/retrials.ts); absent = DEFAULT_RETRIALS. */
    retrials?: number;
    requireCalibration: boolean;
    /** Calibrations the rolling maximum of the noise SD looks over. */
    calibrationWindow: number;
    /**
     * Most repeats the incumbent of a stochastic executor is evaluated with
     * (topped up by `repeats` each round it stays the incumbent); absent =
     * `repeats` (no top-up). See `incumbentRepeats` in src/loop.
     */
    incumbentRepeats?: number;
    /**
     * Adaptive repeats (src/loop/adaptive-evaluation.ts): a noise-free
     * example is evaluated once for a candidate and not topped up for the
     * incumbent; absent = on (`DEFAULT_ADAPTIVE_REPEATS`, src/gate/gate-defaults.ts).
     */
    adaptiveRepeats?: boolean;
    /**
     * Racing (sequential evaluation with a futility stop, docs/gate.md):
     * present = on, with its batch size and futility level; absent = every
     * candidate evaluated in full before the gate.
     */
    racing?: RacingSettings;
  };
  stopping: StoppingCriteria;
  candidatesPerRound: number;
  concurrency: number;
  seed: number;
}
