/**
 * Corpus admission (DESIGN §4): the quality gate every new example passes
 * before it joins a study's corpus, in the shadow partition.
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
 *    goal text, see {@link isEntityGrounded}; `src/tasks/intent/intent-admission.ts`);
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
import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import type { AdmissionProblem } from '../tasks/task.ts';
import type { Example, PartitionName } from './example.ts';
import { checkId, nearDuplicateReason } from './admission-reasons.ts';
import { type ExampleFormat, INTENT_EXAMPLE_FORMAT, createExampleFormat } from './example-format.ts';
import { GoalIndex } from './goal-index.ts';
import type { CorpusFileError } from './importers/public-format.ts';
import { corpusFormatOf, parsePublicFormat } from './importers/public-format.ts';

// The intent task's rules (non-trivial gold, grounding) live with the task.
export { groundingKeys, isEntityGrounded } from '../tasks/intent/intent-admission.ts';

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

/** The records of a candidate file, or why none could be read. */
export type CandidateFile =
  | { ok: true; file: string; records: CandidateRecord[] }
  | { ok: false; errors: CorpusFileError[] };

function idOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' && id.trim() !== '' ? id : undefined;
}

function isDuplicateIdError(error: CorpusFileError): boolean {
  return error.field === 'id' && error.message.startsWith('duplicate id');
}

/**
 * Reads a candidate file record by record (JSONL, YAML or JSON in the public
 * format): unlike `readCorpusFile`, a bad record does not hide the good
 * ones. Only a file that cannot be read at all (missing, not UTF-8, not
 * parseable as a whole) is an error.
 */
export function readCandidateRecords(file: string, records: ExampleFormat = INTENT_EXAMPLE_FORMAT): CandidateFile {
  const format = corpusFormatOf(file);
  if (format === undefined)
    return {
      ok: false,
      errors: [{ file, message: `${file}: unknown corpus file extension (use .yaml, .yml, .jsonl or .json)` }],
    };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      errors: [
        { file, message: code === 'ENOENT' ? 'the file does not exist' : `cannot read: ${(error as Error).message}` },
      ],
    };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    const whole = parsePublicFormat(bytes, format, file, records);
    return { ok: false, errors: whole.ok ? [{ file, message: `${file} is not valid UTF-8` }] : whole.errors };
  }
  return format === 'jsonl' ? readJsonLines(text, file, records) : readYamlRecords(text, file, records);
}

function readJsonLines(text: string, file: string, records: ExampleFormat): CandidateFile {
  const found: CandidateRecord[] = [];
  text.split('\n').forEach((raw, index) => {
    const source = raw.replace(/\r$/, '');
    if (source.trim() === '') return;
    const line = index + 1;
    const parsed = parsePublicFormat(source, 'jsonl', file, records);
    const record: CandidateRecord = { index: found.length, line, errors: [] };
    try {
      const id = idOf(JSON.parse(source));
      if (id !== undefined) record.id = id;
    } catch {
      // the parse error is in `parsed`
    }
    if (parsed.ok) {
      if (parsed.examples[0] !== undefined) record.example = parsed.examples[0];
    } else record.errors = parsed.errors.map((error) => ({ ...error, line }));
    found.push(record);
  });
  return { ok: true, file, records: found };
}

function readYamlRecords(text: string, file: string, format: ExampleFormat): CandidateFile {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const whole = parsePublicFormat(text, 'yaml', file, format);
  if (document.errors.length > 0)
    return { ok: false, errors: whole.ok ? [{ file, message: 'invalid YAML' }] : whole.errors };
  const root = document.contents;
  if (root === null) return { ok: true, file, records: [] };
  const list = isSeq(root)
    ? root
    : isMap(root) && isSeq(root.get('examples', true)) && root.items.length === 1
      ? root.get('examples', true)
      : undefined;
  if (list === undefined || !isSeq(list)) {
    return {
      ok: false,
      errors: whole.ok
        ? [{ file, message: 'the file must hold a list of examples or a mapping with only "examples"' }]
        : whole.errors,
    };
  }
  const values = list.toJSON() as unknown[];
  const starts = list.items.map((item) => {
    const range = (item as { range?: [number, number, number] } | null)?.range;
    return range === undefined ? undefined : lineCounter.linePos(range[0]).line;
  });
  const errors = whole.ok ? [] : whole.errors.filter((error) => !isDuplicateIdError(error));
  const records: CandidateRecord[] = values.map((value, index) => {
    const line = starts[index];
    const end = starts.slice(index + 1).find((start) => start !== undefined) ?? Number.POSITIVE_INFINITY;
    const record: CandidateRecord = { index, errors: [] };
    if (line !== undefined) record.line = line;
    const id = idOf(value);
    if (id !== undefined) record.id = id;
    const parsed = format.parse(value);
    if (parsed.success) record.example = parsed.example;
    else {
      record.errors = errors.filter(
        (error) => error.line !== undefined && line !== undefined && error.line >= line && error.line < end,
      );
      if (record.errors.length === 0) {
        record.errors = parsed.issues.map((issue) => ({
          file,
          ...(line !== undefined ? { line } : {}),
          field: issue.path.join('.'),
          message: issue.message,
        }));
      }
    }
    return record;
  });
  return { ok: true, file, records };
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

/** The intent format whose task admits partial gold (no known app type): `requireAppType: false` without a format. */
const PARTIAL_GOLD_INTENT_FORMAT: ExampleFormat = createExampleFormat(
  createIntentTask({ requireAppType: false }),
  'goal',
);

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
 * Runs the admission checks over a batch (pure). `existing` is the study's
 * corpus; `takenIds` every id the study has ever had (files, admitted,
 * removed). Examples admitted earlier in the batch count as existing for the
 * later ones.
 */
export function checkAdmission(
  records: readonly CandidateRecord[],
  existing: readonly Example[],
  takenIds: ReadonlySet<string>,
  options: AdmissionOptions = {},
): AdmissionVerdict[] {
  const threshold = options.nearDuplicateDistance ?? NEAR_DUPLICATE_DISTANCE;
  const format =
    options.format ?? (options.requireAppType === false ? PARTIAL_GOLD_INTENT_FORMAT : INTENT_EXAMPLE_FORMAT);
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
