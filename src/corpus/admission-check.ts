/**
 * Corpus admission's checks (DESIGN §4), with the study's record format given:
 * the quality gate every new example passes before it joins a study's
 * corpus, in the shadow partition. This module names no task; `admission.ts`
 * reads candidate files and defaults to the intent format.
 *
 * Checks, each with its reason when it fails (all failing checks are
 * reported, not just the first):
 *
 * 1. `schema`           — the record format of the study's task (an
 *                         {@link ExampleFormat}: `id`, the input field,
 *                         `expected`, `tags`, `partition`, with the task's
 *                         schemas); a record that fails it is not checked
 *                         further.
 * 2. `duplicate_id`     — the id is not used by any example of the study
 *                         (files, admitted, removed) nor earlier in the batch.
 * 3. the task's own rules (`task.admit`), each with the task's reason: for
 *    intent `non_trivial_gold` (at least one gold entity, and a known app
 *    type, which partial gold may waive: `requireAppType: false`, CLI
 *    `--partial-gold`) and `grounding` (every gold entity is named in the
 *    goal text, see `isEntityGrounded` in `src/tasks/intent/intent-admission.ts`);
 *    for classification `non_trivial_input`.
 * 4. `near_duplicate`   — the example's text (the task's text of its input)
 *                         is not a near-copy of an existing example's text or
 *                         of one admitted earlier in the batch: word-bigram
 *                         Jaccard distance below {@link NEAR_DUPLICATE_DISTANCE}
 *                         (0.3, i.e. similarity above 0.7) is refused.
 *
 *                         The reason names the other record (`relatedId`,
 *                         `relatedLocation` as file:line, `relatedPartition`)
 *                         and says when the pair spans two partitions (a leak).
 *
 * The `partition` field of a candidate is not obeyed: admitted examples enter
 * shadow, never optimization (a note says so when the record asked for more),
 * unless the caller places them otherwise (`placeIn`: corpus-file records on
 * a study's first run keep their file's partition, see `file-admission.ts`).
 */
import type { AdmissionProblem } from '../tasks/task.ts';
import { checkId, nearDuplicateReason } from './admission-reasons.ts';
import type { CorpusFileError } from './corpus-file-error.ts';
import type { Example, PartitionName } from './example.ts';
import type { ExampleFormat } from './example-format.ts';
import { GoalIndex } from './goal-index.ts';

/**
 * Word-bigram Jaccard distance below which two goal texts are near-duplicates:
 * 0.3. Rewording a few words of a paragraph keeps the distance well below it;
 * the closest two goals of the reference corpus (examples/intent, 72
 * examples) are 0.94 apart, so different requests in one domain pass easily.
 */
export const NEAR_DUPLICATE_DISTANCE = 0.3;

/** One record of a candidate file: the example, or the schema problems that kept it out. */
export interface CandidateRecord {
  /** 0-based position in the file. */
  index: number;
  /** 1-based line where the record starts. */
  line?: number;
  /** The id, when the record has a string id (even if it fails the schema). */
  id?: string;
  /** The file it is in, as reports name it (relative to the study when inside it); default the batch's `source`. */
  file?: string;
  example?: Example;
  /** Schema problems, with file, line and field. */
  errors: CorpusFileError[];
}

/**
 * The admission checks, in order: the engine's (`schema`, `duplicate_id`,
 * `near_duplicate`) and the task's own reasons (intent: `non_trivial_gold`,
 * `grounding`; classification: `non_trivial_input`; any string a task's
 * `admit` returns).
 */
export type AdmissionCheck =
  | 'schema'
  | 'duplicate_id'
  | 'non_trivial_gold'
  | 'grounding'
  | 'near_duplicate'
  | (string & {});

/** Why a candidate was refused. */
export interface AdmissionReason {
  check: AdmissionCheck;
  message: string;
  /** Field path inside the record, when the reason concerns one field. */
  field?: string;
  /** The existing example a duplicate or near-duplicate collides with. */
  relatedId?: string;
  /** Where that example is: `file:line`, or its source file when the line is unknown. */
  relatedLocation?: string;
  /** The partition that example is in. */
  relatedPartition?: PartitionName;
  /** The check's statistic (the bigram Jaccard distance of a near-duplicate). */
  statistic?: number;
}

/** The verdict on one candidate record. */
export interface AdmissionVerdict {
  /** The record's id, when readable. */
  id?: string;
  /** 1-based line of the record in its file. */
  line?: number;
  /** `file:line` of the record (or its file, when the line is unknown). */
  location?: string;
  admitted: boolean;
  /** The example as admitted, in the partition it is placed in (`shadow` unless `placeIn` says otherwise); present when admitted. */
  example?: Example;
  /** Empty when admitted. */
  reasons: AdmissionReason[];
  /** Remarks that do not refuse (a partition request that was not obeyed). */
  notes: string[];
}

