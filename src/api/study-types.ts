/** The shapes of the library API (src/api/create-study.ts): what `createStudy` takes and the study it returns. */
import type { PartitionName } from '../corpus/example.ts';
import type { GateCalibration } from '../gate/gate.ts';
import type { Told } from '../loop/engine.ts';
import type { RunEvent, RunOutcome } from '../loop/run-study.ts';
import type { Candidate, ProposalContext, ProposalResult, Proposer } from '../proposers/proposer.ts';
import type { StudySettings } from '../study/study-settings.ts';
import type { OutcomeKind, Task } from '../tasks/task.ts';

/** One labelled example, as `createStudy` takes it. */
export interface StudyExample<Input = unknown, Expected = unknown> {
  /** Letters, digits, ".", "_", ":" and "-"; unique. */
  id: string;
  input: Input;
  expected: Expected;
  partition: PartitionName;
  tags?: string[];
}

/** What `execute` is told besides the artifact and the input. */
export interface ExecuteContext {
  /** Repeat index, 0-based (repeats are fresh samples of a stochastic workflow). */
  repeat: number;
  /** The input's text (the task's `text(input)`). */
  text: string;
  signal?: AbortSignal;
}

/**
 * Runs the workflow: the artifact (the text being optimized) on one input;
 * returns the task's output. A thrown error is an invalid output of that
 * example (never a score of 0); an output that does not fit the task's
 * output schema is invalid too.
 */
export type ExecuteFunction<Input = unknown, Output = unknown> = (
  artifact: string,
  input: Input,
  context: ExecuteContext,
) => Output | Promise<Output>;

/** A candidate as a proposer function may return it: the full text, the rest optional. */
export interface ProposedCandidate {
  text: string;
  /** The changed text, for near-duplicate checks; default the lines added and removed. */
  delta?: string;
  rationale?: string;
}

/** A proposer as a function: candidates, or a full {@link ProposalResult}. Thrown errors are failed answers, not crashes. */
export type ProposeFunction = (
  context: ProposalContext,
) => Promise<ProposedCandidate[] | ProposalResult> | ProposedCandidate[] | ProposalResult;

/** A custom scorer: `score(output, expected, input)` → a boolean, a number in [0, 1], or `{ score?, pass?, reason | feedback, components?, diagnostics? }`, where `pass` decides (`pass: false` scores 0 whatever `score` says), as a custom task's module. */
export type ScoreFunction<Input = unknown, Expected = unknown, Output = unknown> = (
  output: Output,
  expected: Expected,
  input: Input,
) => unknown;

