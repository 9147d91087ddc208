/**
 * The pattern library: the built-in patterns (YAML files in
 * `src/assembly/patterns/`) plus any user folders. A user adds a pattern by
 * dropping one `*.yaml` / `*.yml` file (one pattern per file, format in
 * `pattern.ts`) into a folder passed to {@link loadPatternLibrary}.
 *
 * Bad input never yields a half-loaded library: every problem of every file
 * is collected and thrown together as one {@link PatternLibraryError} whose
 * issues name the file, the 1-based line and the field path
 * (`entities[2].role`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { hasErrorMarker, InputError } from '../errors.ts';
import { patternSchema, type Pattern } from './pattern.ts';

/** The folder of the built-in patterns. */
export const BUILT_IN_PATTERN_DIRECTORY: string = fileURLToPath(new URL('./patterns/', import.meta.url));

/** A validated, immutable set of patterns with unique ids, in load order. */
export interface PatternLibrary {
  readonly patterns: readonly Pattern[];
  /** Pattern id → the file it was read from (absent for patterns built in code). */
  readonly sources: Readonly<Record<string, string>>;
}

/** One problem in a pattern file. */
export interface PatternIssue {
  /** Absolute path of the file (or folder) at fault. */
  file: string;
  /** 1-based line, when the problem has a place in the file. */
  line?: number;
  /** 1-based column, with `line`. */
  column?: number;
  /** Field path such as `entities[2].role`, when the problem is in one field. */
  field?: string;
  message: string;
}

const PATTERN_LIBRARY_ERROR = Symbol.for('kloop.error.pattern_library');

/**
 * Thrown when pattern files are missing, unparsable or invalid (an
 * {@link InputError}, exit code 2, code `pattern_library`). Its `file`, `line`
 * and `field` locate the first issue; `issues` lists every issue found and the
 * message has one line per issue.
 */
export class PatternLibraryError extends InputError {
  readonly [PATTERN_LIBRARY_ERROR] = true;
  readonly issues: readonly PatternIssue[];

  /** True when `value` is a {@link PatternLibraryError}, of any copy of kloop (a marker, src/errors.ts). */
  static override isInstance(value: unknown): value is PatternLibraryError {
    return hasErrorMarker(value, PATTERN_LIBRARY_ERROR);
  }

  constructor(issues: readonly PatternIssue[]) {
    const first = issues[0] ?? { file: '<pattern library>', message: 'invalid pattern library' };
    const more = issues.slice(1).map(formatPatternIssue);
    super([first.message, ...more].join('\n'), {
      code: 'pattern_library',
      file: first.file,
      ...(first.line !== undefined ? { line: first.line } : {}),
      ...(first.field !== undefined ? { field: first.field } : {}),
    });
    this.issues = issues;
  }
}

/** `file:line:column: field: message`, leaving out what is unknown. */
export function formatPatternIssue(issue: PatternIssue): string {
  let place = issue.file;
  if (issue.line !== undefined) place += `:${issue.line}`;
  if (issue.column !== undefined) place += `:${issue.column}`;
  return issue.field === undefined ? `${place}: ${issue.message}` : `${place}: ${issue.field}: ${issue.message}`;
}

/** The result of parsing one pattern file (zod's `safeParse` shape). */
export type PatternParseResult = { success: true; pattern: Pattern } | { success: false; issues: PatternIssue[] };

/**
 * Parse and validate the text of one pattern file. Never throws for bad input.
 *
 * @param text - YAML text (UTF-8, a leading BOM is ignored).
 * @param file - the name reported in issues.
 */
export function parsePatternText(text: string, file: string): PatternParseResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(text.replace(/^\uFEFF/, ''), { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    return {
      success: false,
      issues: document.errors.map((error) => {
        const position = lineCounter.linePos(error.pos[0]);
        return { file, line: position.line, column: position.col, message: `YAML: ${firstLine(error.message)}` };
      }),
    };
  }
  const parsed = patternSchema.safeParse(document.toJS());
  if (parsed.success) return { success: true, pattern: parsed.data };
  return {
    success: false,
    issues: parsed.error.issues.flatMap((issue) => locateIssue(issue, document, lineCounter, file)),
  };
}

/**
 * Validate patterns given in code (no files). Throws {@link PatternLibraryError}
 * when one is invalid or two share an id.
 */
