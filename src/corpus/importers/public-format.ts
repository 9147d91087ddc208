/**
 * Reading corpus files written in the public example format
 * (`src/corpus/example.ts`; records read per task by an `ExampleFormat`,
 * `src/corpus/example-format.ts`, default the intent format): JSON Lines,
 * YAML, or JSON.
 *
 * - JSONL: one example object per line; blank lines are skipped.
 * - YAML: a list of examples, or a mapping whose only key is `examples`
 *   holding that list.
 * - JSON: the same shapes as YAML (JSON is read with the YAML parser, which
 *   keeps line positions).
 *
 * Every problem is reported, not thrown, with the file, the 1-based line and
 * the field path (`expected.entities[0].role`) where it applies: invalid
 * UTF-8, syntax errors, unknown fields, values outside the closed
 * vocabularies, and ids repeated within the file. A file with any error
 * yields no examples.
 *
 * ```ts
 * const result = readCorpusFile('corpus/intents.yaml');
 * if (!result.ok) for (const error of result.errors) console.error(`${error.file}:${error.line}: ${error.field}: ${error.message}`);
 * ```
 */
import { readFileSync, statSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { Example } from '../example.ts';
import { type ExampleFormat } from '../example-format.ts';
import { INTENT_EXAMPLE_FORMAT } from '../intent-example.ts';
import type { CorpusFileError } from '../corpus-file-error.ts';
import { decodeUtf8, formatBytes, formatFieldPath, idOf, largestField, recordIssues } from './record-issues.ts';

export type { CorpusFileError } from '../corpus-file-error.ts';
export { formatFieldPath } from './record-issues.ts';

/** The two syntaxes of a corpus file (JSON is read as YAML). */
export type PublicFormat = 'jsonl' | 'yaml';

/** The examples of a file, or every problem found in it. */
export type CorpusFileResult = { ok: true; examples: Example[] } | { ok: false; errors: CorpusFileError[] };

/** {@link CorpusFileResult} with the 1-based line each example's record starts on (`lines[i]` for `examples[i]`). */
export type LocatedCorpusFileResult =
  | { ok: true; examples: Example[]; lines: Array<number | undefined> }
  | { ok: false; errors: CorpusFileError[] };

type PathSegment = string | number;

/** Largest corpus file read, in bytes (64 MiB): a bigger file is refused before it is read. */
export const MAX_CORPUS_FILE_BYTES = 64 * 1024 * 1024;
/** Largest JSONL record (one line), in bytes (1 MiB): a longer line is refused before it is parsed. */
export const MAX_RECORD_BYTES = 1024 * 1024;

function parseJsonLines(text: string, file: string, format: ExampleFormat): LocatedCorpusFileResult {
  const errors: CorpusFileError[] = [];
  const examples: Example[] = [];
  const lines: number[] = [];
  const firstLineOfId = new Map<string, number>();
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const source = raw.replace(/\r$/, '');
    if (source.trim() === '') return;
    const bytes = Buffer.byteLength(source, 'utf8');
    if (bytes > MAX_RECORD_BYTES) {
      const largest = largestField(source);
      errors.push({
        file,
        line,
        ...(largest !== undefined ? { field: largest } : {}),
        message: `the example is ${formatBytes(bytes)}, above the limit of ${formatBytes(MAX_RECORD_BYTES)} per example${largest !== undefined ? ` (most of it in "${largest}")` : ''}`,
      });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      errors.push({ file, line, message: `invalid JSON: ${(error as Error).message}` });
      return;
    }
    const { example, issues } = recordIssues(value, format);
    for (const issue of issues) {
      errors.push({
        file,
        line,
        ...(issue.path.length > 0 ? { field: formatFieldPath(issue.path) } : {}),
        message: issue.message,
      });
    }
    const id = idOf(value);
    if (id !== undefined) {
      const first = firstLineOfId.get(id);
      if (first !== undefined)
        errors.push({ file, line, field: 'id', message: `duplicate id "${id}" (first on line ${first})` });
      else firstLineOfId.set(id, line);
    }
    if (example !== undefined) {
      examples.push(example);
      lines.push(line);
    }
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, examples, lines };
}