/** Settings of {@link createStudy}. */
export interface CreateStudyOptions<Input = unknown, Expected = unknown, Output = unknown> {
  /** The study folder: the notebook is `<storage>/.kloop/` (created), as for a CLI study. */
  storage: string;
  /** The seed artifact's text. */
  artifact: string;
  /** The labelled examples; every partition needs at least one. */
  examples: ReadonlyArray<StudyExample<Input, Expected>>;
  /** The task (src/tasks/task.ts); or give `score` (and `outcome`) instead. */
  task?: Task<Input, Expected, Output>;
  score?: ScoreFunction<Input, Expected, Output>;
  /** With `score`: `'binary'` when every example is right or wrong (McNemar's exact test), else `'continuous'` (paired t-test). Default continuous. */
  outcome?: OutcomeKind;
  /**
   * Runs the workflow on one input. Optional: without it, kloop takes the
   * outputs you give — the seed's as `seedOutputs`, each candidate's as
   * `tell(candidate, results)` — and reuses the outputs stored for an
   * artifact (an accepted candidate's, the seed's on a reopened study); an
   * output that is needed and was never given is an InputError naming the
   * example and what to give.
   */
  execute?: ExecuteFunction<Input, Output>;
  /** Without `execute`: the seed artifact's outputs, `[{ exampleId, output, repeat? }]`, for every example (as `tell()`'s results). */
  seedOutputs?: ReadonlyArray<{ exampleId: string; output: unknown; repeat?: number }>;
  /**
   * Default true: the same artifact and input give the same output (no
   * repeats, no calibration needed). False (a workflow that samples): as for
   * `kloop run`, `gate.requireCalibration` defaults to true, so `calibration`
   * must be given (or `gate: { requireCalibration: false }` set, to run with
   * τ = 0), `gate.incumbentRepeats` defaults to 4 × `gate.repeats`, and
   * racing is on.
   */
  deterministic?: boolean;
  /** Names the workflow in the evaluator fingerprint; change it when `execute` changes. Default a hash of `execute`'s source text. */
  executorId?: string;
  proposer: Proposer | ProposeFunction;
  /** program.md's text (Instructions, Constraints, Stopping criteria); default three registers saying little. */
  program?: string;
  /** kloop.yaml's `gate:` keys (defaults as there, `requireCalibration` by `deterministic` included). */
  gate?: Record<string, unknown>;
  /** kloop.yaml's `stopping:` keys (defaults as there). */
  stopping?: Record<string, unknown>;
  /** Weights by component name; default the task's. */
  weights?: Record<string, number>;
  /** Candidates per round (default 6) and candidates evaluated at once (default 4), as kloop.yaml's `proposer.candidatesPerRound` and `proposer.concurrency`. */
  candidatesPerRound?: number;
  concurrency?: number;
  /** Seed of every random choice. Default 1. */
  seed?: number;
  /** Splits an artifact into named sections, for program.md's `editableSections`. Default: none (leave `editableSections` out). */
  sectionsOf?: (text: string) => Record<string, string>;
  /** Progress events, as `kloop run` prints them. */
  onEvent?: (event: RunEvent) => void;
  /** Stops the study's work (optimize, ask, tell) as Ctrl-C does. */
  signal?: AbortSignal;
  /**
   * Calibration for a stochastic workflow (noise SD); default none. Required when `gate.requireCalibration` is in force
   * (by default, when `deterministic` is false). With `noiseRepeats` (≥ 3: the repeats the per-example SDs were measured
   * over), an example whose SD is exactly 0 is noise-free for `gate.adaptiveRepeats` (docs/gate.md).
   */
  calibration?: GateCalibration;
}

/** The active version and its scores per partition. */
export interface StudyBest {
  versionId: number;
  text: string;
  /** Composite per partition (null when nothing valid). */
  scores: Record<PartitionName, number | null>;
}

/** What {@link Study.optimize} returns. */
export interface OptimizeResult extends RunOutcome {
  baseline: Record<PartitionName, number | null>;
  best: StudyBest;
}

/** A study built in code. */
export interface Study {
  /** Absolute study folder. */
  readonly dir: string;
  readonly task: Task;
  /**
   * The settings the study runs with, every default applied, as `kloop run`
   * composes them from kloop.yaml (src/study/study-settings.ts): weights, gate,
   * stopping, `candidatesPerRound`, `concurrency`, `seed`. A copy: changing it
   * changes nothing.
   */
  readonly settings: StudySettings;
  /** Runs the loop of `kloop run` until a stopping criterion holds. */
  optimize(): Promise<OptimizeResult>;
  /**
   * Proposes the next round's candidates: opens a round (after closing the
   * previous one), asks the proposer, records the call. Empty when the study
   * has stopped (`stopped()` says why) or the answer failed or brought nothing new.
   */
  ask(): Promise<Candidate[]>;
  /**
   * Evaluates one candidate of the last `ask()` and lets the gate decide; the
   * round closes once every candidate is told. `results`: outputs of this
   * candidate's artifact the caller produced itself, by example id (and
   * repeat, default 0); the rest are executed.
   *
   * @throws InputError when the candidate is not one of the open round's, or a result names an unknown example
   */
  tell(
    candidate: Candidate,
    results?: ReadonlyArray<{ exampleId: string; output: unknown; repeat?: number }>,
  ): Promise<Told>;
  /** The stop of the last `ask()` or `optimize()`, if the study stopped. */
  stopped(): RunOutcome | null;
  /** The active version and its scores. */
  best(): Promise<StudyBest>;
  /** Ends the run (if one is open), releases the study's lease and closes the notebook. */
  close(): Promise<void>;
}