export function createPatternLibrary(patterns: readonly unknown[]): PatternLibrary {
  const issues: PatternIssue[] = [];
  const valid: Pattern[] = [];
  patterns.forEach((input, index) => {
    const parsed = patternSchema.safeParse(input);
    if (parsed.success) valid.push(parsed.data);
    else {
      for (const issue of parsed.error.issues) {
        issues.push({ file: `<pattern ${index}>`, field: formatPath(issue.path), message: issue.message });
      }
    }
  });
  const library = assembleLibrary(
    valid.map((pattern) => ({ pattern })),
    issues,
  );
  if (issues.length > 0) throw new PatternLibraryError(issues);
  return library;
}

/** Options of {@link loadPatternLibrary}. */
export interface LoadPatternLibraryOptions {
  /** Read the built-in folder first. Default true. */
  includeBuiltIn?: boolean;
}

/**
 * Read the built-in patterns plus every `*.yaml`/`*.yml` file of the given
 * folders (not recursive; files in name order, folders in the given order).
 * Synchronous: libraries are a few dozen small files.
 *
 * @param directories - user pattern folders; each must exist.
 * @throws {PatternLibraryError} listing every problem (missing folder, YAML
 *   syntax, schema violation, duplicate id across files) with file, line and
 *   field; nothing is returned half-loaded.
 */
export function loadPatternLibrary(
  directories: readonly string[] = [],
  options: LoadPatternLibraryOptions = {},
): PatternLibrary {
  const folders = [...(options.includeBuiltIn === false ? [] : [BUILT_IN_PATTERN_DIRECTORY]), ...directories];
  const issues: PatternIssue[] = [];
  const loaded: { pattern: Pattern; file: string }[] = [];
  for (const folder of folders) {
    const directory = resolve(folder);
    if (!existsSync(directory) || !statSync(directory).isDirectory()) {
      issues.push({ file: directory, message: 'pattern folder not found' });
      continue;
    }
    const files = readdirSync(directory)
      .filter((name) => /\.ya?ml$/i.test(name))
      .sort();
    for (const name of files) {
      const file = join(directory, name);
      const result = parsePatternText(readFileSync(file, 'utf8'), file);
      if (result.success) loaded.push({ pattern: result.pattern, file });
      else issues.push(...result.issues);
    }
  }
  const library = assembleLibrary(loaded, issues);
  if (issues.length > 0) throw new PatternLibraryError(issues);
  return library;
}

/** The built-in library alone. */
export function loadBuiltInPatternLibrary(): PatternLibrary {
  return loadPatternLibrary([]);
}

function assembleLibrary(loaded: { pattern: Pattern; file?: string }[], issues: PatternIssue[]): PatternLibrary {
  const patterns: Pattern[] = [];
  const sources: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const { pattern, file } of loaded) {
    const where = file ?? '<code>';
    const previous = seen.get(pattern.id);
    if (previous !== undefined) {
      issues.push({
        file: where,
        field: 'id',
        message: `pattern id "${pattern.id}" is already defined in ${previous}`,
      });
      continue;
    }
    seen.set(pattern.id, where);
    patterns.push(pattern);
    if (file !== undefined) sources[pattern.id] = file;
  }
  return Object.freeze({ patterns: Object.freeze(patterns), sources: Object.freeze(sources) });
}

type ZodIssue = z.core.$ZodIssue;

/** One zod issue → issues with the line of the offending node (or of its nearest existing parent). */
function locateIssue(issue: ZodIssue, document: Document, lineCounter: LineCounter, file: string): PatternIssue[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      file,
      ...lineOf(document, lineCounter, [...path, key], true),
      field: formatPath([...path, key]),
      message: `unknown field "${key}"`,
    }));
  }
  return [{ file, ...lineOf(document, lineCounter, path, false), field: formatPath(path), message: issue.message }];
}

function lineOf(
  document: Document,
  lineCounter: LineCounter,
  path: readonly (string | number)[],
  atKey: boolean,
): { line?: number; column?: number } {
  for (let length = path.length; length >= 0; length -= 1) {
    const prefix = path.slice(0, length);
    let offset: number | undefined;
    if (atKey && length === path.length && length > 0) {
      const parent = prefix.length === 1 ? document.contents : document.getIn(prefix.slice(0, -1), true);
      if (isMap(parent)) {
        const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === prefix[prefix.length - 1]);
        if (pair !== undefined && isScalar(pair.key)) offset = pair.key.range?.[0];
      }
    } else {
      const node = length === 0 ? document.contents : document.getIn(prefix, true);
      if (node !== null && typeof node === 'object' && 'range' in node) {
        offset = (node as { range?: [number, number, number] | null }).range?.[0];
      }
    }
    if (offset !== undefined) {
      const position = lineCounter.linePos(offset);
      return { line: position.line, column: position.col };
    }
  }
  return {};
}

/** `['entities', 2, 'role']` → `entities[2].role`. */
function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text === '' ? '(root)' : text;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
