/**
 * Reads and writes the search space's parameters in a YAML or JSON
 * artifact, by dotted path. YAML keeps its comments, key order and layout
 * (the `yaml` package's Document); JSON is re-printed with the incumbent's
 * indentation and final newline.
 *
 * @module
 */
import { isScalar, parseDocument, stringify } from 'yaml';
import type { Params, ParamValue, SearchSpace } from './space.ts';

/** Why an artifact's parameters cannot be read. */
export class ParamsFileError extends Error {}

/** The artifact's format, by its file extension (`.json` is JSON, anything else YAML, of which JSON is a subset). */
export type ParamsFormat = 'yaml' | 'json';

export function formatOf(artifactFile: string): ParamsFormat {
  return artifactFile.toLowerCase().endsWith('.json') ? 'json' : 'yaml';
}

function keysOf(path: string): string[] {
  return path.split('.');
}

function getIn(root: unknown, keys: readonly string[]): unknown {
  let node = root;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function parseJson(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ParamsFileError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ParamsFileError(`${file} must hold a JSON object of parameters`);
  return value as Record<string, unknown>;
}

/**
 * The values of the space's parameters in the artifact's text.
 *
 * @throws ParamsFileError when the text does not parse, or a parameter's path is missing or holds no scalar
 */
export function readParams(text: string, space: SearchSpace, file: string, format: ParamsFormat): Params {
  let root: unknown;
  if (format === 'json') {
    root = parseJson(text, file);
  } else {
    const document = parseDocument(text);
    if (document.errors.length > 0)
      throw new ParamsFileError(`${file} is not valid YAML: ${document.errors[0]!.message.split('\n')[0]}`);
    root = document.toJS();
  }
  const params: Params = {};
  for (const path of Object.keys(space)) {
    const value = getIn(root, keysOf(path));
    if (typeof value !== 'number' && typeof value !== 'string' && typeof value !== 'boolean') {
      throw new ParamsFileError(
        `${file} has no value at ${path} (proposer.space names it): ${value === undefined ? 'the key is missing' : 'it is not a number, string or boolean'}`,
      );
    }
    params[path] = value;
  }
  return params;
}

/**
 * The artifact's text with the parameters set (paths must exist: read them with {@link readParams} first).
 *
 * @throws ParamsFileError when a path holds no scalar
 */
export function writeParams(text: string, params: Params, format: ParamsFormat): string {
  if (format === 'json') {
    const root = JSON.parse(text) as Record<string, unknown>;
    for (const [path, value] of Object.entries(params)) {
      const keys = keysOf(path);
      const parent = getIn(root, keys.slice(0, -1)) as Record<string, ParamValue>;
      parent[keys.at(-1)!] = value;
    }
    const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
    return JSON.stringify(root, null, indent) + (text.endsWith('\n') ? '\n' : '');
  }
  // Each value's characters are replaced in place, so comments, alignment and every other byte stay as written.
  const document = parseDocument(text);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const [path, value] of Object.entries(params)) {
    const node = document.getIn(keysOf(path), true);
    if (!isScalar(node) || node.range == null) throw new ParamsFileError(`no scalar value at ${path}`);
    edits.push({ start: node.range[0], end: node.range[1], text: stringify(value).trimEnd() });
  }
  let result = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  return result;
}
