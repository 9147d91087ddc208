/**
 * Corpus admission (DESIGN §4): the quality gate every new example passes
 * before it joins a study's corpus, in the shadow partition.
 *
 * Checks, each with its reason when it fails (all failing checks are
 * reported, not just the first):
 *
 * 1. `schema`           — the public example format and the closed
 *                         vocabularies (`exampleSchema`); a record that fails
 *                         it is not checked further.
 * 2. `duplicate_id`     — the id is not used by any example of the study
 *                         (files, admitted, removed) nor earlier in the batch.
 * 3. `non_trivial_gold` — at least one gold entity, and a known app type (a
 *                         vocabulary value other than `other`); the app type
 *                         may be waived for partial gold (`requireAppType:
 *                         false`, CLI `--partial-gold`).
 * 4. `grounding`        — every gold entity is named in the goal text: its
 *                         name, one of its aliases, or a lemma of it (see
 *                         {@link isEntityGrounded}).
 *
 *                         Checks 3 and 4 are the intent task's own rules
 *                         (`src/tasks/intent/intent-admission.ts`).
 * 5. `near_duplicate`   — the goal is not a near-copy of an existing goal or
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
import { intentAdmissionProblems } from '../tasks/intent/intent-admission.ts';
import type { Example, PartitionName } from './example.ts';
import { exampleSchema } from './example.ts';
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
export type CandidateFile = { ok: true; file: string; records: CandidateRecord[] } | { ok: false; errors: CorpusFileError[] };

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
export function readCandidateRecords(file: string): CandidateFile {
  const format = corpusFormatOf(file);
  if (format === undefined) return { ok: false, errors: [{ file, message: `${file}: unknown corpus file extension (use .yaml, .yml, .jsonl or .json)` }] };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, errors: [{ file, message: code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${(error as Error).message}` }] };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    const whole = parsePublicFormat(bytes, format, file);
    return { ok: false, errors: whole.ok ? [{ file, message: `${file} is not valid UTF-8` }] : whole.errors };
  }
  return format === 'jsonl' ? readJsonLines(text, file) : readYamlRecords(text, file);
}

function readJsonLines(text: string, file: string): CandidateFile {
  const records: CandidateRecord[] = [];
  text.split('\n').forEach((raw, index) => {
    const source = raw.replace(/\r$/, '');
    if (source.trim() === '') return;
    const line = index + 1;
    const parsed = parsePublicFormat(source, 'jsonl', file);
    const record: CandidateRecord = { index: records.length, line, errors: [] };
    try {
      const id = idOf(JSON.parse(source));
      if (id !== undefined) record.id = id;
    } catch {
      // the parse error is in `parsed`
    }
    if (parsed.ok) {
      if (parsed.examples[0] !== undefined) record.example = parsed.examples[0];
    } else record.errors = parsed.errors.map((error) => ({ ...error, line }));
    records.push(record);
  });
  return { ok: true, file, records };
}

function readYamlRecords(text: string, file: string): CandidateFile {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const whole = parsePublicFormat(text, 'yaml', file);
  if (document.errors.length > 0) return { ok: false, errors: whole.ok ? [{ file, message: 'invalid YAML' }] : whole.errors };
  const root = document.contents;
  if (root === null) return { ok: true, file, records: [] };
  const list = isSeq(root) ? root : isMap(root) && isSeq(root.get('examples', true)) && root.items.length === 1 ? root.get('examples', true) : undefined;
  if (list === undefined || !isSeq(list)) {
    return { ok: false, errors: whole.ok ? [{ file, message: 'the file must hold a list of examples or a mapping with only "examples"' }] : whole.errors };
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
    const parsed = exampleSchema.safeParse(value);
    if (parsed.success) record.example = parsed.data;
    else {
      record.errors = errors.filter((error) => error.line !== undefined && line !== undefined && error.line >= line && error.line < end);
      if (record.errors.length === 0) {
        record.errors = parsed.error.issues.map((issue) => ({ file, ...(line !== undefined ? { line } : {}), field: issue.path.join('.'), message: issue.message }));
      }
    }
    return record;
  });
  return { ok: true, file, records };
}

/** The admission checks, in order. */
export type AdmissionCheck = 'schema' | 'duplicate_id' | 'non_trivial_gold' | 'grounding' | 'near_duplicate';

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
  /** Distance below which two goals are near-duplicates. Default {@link NEAR_DUPLICATE_DISTANCE}. */
  nearDuplicateDistance?: number;
  /** Refuse gold without a known app type. Default true. */
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
  return example.partition === 'shadow' ? { partition: 'shadow' } : { partition: 'shadow', note: `the record says partition "${example.partition}"; admitted examples enter shadow first` };
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
  const requireAppType = options.requireAppType ?? true;
  const placeIn = options.placeIn ?? shadowFirst;
  const pool = new GoalIndex<{ id: string; partition: PartitionName; location?: string }>();
  for (const example of existing) {
    const location = options.locations?.get(example.id);
    pool.add(example.goal, { id: example.id, partition: example.partition, ...(location !== undefined ? { location } : {}) });
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
    if (record.id !== undefined) {
      if (batchIds.has(record.id)) verdict.reasons.push({ check: 'duplicate_id', field: 'id', message: `id "${record.id}" appears earlier in this batch` });
      else if (ids.has(record.id)) verdict.reasons.push({ check: 'duplicate_id', field: 'id', relatedId: record.id, message: `id "${record.id}" is already used in this study` });
      batchIds.add(record.id);
    }
    const example = record.example;
    if (example === undefined) {
      const errors = record.errors.length > 0 ? record.errors : [{ file: '', message: 'the record is not an example' }];
      verdict.reasons.unshift(...errors.map((error) => ({ check: 'schema' as const, message: error.message, ...(error.field !== undefined ? { field: error.field } : {}) })));
      return verdict;
    }
    for (const problem of intentAdmissionProblems(example.goal, example.expected, { requireAppType })) {
      verdict.reasons.push({ check: problem.reason, field: problem.field, message: problem.message });
    }
    const placement = placeIn(example);
    const nearest = pool.nearest(example.goal, threshold);
    if (nearest !== undefined) {
      const { id, partition, location: where } = nearest.entry;
      const across = partition !== placement.partition;
      verdict.reasons.push({
        check: 'near_duplicate',
        field: 'goal',
        relatedId: id,
        relatedPartition: partition,
        ...(where !== undefined ? { relatedLocation: where } : {}),
        statistic: nearest.distance,
        message:
          `the goal ${nearest.distance === 0 ? 'is the same text as' : 'is a near-duplicate of'} "${id}" (${where !== undefined ? `${where}, ` : ''}${partition}; bigram Jaccard distance ${nearest.distance.toFixed(3)} < ${threshold})` +
          (across ? `: the same request in ${placement.partition} and ${partition} would leak one partition into the other` : ''),
      });
    }
    if (placement.note !== undefined) verdict.notes.push(placement.note);
    if (verdict.reasons.length > 0) return verdict;
    const admitted: Example = { ...example, partition: placement.partition };
    verdict.admitted = true;
    verdict.example = admitted;
    pool.add(admitted.goal, { id: admitted.id, partition: admitted.partition, ...(location !== undefined ? { location } : {}) });
    return verdict;
  });
}
