/**
 * The viewer and the reports (subpath `kloop/view`): scores per experiment
 * read from the notebook (the gate's evidence; the per-partition store of
 * notebooks recorded before it; `example_results` for what no decision
 * recorded), the study's overview, the web viewer's server and the HTML /
 * CSV / JSON reports; and, from storage, activation by hand and the git
 * notebook. See docs/view.md.
 *
 * ```ts
 * import { openDatabase, studyDatabasePath } from 'kloop';
 * import { loadExperimentScores, startViewServer } from 'kloop/view';
 * const db = await openDatabase(studyDatabasePath('examples/intent'));
 * const scores = await loadExperimentScores(db); // [{ id, decision, composite, compositeDelta, pValue, ... }]
 * const viewer = await startViewServer({ db, studyDir: '/abs/examples/intent', token: null, port: 0 });
 * console.log(viewer.url);
 * ```
 */
export {
  parseEvidence,
  type Evidence,
  type EvidenceCheck,
  type EvidencePartitionScores,
  type EvidenceRebase,
  type EvidenceScores,
} from './evidence.ts';
export {
  VIEW_PARTITIONS,
  createVersionScorer,
  loadEvaluationIndex,
  loadExperimentScores,
  type EvaluationUsage,
  type ExperimentScore,
  type PartitionComposites,
  type VersionScorer,
} from './experiment-scores.ts';
export { loadExperimentDetail, type ExampleChange, type ExperimentDetail } from './experiment-detail.ts';
export {
  loadRunInProgress,
  loadStudyOverview,
  type ExperimentSummary,
  type StudyOverview,
  type TrailPoint,
} from './study-overview.ts';
export {
  loadCorpusPage,
  loadReviewPage,
  loadVersionsPage,
  type CorpusPage,
  type VersionSummary,
  type VersionsPage,
} from './study-pages.ts';
export { diffTexts, unifiedDiff, type DiffRow, type TextDiff } from './text-diff.ts';
export {
  CSV_COLUMNS,
  REPORT_FORMATS,
  loadReportData,
  renderCsvReport,
  renderHtmlReport,
  renderJsonReport,
  type ReportFormat,
  type StudyReportData,
} from './study-report.ts';
export {
  DEFAULT_VIEW_PORT,
  MIN_VIEW_TOKEN_CHARACTERS,
  createViewApp,
  startViewServer,
  type ViewApp,
  type ViewAppOptions,
  type ViewServer,
  type ViewServerOptions,
} from './view-server.ts';
export {
  activateVersion,
  activateVersionExclusive,
  listRegistryEvents,
  type ActivationRequest,
  type ActivationResult,
  type RegistryEvent,
} from '../storage/activation.ts';
export {
  checkGitMirror,
  gitMirrorPath,
  syncGitMirror,
  type MirrorFinding,
  type MirrorSyncResult,
} from '../storage/git-mirror.ts';
