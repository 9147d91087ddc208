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
import type { StoredSignal } from './signal.ts';
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

/**
 * Creates a Loop D analyzer. Signals outside the window are counted in
 * `outsideWindow` and otherwise ignored; the order of `add` calls does not
 * change the result.
 */
export function createSignalAnalyzer(options: SignalAnalyzerOptions): SignalAnalyzer {
  const settings = resolveSettings(options.settings);
  const window = signalWindow(options.now, settings.windowDays);
  const fromMs = Date.parse(window.from);
  const toMs = Date.parse(window.to);
  const methods = emptyMethods();
  const clusters = new Map<string, ClusterState>();
  const gapEntities = new NameCounter();
  const gapBehaviors = new NameCounter();
  const patternUse = new Set<string>();
  const sectionUse = new Set<string>();
  let inWindow = 0;
  let low = 0;
  let outsideWindow = 0;
  let signalsWithPatterns = 0;
  let signalsWithSections = 0;

  const add = (signal: StoredSignal): void => {
    const instant = Date.parse(signal.time);
    if (Number.isNaN(instant) || instant <= fromMs || instant > toMs) {
      outsideWindow += 1;
      return;
    }
    inWindow += 1;
    methods[signal.assemblyMethod] = (methods[signal.assemblyMethod] ?? 0) + 1;
    if (signal.patterns.length > 0) {
      signalsWithPatterns += 1;
      for (const pattern of signal.patterns) patternUse.add(pattern);
    }
    if (signal.artifactSections !== undefined) {
      signalsWithSections += 1;
      for (const section of signal.artifactSections) sectionUse.add(section);
    }
    if (!isLowConfidence(signal, settings)) return;
    low += 1;
    gapEntities.addSignal(signal.uncoveredEntities, entityKey);
    gapBehaviors.addSignal(signal.uncoveredBehaviors, identity);
    const bucket = entityCountBucket(signal.entityCount, settings.entityCountBuckets);
    const key = clusterKey(signal.appClass, signal.hasCommitments, bucket);
    let state = clusters.get(key);
    if (state === undefined) {
      state = {
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
      clusters.set(key, state);
    }
    state.size += 1;
    state.methods[signal.assemblyMethod] = (state.methods[signal.assemblyMethod] ?? 0) + 1;
    state.confidenceSum += signal.confidence;
    state.entities.addSignal(signal.uncoveredEntities, entityKey);
    state.behaviors.addSignal(signal.uncoveredBehaviors, identity);
    state.patterns.addSignal(signal.patterns, identity);
    state.versions.addSignal([signal.artifactVersion], identity);
    if (Date.parse(signal.time) < Date.parse(state.firstSeen)) state.firstSeen = signal.time;
    if (Date.parse(signal.time) > Date.parse(state.lastSeen)) state.lastSeen = signal.time;
    if (signal.goal !== null && settings.exampleGoals > 0) keepRecentGoal(state.goals, signal, settings.exampleGoals);
  };

  const finish = (): SignalAnalysis => {
    const reported: SignalCluster[] = [];
    const sketches: CandidatePatternSketch[] = [];
    let smallClusters = 0;
    let smallSignals = 0;
    const ordered = [...clusters.entries()].sort(
      ([leftKey, left], [rightKey, right]) =>
        right.size - left.size || (leftKey < rightKey ? -1 : leftKey > rightKey ? 1 : 0),
    );
    for (const [key, state] of ordered) {
      if (state.size < settings.minClusterSize) {
        smallClusters += 1;
        smallSignals += state.size;
        continue;
      }
      const strip = ({ name, count, share }: CountedName): CountedName => ({ name, count, share });
      const cluster: SignalCluster = {
        key,
        appClass: state.appClass,
        hasCommitments: state.hasCommitments,
        entityCountBucket: state.bucket,
        size: state.size,
        share: inWindow > 0 ? state.size / inWindow : 0,
        shareOfLowConfidence: low > 0 ? state.size / low : 0,
        methods: state.methods,
        meanConfidence: state.confidenceSum / state.size,
        uncoveredEntities: state.entities.top(state.size, TOP).map(strip),
        uncoveredBehaviors: state.behaviors.top(state.size, TOP).map(strip),
        patterns: state.patterns.top(state.size, TOP).map(strip),
        artifactVersions: state.versions.top(state.size, TOP).map(strip),
        exampleGoals: state.goals.map((goal) => goal.goal),
        firstSeen: state.firstSeen,
        lastSeen: state.lastSeen,
      };
      reported.push(cluster);
      const typicalEntities = state.entities
        .top(state.size)
        .filter((entry) => entry.share >= settings.typicalShare)
        .map(strip);
      const typicalBehaviors = state.behaviors
        .top(state.size)
        .filter((entry) => entry.share >= settings.typicalShare)
        .map(strip);
      if (typicalEntities.length > 0 || typicalBehaviors.length > 0) {
        sketches.push({
          clusterKey: key,
          appClass: state.appClass,
          hasCommitments: state.hasCommitments,
          entityCountBucket: state.bucket,
          size: state.size,
          entities: typicalEntities,
          behaviors: typicalBehaviors,
          patternsUsed: cluster.patterns,
          exampleGoals: cluster.exampleGoals,
        });
      }
    }
    const recurringGaps: RecurringGap[] = [];
    for (const [kind, counter] of [
      ['entity', gapEntities],
      ['behavior', gapBehaviors],
    ] as const) {
      for (const entry of counter.top(low)) {
        if (entry.count < settings.minClusterSize) continue;
        const inClusters = reported
          .filter(
            (cluster) =>
              clusters.get(cluster.key)?.[kind === 'entity' ? 'entities' : 'behaviors'].has(entry.key) === true,
          )
          .map((cluster) => cluster.key);
        recurringGaps.push({ kind, name: entry.name, count: entry.count, share: entry.share, clusters: inClusters });
      }
    }
    recurringGaps.sort(
      (left, right) =>
        right.count - left.count ||
        (left.kind < right.kind ? -1 : left.kind > right.kind ? 1 : left.name < right.name ? -1 : 1),
    );
    return {
      window,
      signals: inWindow,
      lowConfidence: low,
      outsideWindow,
      methods,
      settings: {
        confidenceThreshold: settings.confidenceThreshold,
        lowConfidenceMethods: settings.lowConfidenceMethods,
        minClusterSize: settings.minClusterSize,
        entityCountBuckets: entityCountBucketLabels(settings.entityCountBuckets),
        typicalShare: settings.typicalShare,
      },
      clusters: reported,
      belowMinimum: { clusters: smallClusters, signals: smallSignals },
      recurringGaps,
      deprecationCandidates: deprecation(
        options,
        settings.minClusterSize,
        patternUse,
        sectionUse,
        signalsWithPatterns,
        signalsWithSections,
      ),
      candidatePatterns: sketches,
    };
  };

  return { add, finish };
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
