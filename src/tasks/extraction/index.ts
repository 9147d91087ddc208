/**
 * The `extraction` task: a JSON object of fields against gold fields (exact
 * match, set F1 or a number within a tolerance per field, weighted).
 *
 * @module
 */
export {
  createExtractionTask,
  EXTRACTION_SCORER_VERSION,
  type ExtractionFieldOptions,
  type ExtractionRecord,
  type ExtractionTask,
  type ExtractionTaskOptions,
} from './extraction-task.ts';
export {
  FIELD_MATCHES,
  matchExact,
  matchNumber,
  matchSet,
  normalizeText,
  type ExactValue,
  type FieldDiagnostic,
  type FieldMatch,
  type SetItem,
} from './field-match.ts';
