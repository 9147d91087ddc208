/**
 * Corpus admission (DESIGN §4), the intent default and candidate files:
 * {@link readCandidateRecords} reads a candidate file record by record, and
 * {@link checkAdmission} runs the checks of `admission-check.ts` (schema,
 * duplicate id, the task's own rules, near-duplicate; see there) with the
 * study's record format, or without one the intent format (partial gold
 * admitted with `requireAppType: false`, CLI `--partial-gold`).
 *
 * The engine (src/loop/) calls `checkRecords` of `admission-check.ts` with the
 * study's format and so reaches no task through this module.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import type { AdmissionOptions, AdmissionVerdict, CandidateRecord } from './admission-check.ts';
import { checkRecords } from './admission-check.ts';
import type { Example } from './example.ts';
import { type ExampleFormat, createExampleFormat } from './example-format.ts';
import { INTENT_EXAMPLE_FORMAT } from './intent-example.ts';
import type { CorpusFileError } from './corpus-file-error.ts';
import { corpusFormatOf, parsePublicFormat } from './importers/public-format.ts';

// The intent task's rules (non-trivial gold, grounding) live with the task.
export { groundingKeys, isEntityGrounded } from '../tasks/intent/intent-admission.ts';
// The checks themselves, with the study's format given, name no task.
export type {
  AdmissionCheck,
  AdmissionOptions,
  AdmissionReason,
  AdmissionVerdict,
  CandidateRecord,
} from './admission-check.ts';
export { NEAR_DUPLICATE_DISTANCE, checkRecords, locationOf } from './admission-check.ts';

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

/** The intent format whose task admits partial gold (no known app type): `requireAppType: false` without a format. */
const PARTIAL_GOLD_INTENT_FORMAT: ExampleFormat = createExampleFormat(
  createIntentTask({ requireAppType: false }),
  'goal',
);

/**
 * Runs the admission checks over a batch (pure): {@link checkRecords} with
 * `options.format`, or without one the intent format (partial gold admitted
 * when `options.requireAppType` is false). `existing` is the study's corpus;
 * `takenIds` every id the study has ever had (files, admitted, removed).
 */
export function checkAdmission(
  records: readonly CandidateRecord[],
  existing: readonly Example[],
  takenIds: ReadonlySet<string>,
  options: AdmissionOptions = {},
): AdmissionVerdict[] {
  const format =
    options.format ?? (options.requireAppType === false ? PARTIAL_GOLD_INTENT_FORMAT : INTENT_EXAMPLE_FORMAT);
  return checkRecords(records, existing, takenIds, format, options);
}
