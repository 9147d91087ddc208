/**
 * The proposer contract. A proposer reads the incumbent, the program and the
 * optimization partition's scores (component means, the task's diagnostics
 * and feedback texts per example) and returns candidate artifacts.
 *
 * A proposer never sees shadow examples, their outputs or anything computed
 * from them: everything in a {@link ProposalContext} is built from the
 * optimization partition alone (anchors and shadow are the gate's business).
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';

/** One candidate artifact. */
export interface Candidate {
  /** Full text of the candidate artifact (the incumbent with the edit applied). */
  text: string;
  /** Human-readable changed text only, used for dedupe (bigram Jaccard) and the notebook. */
  delta: string;
  /** Why the proposer thinks this helps (one or two sentences). */
  rationale: string;
  /** The proposer's own estimate on the optimization partition, when it has one. */
  expectedNetFixes?: number;
  /**
   * Warnings about the candidate for the notebook and the reviewer, e.g.
   * `copies-example-text` (it pastes optimization-example text into the
   * artifact). Flags never decide acceptance; the gate does.
   */
  flags?: string[];
  /**
   * Re-applies the same edit to a newer incumbent (sequential integration after
   * another candidate was merged), for proposers whose edits have a meaning
   * beyond their lines (a playbook cue added to a list). Returns null when the
   * edit no longer applies or changes nothing. Without it — or when it
   * returns null — the loop re-applies the change by a line-based three-way
   * merge (`src/artifact/three-way-merge.ts`).
   */
  rebase?: (incumbentText: string) => string | null;
}

/**
 * A proposal that could not be turned into a candidate. `scope: 'answer'`:
 * the whole answer is unusable (the call failed, empty, cut off, broken JSON,
 * off-schema) — one failed answer, however many candidates it meant to hold;
 * `scope: 'candidate'`: one candidate of an otherwise usable answer is
 * unusable (edits a frozen section, over the ceiling, changes nothing).
 */
export interface ProposalFailure {
  /** Machine-readable reason, e.g. `broken_json`, `truncated`, `call_failed`, `frozen_section`. Default `unusable`. */
  code?: string;
  /** Default `answer`. */
  scope?: 'answer' | 'candidate';
  /** One sentence, readable in reports. */
  reason: string;
  /** The raw answer, capped (see `capRaw`). */
  raw?: string;
}

/**
 * The failure code of a proposer that cannot read the incumbent artifact (a
 * rules file that is not in its format, a parameters file without the
 * space's keys). It is deterministic: the same incumbent gives the same
 * failure on every attempt, so the loop does not retry it as a fresh sample
 * but stops the run at once (`consecutive_failures`, saying so), and
 * `kloop run` and `kloop doctor` check it before anything is paid for
 * (src/doctor/proposer-fit.ts).
 */
export const INVALID_INCUMBENT = 'invalid_incumbent';

/** An earlier experiment, as the proposer may read it. */
export interface HistoryEntry {
  delta: string;
  decision: 'accepted' | 'refused' | 'skipped';
  reason: string;
  /**
   * The candidate's composite on the optimization partition (mean over its
   * valid examples, in [0, 1]) when the gate evaluated it; absent for a
   * skipped candidate or a failed evaluation. Never a shadow figure.
   */
  optimizationScore?: number;
}

/** The mechanical constraints the proposer should respect (checked again by the gate). */
export interface ProposalLimits {
  /** Sections of the artifact that may change; empty = all. */
  editableSections: string[];
  /** Maximum artifact length in characters. */
  maxArtifactCharacters: number;
}

/** Everything a proposer may read. Built from the optimization partition only. */
export interface ProposalContext {
  incumbentText: string;
  instructions: string;
  constraints: string;
  limits: ProposalLimits;
  /** Optimization examples (never anchor or shadow). */
  examples: readonly Example[];
  /** The incumbent's per-example scores on the optimization partition. */
  incumbentScores: PartitionScore;
  /**
   * Scores any artifact text on the optimization partition (same frozen
   * evaluator). Several calls may be made at once: their evaluations run
   * together (up to the executor's concurrency in one process, on every
   * evaluation worker with `kloop run --workers`), each promise resolving
   * with its own text's score.
   */
  evaluateOptimization: (artifactText: string) => Promise<PartitionScore>;
  history: readonly HistoryEntry[];
  /** Content hashes of every artifact ever tried in this study: do not propose these again. */
  triedHashes: ReadonlySet<string>;
  /** How many candidates to return at most. */
  maxCandidates: number;
  /**
   * The deltas an earlier answer in this round repeated (tried before): when
   * present, the loop is asking again because nothing new came back; the
   * proposer should say something different. Absent on a round's first ask.
   */
  repeatedDeltas?: readonly string[];
  /**
   * Seeded random source in [0, 1), seeded by the study seed, the round and
   * the attempt: a retried round samples afresh, a resumed one the same.
   */
  random: () => number;
  /** 0-based attempt within the round (a failed answer is retried with the next attempt). */
  attempt?: number;
  /**
   * The task's output contract, in words (`task.outputContract()`): what an
   * answer must look like. Absent when the task has none to show.
   */
  outputContract?: string;
  signal?: AbortSignal;
}

export interface ProposalResult {
  candidates: Candidate[];
  failures: ProposalFailure[];
  /** Candidates the proposer dropped because they were tried before (content hash): exhaustion, not failure. Default 0. */
  repeats?: number;
  /**
   * The candidates counted in `repeats`, when the proposer keeps them: the
   * loop records each as a skipped `duplicate` (seen in `kloop history`),
   * never evaluates them, and tells the proposer which they were when it
   * asks again.
   */
  repeated?: Candidate[];
  /** Tokens and cost of the proposer's own calls. */
  usage?: { inputTokens: number; outputTokens: number; costUsd: number };
}

/** A proposer: `id` is stored with each experiment. */
export interface Proposer {
  readonly id: string;
  propose(context: ProposalContext): Promise<ProposalResult>;
  /**
   * The proposer's own scoring budget per round, for a proposer that scores
   * candidates itself (the error-driven ones): the kloop.yaml key that sets
   * it, its value in force and the proposer's default. Read by the stuck
   * advice (src/report/stuck-advice.ts) to say when a budget set below the
   * default is what kept edits from being combined. Absent: no such budget.
   */
  readonly budget?: { setting: string; value: number; defaultValue: number };
}

export type { ExampleScoreRecord };

/**
 * True when `text` is an artifact tried before in this study (its content
 * hash is in `context.triedHashes`): a proposer that offers it again gets a
 * `skipped duplicate` row, not an evaluation.
 *
 * @example
 * ```js
 * proposer: (context) => ideas(context.incumbentText).filter((text) => !wasTried(context, text)).map((text) => ({ text }))
 * ```
 */
export function wasTried(context: Pick<ProposalContext, 'triedHashes'>, text: string): boolean {
  return context.triedHashes.has(contentHash(text));
}