/** Line of the deepest node along `path` (the key's line for a mapping entry). */
function lineOfPath(document: Document, lineCounter: LineCounter, path: readonly PathSegment[]): number | undefined {
  const lineOf = (node: unknown): number | undefined => {
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    return range === undefined ? undefined : lineCounter.linePos(range[0]).line;
  };
  let node: unknown = document.contents;
  let line = lineOf(node);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => String(isScalar(item.key) ? item.key.value : item.key) === String(segment),
      );
      if (pair === undefined) break;
      line = lineOf(pair.key) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      if (node === undefined) break;
      line = lineOf(node) ?? line;
    } else break;
  }
  return line;
}

/**
 * A YAML (or JSON) corpus file read with the `yaml` parser (YAML 1.2 core
 * schema, duplicate keys refused): one located document gives the values, the
 * line each record starts on, and the line and field of every problem.
 */
function parseYaml(text: string, file: string, format: ExampleFormat): LocatedCorpusFileResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    return {
      ok: false,
      errors: document.errors.map((error) => ({
        file,
        ...(error.linePos?.[0] === undefined ? {} : { line: error.linePos[0].line }),
        message: `invalid YAML: ${error.message.split('\n')[0] ?? error.message}`,
      })),
    };
  }
  const root = document.contents;
  if (root === null) return { ok: true, examples: [], lines: [] };
  const locate = (path: readonly PathSegment[]): number | undefined => lineOfPath(document, lineCounter, path);
  const { prefix, errors } = yamlShape(root, file, locate);
  if (errors.length > 0) return { ok: false, errors };
  const values = (
    prefix.length === 0 ? document.toJS() : (document.toJS() as { examples: unknown }).examples
  ) as unknown[];
  return yamlRecords(values, prefix, { file, format, locate });
}

/** Where the records are (`[]`: the root list, `['examples']`: under that key) and the errors of the file's shape. */
function yamlShape(
  root: NonNullable<Document['contents']>,
  file: string,
  locate: (path: readonly PathSegment[]) => number | undefined,
): { prefix: PathSegment[]; errors: CorpusFileError[] } {
  const errors: CorpusFileError[] = [];
  if (isMap(root)) {
    for (const pair of root.items) {
      const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
      if (key !== 'examples') {
        errors.push({
          file,
          ...withLine(locate([key])),
          field: key,
          message: `unknown top-level field "${key}" (expected only "examples")`,
        });
      }
    }
    if (!isSeq(root.get('examples', true))) {
      errors.push({
        file,
        ...withLine(locate(['examples'])),
        field: 'examples',
        message: '"examples" must be a list of examples',
      });
    }
    return { prefix: ['examples'], errors };
  }
  if (!isSeq(root)) {
    errors.push({
      file,
      ...withLine(locate([])),
      message: 'the file must hold a list of examples or a mapping with "examples"',
    });
  }
  return { prefix: [], errors };
}

