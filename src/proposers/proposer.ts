/**
 * The proposer contract. A proposer reads the incumbent, the program and the
 * optimization partition's diagnostics and returns candidate artifacts.
 *
 * A proposer never sees shadow examples, their outputs or anything computed
 * from them: everything in a {@link ProposalContext} is built from the
 * optimization partition alone (anchors and shadow are the gate's business).
 */
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
   * another candidate was merged). Returns null when the edit no longer applies
   * or changes nothing.
   */
  rebase?: (incumbentText: string) => string | null;
}

/** A proposal that could not be turned into a candidate (unparsable answer, over the ceiling, ...). */
export interface ProposalFailure {
  reason: string;
  raw?: string;
}

/** An earlier experiment, as the proposer may read it. */
export interface HistoryEntry {
  delta: string;
  decision: 'accepted' | 'refused' | 'skipped';
  reason: string;
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
  /** Scores any artifact text on the optimization partition (same frozen evaluator). */
  evaluateOptimization: (artifactText: string) => Promise<PartitionScore>;
  history: readonly HistoryEntry[];
  /** Content hashes of every artifact ever tried in this study: do not propose these again. */
  triedHashes: ReadonlySet<string>;
  /** How many candidates to return at most. */
  maxCandidates: number;
  /** Seeded random source in [0, 1). */
  random: () => number;
  signal?: AbortSignal;
}

export interface ProposalResult {
  candidates: Candidate[];
  failures: ProposalFailure[];
}

/** A proposer: `id` is stored with each experiment. */
export interface Proposer {
  readonly id: string;
  propose(context: ProposalContext): Promise<ProposalResult>;
}

export type { ExampleScoreRecord };
