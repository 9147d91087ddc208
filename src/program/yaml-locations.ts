/**
 * YAML parsing that remembers where every value came from, and zod
 * validation whose errors name the file, the line and the field.
 *
 * Used for `kloop.yaml` and for the mechanical constraints block of
 * `program.md` (whose lines are offset by the block's position in the file).
 * Errors are {@link InputError}s: `<file>:<line>: <field>: <message>`.
 */
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { InputError } from '../errors.ts';

/** A parsed YAML document with a way back from a value's path to its line. */
export interface LocatedYaml {
  /** The plain JavaScript value of the document (`null` for an empty document). */
  value: unknown;
  /**
   * 1-based line of the value at `path` in the original file; when the path
   * does not exist, the line of its nearest existing ancestor.
   */
  lineOf(path: readonly PropertyKey[]): number;
  /** 1-based line of the key `key` in the mapping at `path`, or the mapping's line. */
  keyLineOf(path: readonly PropertyKey[], key: string): number;
}

/** Where a YAML text came from, for error messages. */
export interface YamlSource {
  /** File name used in messages. */
  file: string;
  /** Lines before the YAML text in `file` (a fenced block inside markdown). Default 0. */
  lineOffset?: number;
}

/**
 * Parses YAML text, keeping node positions.
 *
 * @throws InputError on a syntax error or a duplicate key, with its line
 */
export function parseLocatedYaml(text: string, source: YamlSource): LocatedYaml {
  const lineOffset = source.lineOffset ?? 0;
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const firstError = document.errors[0];
  if (firstError !== undefined) {
    const line = (firstError.linePos?.[0].line ?? 1) + lineOffset;
    // yaml's pretty message is "… at line 2, column 1:" and a code frame; the frame is dropped, and with it the colon that led to it.
    const summary = (firstError.message.split('\n')[0] ?? firstError.message).replace(/:\s*$/, '');
    throw new InputError(`malformed YAML: ${summary}`, { file: source.file, line, code: 'input.yaml_syntax' });
  }
  const lineAt = (offset: number | undefined): number =>
    (offset === undefined ? 1 : lineCounter.linePos(offset).line) + lineOffset;
  const startLine = document.contents?.range?.[0];

  const nodeAt = (path: readonly PropertyKey[]): { node: unknown; depth: number } => {
    for (let depth = path.length; depth > 0; depth -= 1) {
      const node = document.getIn(path.slice(0, depth) as unknown[], true);
      if (node !== undefined && node !== null) return { node, depth };
    }
    return { node: document.contents, depth: 0 };
  };
  const rangeStart = (node: unknown): number | undefined => {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range?.[0];
  };

  return {
    value: safeToJs(document, source),
    lineOf(path) {
      const { node } = nodeAt(path);
      return lineAt(rangeStart(node) ?? startLine);
    },
    keyLineOf(path, key) {
      const container = path.length === 0 ? document.contents : document.getIn(path as unknown[], true);
      if (isMap(container)) {
        for (const pair of container.items) {
          if (isScalar(pair.key) && String(pair.key.value) === key) return lineAt(rangeStart(pair.key));
        }
      }
      return lineAt(rangeStart(container) ?? startLine);
    },
  };
}

function safeToJs(document: Document, source: YamlSource): unknown {
  try {
    return document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new InputError(`malformed YAML: ${(error as Error).message}`, {
      file: source.file,
      line: 1 + (source.lineOffset ?? 0),
      code: 'input.yaml_syntax',
    });
  }
}

/** Formats a zod issue path as a field name: `gate.alpha`, `corpus[2]`. */
export function fieldName(path: readonly PropertyKey[], prefix = ''): string {
  let field = prefix;
  for (const segment of path) {
    if (typeof segment === 'number') field += `[${segment}]`;
    else field += field === '' ? String(segment) : `.${String(segment)}`;
  }
  return field;
}

/** One located problem found while validating. */
export interface LocatedIssue {
  line: number;
  field: string;
  message: string;
}

/**
 * Validates `located.value` with a zod schema (use strict objects so unknown
 * keys are errors). Returns the parsed value.
 *
 * @param fieldPrefix prepended to every field name (e.g. `constraints`)
 * @throws InputError naming the file, the line and the field of the first
 *   problem (by line); further problems are listed in the message
 */
export function parseWithSchema<Schema extends z.ZodType>(
  schema: Schema,
  located: LocatedYaml,
  source: YamlSource,
  fieldPrefix = '',
): z.output<Schema> {
  // reportInput: an issue carries the value it is about, so a wrong type is told from a missing key.
  const result = schema.safeParse(located.value, { reportInput: true });
  if (result.success) return result.data;
  const issues: LocatedIssue[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path;
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(schema, path);
      for (const key of issue.keys) {
        issues.push({
          line: located.keyLineOf(path, key),
          field: fieldName([...path, key], fieldPrefix),
          message: `unknown key "${key}"${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`,
        });
      }
    } else {
      issues.push({ line: located.lineOf(path), field: fieldName(path, fieldPrefix), message: describeIssue(issue) });
    }
  }
  issues.sort((left, right) => left.line - right.line);
  const [first, ...rest] = issues;
  if (first === undefined) throw new InputError('invalid content', { file: source.file });
  const more = rest
    .map(
      (issue) =>
        `\n  also ${source.file}:${issue.line}: ${issue.field === '' ? '' : `${issue.field}: `}${issue.message}`,
    )
    .join('');
  throw new InputError(`${first.message}${more}`, {
    file: source.file,
    line: first.line,
    field: first.field === '' ? '(document)' : first.field,
    code: 'input.invalid_field',
  });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return `required (expected ${issue.expected})`;
  return issue.message;
}

type SchemaDefinition = {
  type?: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
};

/** Keys a strict object schema accepts at `path`, for "allowed: ..." hints. Empty when unknown. */
function allowedKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  let current: unknown = schema;
  const unwrap = (value: unknown): SchemaDefinition | undefined => {
    let definition = (value as { _zod?: { def?: SchemaDefinition } } | undefined)?._zod?.def;
    for (let guard = 0; definition !== undefined && guard < 20; guard += 1) {
      if (
        definition.type === 'optional' ||
        definition.type === 'default' ||
        definition.type === 'prefault' ||
        definition.type === 'nullable'
      ) {
        definition = (definition.innerType as { _zod?: { def?: SchemaDefinition } } | undefined)?._zod?.def;
      } else if (definition.type === 'pipe') {
        definition = (definition.in as { _zod?: { def?: SchemaDefinition } } | undefined)?._zod?.def;
      } else break;
    }
    return definition;
  };
  for (const segment of path) {
    const definition = unwrap(current);
    if (definition?.type === 'object' && typeof segment === 'string') current = definition.shape?.[segment];
    else if (definition?.type === 'array') current = definition.element;
    else return [];
  }
  const definition = unwrap(current);
  return definition?.type === 'object' && definition.shape !== undefined ? Object.keys(definition.shape) : [];
}