/** Checks each record (fields, duplicate ids) and keeps the valid ones with the line each starts on. */
function yamlRecords(
  values: unknown[],
  prefix: readonly PathSegment[],
  context: { file: string; format: ExampleFormat; locate: (path: readonly PathSegment[]) => number | undefined },
): LocatedCorpusFileResult {
  const { file, format, locate } = context;
  const errors: CorpusFileError[] = [];
  const examples: Example[] = [];
  const lines: Array<number | undefined> = [];
  const firstLineOfId = new Map<string, number | undefined>();
  values.forEach((value, index) => {
    const recordPath = [...prefix, index];
    const { example, issues } = recordIssues(value, format);
    for (const issue of issues) {
      errors.push({
        file,
        ...withLine(locate([...recordPath, ...issue.path])),
        ...(issue.path.length > 0 ? { field: formatFieldPath(issue.path) } : {}),
        message: issue.message,
      });
    }
    const id = idOf(value);
    if (id !== undefined) {
      const line = locate([...recordPath, 'id']);
      if (firstLineOfId.has(id)) {
        const first = firstLineOfId.get(id);
        errors.push({
          file,
          ...withLine(line),
          field: 'id',
          message: `duplicate id "${id}"${first === undefined ? '' : ` (first on line ${first})`}`,
        });
      } else firstLineOfId.set(id, line);
    }
    if (example !== undefined) {
      examples.push(example);
      lines.push(locate(recordPath));
    }
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, examples, lines };
}

function withLine(line: number | undefined): { line?: number } {
  return line === undefined ? {} : { line };
}

/** The result without the lines (the shape of {@link CorpusFileResult}). */
function withoutLines(result: LocatedCorpusFileResult): CorpusFileResult {
  return result.ok ? { ok: true, examples: result.examples } : result;
}

/** {@link parsePublicFormat}, with the line each record starts on. */
function parseLocated(
  content: string | Uint8Array,
  format: PublicFormat,
  file: string,
  records: ExampleFormat,
): LocatedCorpusFileResult {
  let text: string;
  if (typeof content === 'string') text = content.replace(/^\uFEFF/, '');
  else {
    const decoded = decodeUtf8(content, file);
    if ('error' in decoded) return { ok: false, errors: [decoded.error] };
    text = decoded.text;
  }
  return format === 'jsonl' ? parseJsonLines(text, file, records) : parseYaml(text, file, records);
}

/**
 * Parses the content of a corpus file. `file` is only used in error reports.
 * A string is taken as already decoded; bytes are decoded as strict UTF-8.
 *
 * @param records how a record is read (the study task's schemas and input
 *   field); default the intent format (`goal` records)
 */
export function parsePublicFormat(
  content: string | Uint8Array,
  format: PublicFormat,
  file: string,
  records: ExampleFormat = INTENT_EXAMPLE_FORMAT,
): CorpusFileResult {
  return withoutLines(parseLocated(content, format, file, records));
}

/** {@link importPublicFormat}, with the line each record starts on. */
function importLocated(path: string, format: PublicFormat, records: ExampleFormat): LocatedCorpusFileResult {
  let bytes: Uint8Array;
  try {
    const size = statSync(path).size;
    if (size > MAX_CORPUS_FILE_BYTES) {
      return {
        ok: false,
        errors: [
          {
            file: path,
            message: `the file is ${formatBytes(size)}, above the limit of ${formatBytes(MAX_CORPUS_FILE_BYTES)} per corpus file; split it`,
          },
        ],
      };
    }
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      errors: [
        {
          file: path,
          message: code === 'ENOENT' ? 'the file does not exist' : `cannot read: ${(error as Error).message}`,
        },
      ],
    };
  }
  return parseLocated(bytes, format, path, records);
}

/** Reads a corpus file in the given syntax (records read by `records`, default the intent format). A file that cannot be read is reported as an error. */
export function importPublicFormat(
  path: string,
  format: PublicFormat,
  records: ExampleFormat = INTENT_EXAMPLE_FORMAT,
): CorpusFileResult {
  return withoutLines(importLocated(path, format, records));
}

/** The syntax of a corpus file from its extension: `.jsonl` → jsonl; `.yaml`, `.yml`, `.json` → yaml. */
export function corpusFormatOf(path: string): PublicFormat | undefined {
  const extension = /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase();
  if (extension === 'jsonl') return 'jsonl';
  if (extension === 'yaml' || extension === 'yml' || extension === 'json') return 'yaml';
  return undefined;
}

/** Reads a corpus file, choosing the syntax by extension (`.yaml`, `.yml`, `.jsonl`, `.json`); records are read by `records` (default the intent format). */
export function readCorpusFile(path: string, records: ExampleFormat = INTENT_EXAMPLE_FORMAT): CorpusFileResult {
  return withoutLines(readLocatedCorpusFile(path, records));
}

/**
 * {@link readCorpusFile}, with the 1-based line each example's record starts
 * on (`lines[i]` for `examples[i]`), from the same single parse: the line of
 * a JSON Lines record, the line of a YAML list item (where its first key, or
 * its opening bracket, is), as `readCandidateRecords` in
 * `src/corpus/admission.ts` gives them. The study loader names records by
 * `file:line` with them.
 */
export function readLocatedCorpusFile(
  path: string,
  records: ExampleFormat = INTENT_EXAMPLE_FORMAT,
): LocatedCorpusFileResult {
  const format = corpusFormatOf(path);
  if (format === undefined) {
    return {
      ok: false,
      errors: [{ file: path, message: `${path}: unknown corpus file extension (use .yaml, .yml, .jsonl or .json)` }],
    };
  }
  return importLocated(path, format, records);
}
