/**
 * Loop D analysis: clusters of low-confidence assemblies by shape over a
 * rolling window (seeds/000, `cluster_unmatched_assemblies`):
 *
 *     low      = method ∈ lowConfidenceMethods (default decomposed, partial)
 *                or confidence < confidenceThreshold (default 0.70)
 *     clusters = group low by (appClass, hasCommitments, entity-count bucket)
 *     report     clusters with size ≥ minClusterSize (default 5)
 *
 * Entity-count buckets come from increasing inclusive upper bounds (default
 * `[3, 6, 10]`): `0`, `1-3`, `4-6`, `7-10`, `11+`.
 *
 * Each cluster is summarised (size, share of the window, methods, mean
 * confidence, typical uncovered entities and behaviours, patterns used,
 * example goals). Beside the clusters the analysis reports recurring gaps
 * (uncovered entities/behaviours in at least `minClusterSize` low-confidence
 * signals), deprecation candidates (patterns and artifact sections no signal
 * in the window used) and candidate new patterns (clusters with typical
 * uncovered entities or behaviours). It is evidence only: it changes nothing.
 *
 * Memory is bounded by the number of distinct shapes and uncovered names, not
 * by the number of signals: signals are folded into counters one at a time.
 */
import type { SignalAssemblyMethod, StoredSignal } from './signal.ts';
import type { ClusterState } from './analysis-clusters.ts';
import { NameCounter, emptyMethods, entityKey, identity, keepRecentGoal } from './analysis-clusters.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';
import {
  clusterKey,
  entityCountBucket,
  entityCountBucketLabels,
  isLowConfidence,
  signalWindow,
} from './signal-buckets.ts';

export {
  clusterKey,
  entityCountBucket,
  entityCountBucketLabels,
  isLowConfidence,
  signalWindow,
} from './signal-buckets.ts';
import type {
  AnalysisSettings,
  CandidatePatternSketch,
  CountedName,
  DeprecationCandidates,
  RecurringGap,
  SignalAnalysis,
  SignalAnalyzer,
  SignalAnalyzerOptions,
  SignalCluster,
} from './analysis-types.ts';

export type {
  AnalysisSettings,
  CandidatePatternSketch,
  CountedName,
  DeprecationCandidates,
  RecurringGap,
  SignalAnalysis,
  SignalAnalyzer,
  SignalAnalyzerOptions,
  SignalCluster,
  SignalWindow,
} from './analysis-types.ts';

const TOP = 5;

function resolveSettings(settings: Partial<AnalysisSettings> | undefined): AnalysisSettings {
  const defaults = DEFAULT_SIGNALS_CONFIG;
  return {
    windowDays: settings?.windowDays ?? defaults.windowDays,
    confidenceThreshold: settings?.confidenceThreshold ?? defaults.confidenceThreshold,
    lowConfidenceMethods: [...(settings?.lowConfidenceMethods ?? defaults.lowConfidenceMethods)],
    minClusterSize: settings?.minClusterSize ?? defaults.minClusterSize,
    entityCountBuckets: [...(settings?.entityCountBuckets ?? defaults.entityCountBuckets)],
    typicalShare: settings?.typicalShare ?? defaults.typicalShare,
    exampleGoals: settings?.exampleGoals ?? defaults.exampleGoals,
  };
}

/** The folded counters of one analyzer (see {@link createSignalAnalyzer}). */
interface AnalyzerState {
  options: SignalAnalyzerOptions;
  settings: AnalysisSettings;
  window: SignalAnalysis['window'];
  fromMs: number;
  toMs: number;
  methods: Record<SignalAssemblyMethod, number>;
  clusters: Map<string, ClusterState>;
  gapEntities: NameCounter;
  gapBehaviors: NameCounter;
  patternUse: Set<string>;
  sectionUse: Set<string>;
  inWindow: number;
  low: number;
  outsideWindow: number;
  signalsWithPatterns: number;
  signalsWithSections: number;
}

/**
 * Creates a Loop D analyzer. Signals outside the window are counted in
 * `outsideWindow` and otherwise ignored; the order of `add` calls does not
 * change the result.
 */
export function createSignalAnalyzer(options: SignalAnalyzerOptions): SignalAnalyzer {
  const settings = resolveSettings(options.settings);
  const window = signalWindow(options.now, settings.windowDays);
  const state: AnalyzerState = {
    options,
    settings,
    window,
    fromMs: Date.parse(window.from),
    toMs: Date.parse(window.to),
    methods: emptyMethods(),
    clusters: new Map(),
    gapEntities: new NameCounter(),
    gapBehaviors: new NameCounter(),
    patternUse: new Set(),
    sectionUse: new Set(),
    inWindow: 0,
    low: 0,
    outsideWindow: 0,
    signalsWithPatterns: 0,
    signalsWithSections: 0,
  };
  return { add: (signal) => addSignal(state, signal), finish: () => finishAnalysis(state) };
}

