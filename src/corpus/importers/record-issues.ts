/**
 * Reading one corpus record of a public-format file (./public-format.ts):
 * UTF-8 decoding, the record's validation issues with their field paths, its
 * id, and its largest field (named when a record is too long).
 */
import type { z } from 'zod';
import type { Example } from '../example.ts';
import type { ExampleFormat } from '../example-format.ts';
import { characterCount } from '../../text/characters.ts';
import type { CorpusFileError } from '../corpus-file-error.ts';

type PathSegment = string | number;

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Formats a field path: `expected.entities[0].role`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/** Decodes UTF-8 strictly; on failure names the first line holding an invalid byte sequence. */
export function decodeUtf8(bytes: Uint8Array, file: string): { text: string } | { error: CorpusFileError } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '') };
  } catch {
    let line = 1;
    let start = 0;
    for (let index = 0; index <= bytes.length; index += 1) {
      if (index < bytes.length && bytes[index] !== 0x0a) continue;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, index));
      } catch {
        return {
          error: { file, line, message: `${file} is not valid UTF-8 (first invalid byte sequence on line ${line})` },
        };
      }
      line += 1;
      start = index + 1;
    }
    return { error: { file, message: `${file} is not valid UTF-8` } };
  }
}

export interface RecordIssue {
  path: PathSegment[];
  message: string;
}

/** Schema issues of one record, one per offending field (unknown keys are listed one by one). */
export function recordIssues(value: unknown, format: ExampleFormat): { example?: Example; issues: RecordIssue[] } {
  const parsed = format.parse(value);
  if (parsed.success) return { example: parsed.example, issues: [] };
  const issues: RecordIssue[] = [];
  for (const issue of parsed.issues as z.core.$ZodIssue[]) {
    const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: `unknown field "${key}"` });
    } else if (isMissing(value, path)) {
      issues.push({ path, message: `missing required field "${String(path.at(-1))}"` });
    } else if (issue.code === 'invalid_value') {
      issues.push({
        path,
        message: `unknown value ${JSON.stringify(valueAt(value, path))}; expected one of ${issue.values.map((allowed) => JSON.stringify(allowed)).join(', ')}`,
      });
    } else if (issue.code === 'too_big' && issue.origin === 'string') {
      const found = valueAt(value, path);
      issues.push({
        path,
        message: `${typeof found === 'string' ? `${characterCount(found)} characters` : 'too long'}, above the limit of ${String(issue.maximum)} characters`,
      });
    } else issues.push({ path, message: issue.message });
  }
  return { issues };
}

/** The value at `path` inside `value` (undefined when absent). */
export function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let node: unknown = value;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PathSegment, unknown>)[segment];
  }
  return node;
}

/** Whether `path` names a key its parent object does not have. */
export function isMissing(value: unknown, path: readonly PathSegment[]): boolean {
  if (path.length === 0) return false;
  let parent: unknown = value;
  for (const segment of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = (parent as Record<PathSegment, unknown>)[segment];
  }
  return typeof parent === 'object' && parent !== null && !Array.isArray(parent) && !(String(path.at(-1)) in parent);
}

export function idOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

/** The top-level field of a JSON record that takes the most room, when the record parses as an object. */
export function largestField(source: string): string | undefined {
  try {
    const value = JSON.parse(source) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    let best: { key: string; size: number } | undefined;
    for (const [key, field] of Object.entries(value)) {
      const size = JSON.stringify(field)?.length ?? 0;
      if (best === undefined || size > best.size) best = { key, size };
    }
    return best?.key;
  } catch {
    return undefined;
  }
}
