/**
 * Structured edits of a JSON or YAML artifact, for the reflective proposer:
 * each edit replaces the value of one top-level key (the artifact's
 * "section", as `composeSectionsOf` splits a data file) with a value the
 * model writes as JSON (or YAML), which is parsed before anything becomes a
 * candidate. The result is re-printed as the same format and checked to
 * parse, so a candidate is always a readable file: a value that does not
 * parse, a file that is not an object, a key edited twice is a failure
 * naming the key and the parser's message, never a broken artifact handed to
 * the program.
 *
 * JSON keeps the incumbent's indentation and final newline and its key order
 * (a new key goes last); YAML keeps comments and layout outside the edited
 * keys (the `yaml` package's Document).
 *
 * @module
 */
import { parseDocument } from 'yaml';
import { markdownSectionSpans } from '../artifact/markdown-sections.ts';
import { changeText, lineChanges } from '../artifact/three-way-merge.ts';

/** How the reflective proposer edits an artifact: markdown `##` sections, or the top-level keys of a JSON or YAML file. */
export type ArtifactFormat = 'markdown' | 'json' | 'yaml';

/**
 * The format of an artifact by its file name: `.json` JSON; `.yaml`, `.yml` YAML; anything else markdown.
 *
 * @example
 * ```ts
 * artifactFormatOf('rules.json'); // 'json'
 * ```
 */
export function artifactFormatOf(file: string | undefined): ArtifactFormat {
  const name = (file ?? '').toLowerCase();
  if (name.endsWith('.json')) return 'json';
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'yaml';
  return 'markdown';
}

/** One edit: the top-level key and its new value, as JSON (or YAML) text. */
export interface KeyReplacement {
  key: string;
  value: string;
}

export type DataEditResult = { ok: true; text: string } | { ok: false; message: string };

/** The top-level object of a JSON or YAML text, or why it is not one. */
export function readDataObject(
  text: string,
  format: 'json' | 'yaml',
  file: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  if (format === 'json') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { ok: false, message: `${file} is not valid JSON: ${(error as Error).message}` };
    }
  } else {
    const document = parseDocument(text);
    if (document.errors.length > 0)
      return { ok: false, message: `${file} is not valid YAML: ${document.errors[0]!.message.split('\n')[0]}` };
    value = document.toJS();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      message: `${file} does not hold a ${format === 'json' ? 'JSON' : 'YAML'} object of named keys`,
    };
  return { ok: true, value: value as Record<string, unknown> };
}

/** A value the model wrote: JSON first (both formats), then YAML for a YAML artifact. */
function parseValue(
  text: string,
  format: 'json' | 'yaml',
): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    if (format === 'json') return { ok: false, message: (error as Error).message };
  }
  const document = parseDocument(text);
  if (document.errors.length > 0) return { ok: false, message: document.errors[0]!.message.split('\n')[0]! };
  return { ok: true, value: document.toJS() };
}

function indentOf(text: string): string | number {
  const line = /\n([ \t]+)\S/.exec(text);
  return line?.[1] ?? 2;
}

/**
 * The artifact with each key's value replaced. A key the file does not have
 * is added only when `allowNew`.
 *
 * @param file the artifact's file name, for the messages (e.g. `rules.json`)
 * @example
 * ```ts
 * replaceKeys('{\n  "a": 1\n}\n', [{ key: 'a', value: '2' }], 'json', 'params.json'); // { ok: true, text: '{\n  "a": 2\n}\n' }
 * ```
 */
export function replaceKeys(
  text: string,
  replacements: readonly KeyReplacement[],
  format: 'json' | 'yaml',
  file: string,
  allowNew = false,
): DataEditResult {
  const incumbent = readDataObject(text, format, file);
  if (!incumbent.ok) return incumbent;
  const seen = new Set<string>();
  const values = new Map<string, unknown>();
  for (const replacement of replacements) {
    const key = replacement.key.trim();
    if (seen.has(key)) return { ok: false, message: `key "${key}" is replaced twice` };
    seen.add(key);
    if (!Object.hasOwn(incumbent.value, key) && !allowNew)
      return {
        ok: false,
        message: `${file} has no top-level key "${key}" (its keys: ${Object.keys(incumbent.value)
          .map((name) => `"${name}"`)
          .join(', ')})`,
      };
    const parsed = parseValue(replacement.value, format);
    if (!parsed.ok)
      return {
        ok: false,
        message: `the new value of "${key}" is not ${format === 'json' ? 'JSON' : 'YAML'}: ${parsed.message}`,
      };
    values.set(key, parsed.value);
  }
  let result: string;
  if (format === 'json') {
    const object = { ...incumbent.value };
    for (const [key, value] of values) object[key] = value;
    result = `${JSON.stringify(object, null, indentOf(text))}${text.endsWith('\n') ? '\n' : ''}`;
  } else {
    const document = parseDocument(text);
    for (const [key, value] of values) document.set(key, document.createNode(value));
    result = document.toString();
  }
  // Re-read what will be the candidate: a candidate is always a file its program can parse.
  const check = readDataObject(result, format, file);
  return check.ok ? { ok: true, text: result } : check;
}

/**
 * Per replaced key of a JSON or YAML file, the lines of its value (printed as indented JSON, without trailing commas) the candidate adds (`+ `) and removes (`- `), under `## <key>`.
 */
export function describeKeyChanges(
  before: string,
  after: string,
  keys: readonly string[],
  format: 'json' | 'yaml',
): string {
  const valueLines = (text: string, key: string): string => {
    const read = readDataObject(text, format, '');
    if (!read.ok || !Object.hasOwn(read.value, key)) return '';
    // Without trailing commas: an element that gains a successor is the same line.
    return JSON.stringify(read.value[key], null, 2).replace(/,$/gm, '');
  };
  return keys
    .map((key) => {
      const change = changeText(lineChanges(valueLines(before, key), valueLines(after, key)));
      return `## ${key}\n${change === '' ? '(reformatted, same value)' : change}`;
    })
    .join('\n\n');
}

/** The names of the artifact's sections: its `##` headings, or a data file's top-level keys (none when it cannot be read). */
export function artifactSectionNames(text: string, format: ArtifactFormat, file: string): string[] {
  if (format !== 'markdown') {
    const read = readDataObject(text, format, file);
    return read.ok ? Object.keys(read.value) : [];
  }
  try {
    return markdownSectionSpans(text).map((span) => span.name);
  } catch {
    return [];
  }
}