/** Options of the admission checks. */
export interface AdmissionOptions {
  /** Distance below which two texts are near-duplicates. Default {@link NEAR_DUPLICATE_DISTANCE}. */
  nearDuplicateDistance?: number;
  /**
   * The study's record format: its task's `admit` rules run on every record
   * that fits the schema, and near-duplicate reasons name its input field.
   * Default the intent format.
   */
  format?: ExampleFormat;
  /**
   * Intent studies without a `format` only: refuse gold without a known app
   * type. Default true; false admits partial gold (`--partial-gold`). A study
   * with a format gives its intent task this setting
   * (`createIntentTask({ requireAppType })`).
   */
  requireAppType?: boolean;
  /** The batch's file, for locations of records without their own `file`. */
  source?: string;
  /** `file:line` (or file) of existing examples, by id, for messages that name both records. */
  locations?: ReadonlyMap<string, string>;
  /**
   * Where an admitted record goes, and a note when that is not what the
   * record asked for. Default: shadow, with a note when the record's
   * `partition` says otherwise (admitted examples enter shadow first).
   */
  placeIn?: (example: Example) => { partition: PartitionName; note?: string };
}

/** `file:line`, the file alone, or undefined. */
export function locationOf(file: string | undefined, line: number | undefined): string | undefined {
  if (file === undefined || file === '') return undefined;
  return line === undefined ? file : `${file}:${line}`;
}

function shadowFirst(example: Example): { partition: PartitionName; note?: string } {
  return example.partition === 'shadow'
    ? { partition: 'shadow' }
    : {
        partition: 'shadow',
        note: `the record says partition "${example.partition}"; admitted examples enter shadow first`,
      };
}

/**
 * Runs the admission checks over a batch (pure), with the study's record
 * format `format` (its task's `admit` rules; near-duplicate reasons name its
 * input field); `options.format` and `options.requireAppType` are not read
 * (`checkAdmission` in `admission.ts` picks the intent format from them).
 * `existing` is the study's corpus; `takenIds` every id the study has ever
 * had (files, admitted, removed). Examples admitted earlier in the batch
 * count as existing for the later ones.
 */
export function checkRecords(
  records: readonly CandidateRecord[],
  existing: readonly Example[],
  takenIds: ReadonlySet<string>,
  format: ExampleFormat,
  options: Omit<AdmissionOptions, 'format' | 'requireAppType'> = {},
): AdmissionVerdict[] {
  const threshold = options.nearDuplicateDistance ?? NEAR_DUPLICATE_DISTANCE;
  const admit = (example: Example): AdmissionProblem[] => format.task.admit?.(example.input, example.expected) ?? [];
  const placeIn = options.placeIn ?? shadowFirst;
  const pool = new GoalIndex<{ id: string; partition: PartitionName; location?: string }>();
  for (const example of existing) {
    const location = options.locations?.get(example.id);
    pool.add(example.text, {
      id: example.id,
      partition: example.partition,
      ...(location !== undefined ? { location } : {}),
    });
  }
  const ids = new Set(takenIds);
  for (const example of existing) ids.add(example.id);
  const batchIds = new Set<string>();
  return records.map((record) => {
    const verdict: AdmissionVerdict = { admitted: false, reasons: [], notes: [] };
    if (record.id !== undefined) verdict.id = record.id;
    if (record.line !== undefined) verdict.line = record.line;
    const location = locationOf(record.file ?? options.source, record.line);
    if (location !== undefined) verdict.location = location;
    checkId(verdict, record, { ids, batchIds });
    const example = record.example;
    if (example === undefined) {
      const errors = record.errors.length > 0 ? record.errors : [{ file: '', message: 'the record is not an example' }];
      verdict.reasons.unshift(
        ...errors.map((error) => ({
          check: 'schema' as const,
          message: error.message,
          ...(error.field !== undefined ? { field: error.field } : {}),
        })),
      );
      return verdict;
    }
    for (const problem of admit(example)) {
      verdict.reasons.push({
        check: problem.reason,
        ...(problem.field !== undefined ? { field: problem.field } : {}),
        message: problem.message,
      });
    }
    const placement = placeIn(example);
    const nearest = pool.nearest(example.text, threshold);
    if (nearest !== undefined)
      verdict.reasons.push(nearDuplicateReason(nearest, placement.partition, format.inputField, threshold));
    // The placement note says where an admitted record goes: a refused record goes nowhere.
    if (verdict.reasons.length > 0) return verdict;
    if (placement.note !== undefined) verdict.notes.push(placement.note);
    const admitted: Example = { ...example, partition: placement.partition };
    verdict.admitted = true;
    verdict.example = admitted;
    pool.add(admitted.text, {
      id: admitted.id,
      partition: admitted.partition,
      ...(location !== undefined ? { location } : {}),
    });
    return verdict;
  });
}
