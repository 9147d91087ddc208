/**
 * kloop's public API: a small, deliberate surface. Heavy optional parts
 * (providers, assembly) are reachable through their own modules.
 */

// Statistics (pure, no I/O).
export {
  bigramJaccardDistance,
  bootstrapCI,
  cohensD,
  createSeededRandom,
  hedgesG,
  mean,
  pairedTTest,
  standardDeviation,
  standardError,
  variance,
  welchTTest,
  wilcoxonSignedRank,
} from './stats/index.ts';
export type { Alternative, ConfidenceInterval, TTestResult, WilcoxonSignedRankResult } from './stats/index.ts';

// The intent task: vocabularies, public formats, scorer.
export {
  APP_TYPES,
  BEHAVIORS,
  CARDINALITIES,
  ENTITY_ROLES,
  PROJECTIONS,
  RELATION_KINDS,
} from './tasks/intent/vocabulary.ts';
export type {
  AppType,
  Behavior,
  Cardinality,
  EntityRole,
  Projection,
  RelationKind,
} from './tasks/intent/vocabulary.ts';
export { expectedIntentSchema, intentSchema } from './tasks/intent/intent.ts';
export type { ExpectedIntent, Intent, IntentEntity, Relation } from './tasks/intent/intent.ts';
export { DEFAULT_WEIGHTS, scoreExample, scoreIntent } from './tasks/intent/scorer.ts';
export { normalizeEntityName } from './tasks/intent/names.ts';
export { PARTITIONS } from './corpus/example.ts';
export { exampleSchema } from './corpus/intent-example.ts';
export type { Example, PartitionName } from './corpus/example.ts';
export type {
  ExecutionRequest,
  ExecutionResult,
  ExecutionUsage,
  Executor,
  InvalidReason,
} from './executors/executor.ts';
export { createOfflineExecutor } from './tasks/intent/offline/offline-executor.ts';

// Evaluation, gate, proposers.
export { createEvaluator } from './evaluator/evaluator.ts';
export type { Evaluator } from './evaluator/evaluator.ts';
export type { ExampleScore, PartitionScore } from './evaluator/partition-score.ts';
export { decide, DEFAULT_GATE_SETTINGS } from './gate/gate.ts';
export type { GateDecision, GateCheck, RefusalReason } from './gate/gate.ts';
export type { Candidate, Proposer, ProposalContext } from './proposers/proposer.ts';
export { createErrorDrivenProposer } from './proposers/error-driven-proposer.ts';

// Studies, storage and the prompt registry.
export { loadStudy, loadStudyAsync } from './study/load-study.ts';
export { runStudy } from './api/engine-entry.ts';

// Online studies: assignment and outcomes for an app (docs/online.md).
export { openOnlineStudy } from './online/study/online-study.ts';
export type {
  Assignment,
  OnlineStudy,
  OpenOnlineStudyOptions,
  OutcomeBatchReport,
} from './online/study/online-study.ts';

// The library API: a study built in code (ask/tell), and the engine under it.
export { createStudy } from './api/create-study.ts';
export { printProgress, progressLine } from './api/progress.ts';
export { wasTried } from './proposers/proposer.ts';
export type {
  CreateStudyOptions,
  ExecuteContext,
  ExecuteFunction,
  OptimizeResult,
  ProposedCandidate,
  ProposeFunction,
  ScoreFunction,
  Study,
  StudyBest,
  StudyExample,
} from './api/create-study.ts';
export type { StudySettings } from './study/study-settings.ts';
export { createLoopEngine } from './api/engine-entry.ts';
export type { EngineEntryOptions } from './api/engine-entry.ts';
export type { Asked, LoopEngine, OpenedRound, Told } from './loop/engine.ts';
export type { RunEvent, StopReason } from './loop/run-study.ts';
export { openDatabase, studyDatabasePath } from './storage/database.ts';
export { getActiveArtifactText, withArtifactOverride } from './storage/registry.ts';

// Errors.
export { InfrastructureError, InputError, KloopError, StorageError } from './errors.ts';
/** Thrown by `createStudy` (and exit 3 of the CLI) when another process holds the study's lease. */
export { StudyBusyError } from './storage/lease.ts';
/** Thrown by any write of a study (and exit 5 of the CLI) once another process took its lease over: fencing, src/storage/write-fence.ts. */
export { LeaseLostError } from './storage/write-fence.ts';
