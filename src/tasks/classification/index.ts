/**
 * The `classification` task: one label from a closed set, with its reports
 * (accuracy or misroute rate, per-label recall, confusion table).
 *
 * @module
 */
export {
  createClassificationTask,
  CLASSIFICATION_REPORTS,
  CLASSIFICATION_SCORER_VERSION,
  MAX_LABELS,
  type ClassificationExpected,
  type ClassificationOutput,
  type ClassificationReportAs,
  type ClassificationTask,
  type ClassificationTaskOptions,
} from './classification-task.ts';
export {
  classificationAccuracy,
  classificationOutcome,
  confusionTable,
  misrouteRate,
  perLabelRecall,
  summarizeClassification,
  type ClassificationOutcome,
  type ClassificationSummary,
  type ConfusionTable,
  type LabelRecall,
} from './classification-report.ts';
