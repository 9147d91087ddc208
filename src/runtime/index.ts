/**
 * The runtime: goal text → intent → assembly → SQL → structural gates, with
 * a production signal per call. See `docs/runtime.md`.
 */
export {
  createRuntime,
  loadStudyPatternLibrary,
  signalOf,
  studyPatternDirectory,
  type Runtime,
  type RuntimeAssembly,
  type RuntimeBuildInvalid,
  type RuntimeBuildResult,
  type RuntimeBuildSuccess,
  type RuntimeOptions,
} from './runtime.ts';
export {
  listSignals,
  recordSignal,
  SIGNAL_SOURCES,
  signalFromRow,
  signalToRow,
  type ProductionSignal,
  type RecordSignalOptions,
  type SignalDetail,
  type SignalSource,
  type StoredSignal,
} from '../signals/production-signal.ts';
