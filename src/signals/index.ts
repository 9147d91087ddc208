/**
 * Production signals (Loop D) and pattern mining (Loop C): the signal schema,
 * ingest, the HTTP endpoint, the rolling-window analysis, shape mining and
 * the governance that sends findings for review. See docs/loops-c-d.md.
 *
 * ```ts
 * import { ingestSignalFile, runLoopD } from './signals/index.ts';
 * await ingestSignalFile(db, 'signals.jsonl');
 * const { report } = await runLoopD({ db, enqueue: false });
 * report.clusters; // [{ appClass, hasCommitments, entityCountBucket, size, share, ... }]
 * ```
 */
export {
  ASSEMBLY_METHODS,
  MAX_SIGNAL_GOAL_CHARACTERS,
  SIGNAL_SOURCES,
  formatSignalIssue,
  fromSignalRow,
  parseSignal,
  signalJsonSchema,
  signalSchema,
  toSignalRow,
  type Signal,
  type SignalAssemblyMethod,
  type SignalIssue,
  type SignalParseResult,
  type SignalSource,
  type StoredSignal,
} from './signal.ts';
export {
  parseSignalBody,
  parseSignalLines,
  parseSignalValue,
  type LocatedSignal,
  type ParsedSignals,
} from './parse-signals.ts';
export {
  countSignals,
  forEachSignalInRange,
  readSignalsInRange,
  storeSignals,
  type StoreSignalsOptions,
  type StoreSignalsResult,
} from './signal-store.ts';
export { ingestSignalFile, type IngestOptions, type IngestReport } from './ingest.ts';
export { DEFAULT_SIGNALS_CONFIG, signalsConfigSchema, type SignalsConfig } from '../config/signals-config.ts';
export {
  analyzeSignals,
  clusterKey,
  createSignalAnalyzer,
  entityCountBucket,
  entityCountBucketLabels,
  isLowConfidence,
  signalWindow,
  type AnalysisSettings,
  type CandidatePatternSketch,
  type RecurringGap,
  type SignalAnalysis,
  type SignalCluster,
} from './analysis.ts';
export { buildSignalReport, type SignalCandidatePattern, type SignalReport } from './signal-report.ts';
export { createRoleIndex, draftPattern, type PatternDraft } from './candidate-pattern.ts';
export {
  createShapeMiner,
  libraryCoverage,
  mineShapes,
  shapeKey,
  type MinedShape,
  type MiningReport,
  type Shape,
} from './mining.ts';
export {
  enqueueMiningFindings,
  enqueueSignalFindings,
  type AdmitExample,
  type EnqueueFindingsResult,
} from './governance.ts';
export { buildMiningReport, runLoopC, runLoopD, type SlowLoopOptions } from './loops.ts';
export {
  createSignalApp,
  resolveServeToken,
  startSignalServer,
  type SignalServer,
  type SignalServerOptions,
} from './server.ts';
export { createTokenBucketLimiter, type TokenBucketLimiter } from './token-bucket.ts';