/** Folds one signal into the window counters and, when low-confidence, into its cluster. */
function addSignal(state: AnalyzerState, signal: StoredSignal): void {
  const instant = Date.parse(signal.time);
  if (Number.isNaN(instant) || instant <= state.fromMs || instant > state.toMs) {
    state.outsideWindow += 1;
    return;
  }
  state.inWindow += 1;
  state.methods[signal.assemblyMethod] = (state.methods[signal.assemblyMethod] ?? 0) + 1;
  if (signal.patterns.length > 0) {
    state.signalsWithPatterns += 1;
    for (const pattern of signal.patterns) state.patternUse.add(pattern);
  }
  if (signal.artifactSections !== undefined) {
    state.signalsWithSections += 1;
    for (const section of signal.artifactSections) state.sectionUse.add(section);
  }
  if (!isLowConfidence(signal, state.settings)) return;
  state.low += 1;
  state.gapEntities.addSignal(signal.uncoveredEntities, entityKey);
  state.gapBehaviors.addSignal(signal.uncoveredBehaviors, identity);
  addToCluster(clusterOf(state, signal), signal, state.settings.exampleGoals);
}

/** The cluster of a low-confidence signal, created empty on first sight. */
function clusterOf(state: AnalyzerState, signal: StoredSignal): ClusterState {
  const bucket = entityCountBucket(signal.entityCount, state.settings.entityCountBuckets);
  const key = clusterKey(signal.appClass, signal.hasCommitments, bucket);
  let cluster = state.clusters.get(key);
  if (cluster === undefined) {
    cluster = {
      appClass: signal.appClass,
      hasCommitments: signal.hasCommitments,
      bucket,
      size: 0,
      methods: emptyMethods(),
      confidenceSum: 0,
      entities: new NameCounter(),
      behaviors: new NameCounter(),
      patterns: new NameCounter(),
      versions: new NameCounter(),
      goals: [],
      firstSeen: signal.time,
      lastSeen: signal.time,
    };
    state.clusters.set(key, cluster);
  }
  return cluster;
}

function addToCluster(state: ClusterState, signal: StoredSignal, exampleGoals: number): void {
  state.size += 1;
  state.methods[signal.assemblyMethod] = (state.methods[signal.assemblyMethod] ?? 0) + 1;
  state.confidenceSum += signal.confidence;
  state.entities.addSignal(signal.uncoveredEntities, entityKey);
  state.behaviors.addSignal(signal.uncoveredBehaviors, identity);
  state.patterns.addSignal(signal.patterns, identity);
  state.versions.addSignal([signal.artifactVersion], identity);
  if (Date.parse(signal.time) < Date.parse(state.firstSeen)) state.firstSeen = signal.time;
  if (Date.parse(signal.time) > Date.parse(state.lastSeen)) state.lastSeen = signal.time;
  if (signal.goal !== null && exampleGoals > 0) keepRecentGoal(state.goals, signal, exampleGoals);
}

const strip = ({ name, count, share }: CountedName): CountedName => ({ name, count, share });

/** The analysis of everything folded so far. */
function finishAnalysis(state: AnalyzerState): SignalAnalysis {
  const { settings } = state;
  const { reported, sketches, smallClusters, smallSignals } = reportClusters(state);
  return {
    window: state.window,
    signals: state.inWindow,
    lowConfidence: state.low,
    outsideWindow: state.outsideWindow,
    methods: state.methods,
    settings: {
      confidenceThreshold: settings.confidenceThreshold,
      lowConfidenceMethods: settings.lowConfidenceMethods,
      minClusterSize: settings.minClusterSize,
      entityCountBuckets: entityCountBucketLabels(settings.entityCountBuckets),
      typicalShare: settings.typicalShare,
    },
    clusters: reported,
    belowMinimum: { clusters: smallClusters, signals: smallSignals },
    recurringGaps: recurringGaps(state, reported),
    deprecationCandidates: deprecation(
      state.options,
      settings.minClusterSize,
      state.patternUse,
      state.sectionUse,
      state.signalsWithPatterns,
      state.signalsWithSections,
    ),
    candidatePatterns: sketches,
  };
}

/** Clusters of at least `minClusterSize` (largest first) with their pattern sketches; the rest counted. */
function reportClusters(state: AnalyzerState): {
  reported: SignalCluster[];
  sketches: CandidatePatternSketch[];
  smallClusters: number;
  smallSignals: number;
} {
  const reported: SignalCluster[] = [];
  const sketches: CandidatePatternSketch[] = [];
  let smallClusters = 0;
  let smallSignals = 0;
  const ordered = [...state.clusters.entries()].sort(
    ([leftKey, left], [rightKey, right]) =>
      right.size - left.size || (leftKey < rightKey ? -1 : leftKey > rightKey ? 1 : 0),
  );
  for (const [key, cluster] of ordered) {
    if (cluster.size < state.settings.minClusterSize) {
      smallClusters += 1;
      smallSignals += cluster.size;
      continue;
    }
    const summary = summariseCluster(state, key, cluster);
    reported.push(summary);
    const sketch = sketchOf(cluster, summary, state.settings.typicalShare);
    if (sketch !== undefined) sketches.push(sketch);
  }
  return { reported, sketches, smallClusters, smallSignals };
}

