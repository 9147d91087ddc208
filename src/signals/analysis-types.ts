/**
 * The shapes of the rolling-window signal analysis (./analysis.ts): its
 * settings, window, clusters, recurring gaps, deprecation candidates,
 * candidate-pattern sketches and the analyzer's interface.
 */
import type { SignalAssemblyMethod, StoredSignal } from './signal.ts';
import type { SignalsConfig } from '../config/signals-config.ts';

/** The analysis settings (the `signals` section of `kloop.yaml`). */
export type AnalysisSettings = Pick<
  SignalsConfig,
  | 'windowDays'
  | 'confidenceThreshold'
  | 'lowConfidenceMethods'
  | 'minClusterSize'
  | 'entityCountBuckets'
  | 'typicalShare'
  | 'exampleGoals'
>;

/** A rolling window `from < time ≤ to`. */
export interface SignalWindow {
  /** ISO 8601 UTC. */
  from: string;
  /** ISO 8601 UTC (the analysis' `now`). */
  to: string;
  days: number;
}

/** A name with the number of signals it occurs in. */
export interface CountedName {
  name: string;
  count: number;
  /** count / cluster size (or / low-confidence signals for gaps). */
  share: number;
}

/** One reported cluster of low-confidence signals. */
export interface SignalCluster {
  /** `appClass|commitments|4-6` (stable, for dedupe). */
  key: string;
  appClass: string;
  hasCommitments: boolean;
  entityCountBucket: string;
  size: number;
  /** size / signals in the window. */
  share: number;
  /** size / low-confidence signals in the window. */
  shareOfLowConfidence: number;
  methods: Record<SignalAssemblyMethod, number>;
  meanConfidence: number;
  /** The most frequent uncovered entities (up to 5); typical ones have `share ≥ typicalShare`. */
  uncoveredEntities: CountedName[];
  uncoveredBehaviors: CountedName[];
  patterns: CountedName[];
  artifactVersions: CountedName[];
  /** The most recent distinct goals (empty when goals are not stored). */
  exampleGoals: string[];
  firstSeen: string;
  lastSeen: string;
}

/** An uncovered entity or behaviour that recurs across low-confidence signals. */
export interface RecurringGap {
  kind: 'entity' | 'behavior';
  name: string;
  /** Low-confidence signals it was uncovered in. */
  count: number;
  /** count / low-confidence signals. */
  share: number;
  /** Keys of the reported clusters it occurs in. */
  clusters: string[];
}

/** Patterns or artifact sections no signal of the window used. */
export interface DeprecationCandidates {
  /** Known pattern ids no signal in the window used (empty when the evidence is insufficient). */
  patterns: string[];
  /** Known artifact sections no signal in the window reported (empty when the evidence is insufficient). */
  sections: string[];
  /** Signals in the window that listed their patterns / sections. */
  evidence: { signalsWithPatterns: number; signalsWithSections: number };
  /** Why a list is empty, when it is for lack of evidence. */
  notes: string[];
}

/** A cluster whose signals share typical uncovered entities or behaviours: the sketch of a new pattern. */
export interface CandidatePatternSketch {
  clusterKey: string;
  appClass: string;
  hasCommitments: boolean;
  entityCountBucket: string;
  size: number;
  entities: CountedName[];
  behaviors: CountedName[];
  /** Patterns the cluster's assemblies used most (what the new pattern would sit beside). */
  patternsUsed: CountedName[];
  exampleGoals: string[];
}

/** The result of the analysis (JSON-ready). */
export interface SignalAnalysis {
  window: SignalWindow;
  /** Signals in the window. */
  signals: number;
  /** Low-confidence signals in the window. */
  lowConfidence: number;
  /** Signals offered to the analyzer outside the window (ignored). */
  outsideWindow: number;
  methods: Record<SignalAssemblyMethod, number>;
  settings: {
    confidenceThreshold: number;
    lowConfidenceMethods: SignalAssemblyMethod[];
    minClusterSize: number;
    entityCountBuckets: string[];
    typicalShare: number;
  };
  /** Reported clusters, largest first. */
  clusters: SignalCluster[];
  /** Low-confidence shapes below the minimum size. */
  belowMinimum: { clusters: number; signals: number };
  recurringGaps: RecurringGap[];
  deprecationCandidates: DeprecationCandidates;
  candidatePatterns: CandidatePatternSketch[];
}

/** Options of {@link createSignalAnalyzer}. */
export interface SignalAnalyzerOptions {
  /** End of the window (now). */
  now: Date;
  /** Settings; absent keys take the defaults of `signals` in `kloop.yaml`. */
  settings?: Partial<AnalysisSettings>;
  /** Pattern ids of the library (deprecation candidates). */
  knownPatterns?: readonly string[];
  /** Section names of the active artifact (deprecation candidates). */
  knownSections?: readonly string[];
}

/** Folds signals one at a time; `finish()` returns the analysis. */
export interface SignalAnalyzer {
  add(signal: StoredSignal): void;
  finish(): SignalAnalysis;
}