function summariseCluster(state: AnalyzerState, key: string, cluster: ClusterState): SignalCluster {
  return {
    key,
    appClass: cluster.appClass,
    hasCommitments: cluster.hasCommitments,
    entityCountBucket: cluster.bucket,
    size: cluster.size,
    share: state.inWindow > 0 ? cluster.size / state.inWindow : 0,
    shareOfLowConfidence: state.low > 0 ? cluster.size / state.low : 0,
    methods: cluster.methods,
    meanConfidence: cluster.confidenceSum / cluster.size,
    uncoveredEntities: cluster.entities.top(cluster.size, TOP).map(strip),
    uncoveredBehaviors: cluster.behaviors.top(cluster.size, TOP).map(strip),
    patterns: cluster.patterns.top(cluster.size, TOP).map(strip),
    artifactVersions: cluster.versions.top(cluster.size, TOP).map(strip),
    exampleGoals: cluster.goals.map((goal) => goal.goal),
    firstSeen: cluster.firstSeen,
    lastSeen: cluster.lastSeen,
  };
}

/** A candidate pattern for a cluster with typical uncovered entities or behaviours, else undefined. */
function sketchOf(
  cluster: ClusterState,
  summary: SignalCluster,
  typicalShare: number,
): CandidatePatternSketch | undefined {
  const typicalEntities = cluster.entities
    .top(cluster.size)
    .filter((entry) => entry.share >= typicalShare)
    .map(strip);
  const typicalBehaviors = cluster.behaviors
    .top(cluster.size)
    .filter((entry) => entry.share >= typicalShare)
    .map(strip);
  if (typicalEntities.length === 0 && typicalBehaviors.length === 0) return undefined;
  return {
    clusterKey: summary.key,
    appClass: cluster.appClass,
    hasCommitments: cluster.hasCommitments,
    entityCountBucket: cluster.bucket,
    size: cluster.size,
    entities: typicalEntities,
    behaviors: typicalBehaviors,
    patternsUsed: summary.patterns,
    exampleGoals: summary.exampleGoals,
  };
}

/** Uncovered names in at least `minClusterSize` low-confidence signals, most frequent first. */
function recurringGaps(state: AnalyzerState, reported: readonly SignalCluster[]): RecurringGap[] {
  const gaps: RecurringGap[] = [];
  for (const [kind, counter] of [
    ['entity', state.gapEntities],
    ['behavior', state.gapBehaviors],
  ] as const) {
    for (const entry of counter.top(state.low)) {
      if (entry.count < state.settings.minClusterSize) continue;
      const inClusters = reported
        .filter(
          (cluster) =>
            state.clusters.get(cluster.key)?.[kind === 'entity' ? 'entities' : 'behaviors'].has(entry.key) === true,
        )
        .map((cluster) => cluster.key);
      gaps.push({ kind, name: entry.name, count: entry.count, share: entry.share, clusters: inClusters });
    }
  }
  gaps.sort(
    (left, right) =>
      right.count - left.count ||
      (left.kind < right.kind ? -1 : left.kind > right.kind ? 1 : left.name < right.name ? -1 : 1),
  );
  return gaps;
}

function deprecation(
  options: SignalAnalyzerOptions,
  minimum: number,
  patternUse: ReadonlySet<string>,
  sectionUse: ReadonlySet<string>,
  signalsWithPatterns: number,
  signalsWithSections: number,
): DeprecationCandidates {
  const notes: string[] = [];
  let patterns: string[] = [];
  let sections: string[] = [];
  if (options.knownPatterns !== undefined) {
    if (signalsWithPatterns >= minimum) patterns = options.knownPatterns.filter((id) => !patternUse.has(id));
    else
      notes.push(`patterns: only ${signalsWithPatterns} signals in the window list their patterns (need ${minimum})`);
  }
  if (options.knownSections !== undefined) {
    if (signalsWithSections >= minimum) sections = options.knownSections.filter((name) => !sectionUse.has(name));
    else
      notes.push(
        `sections: only ${signalsWithSections} signals in the window list artifact sections (need ${minimum})`,
      );
  }
  return { patterns, sections, evidence: { signalsWithPatterns, signalsWithSections }, notes };
}

/** Analyses a list of signals at once (see {@link createSignalAnalyzer}). */
export function analyzeSignals(signals: Iterable<StoredSignal>, options: SignalAnalyzerOptions): SignalAnalysis {
  const analyzer = createSignalAnalyzer(options);
  for (const signal of signals) analyzer.add(signal);
  return analyzer.finish();
}
