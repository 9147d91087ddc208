/**
 * Problems in a playbook file: their shape, how they print, and where in the
 * YAML text a schema issue's path points (line and column, 1-based).
 */
import { isMap, isPair, isScalar, isSeq } from 'yaml';
import type { LineCounter, Node as YamlNode, parseDocument } from 'yaml';

/** One problem in a playbook file. `line` and `column` are 1-based (0 when unknown). */
export interface PlaybookError {
  file?: string;
  line: number;
  column: number;
  /** Section/key path, e.g. `appTypeCues.booking[2]`; empty for the whole file. */
  path: string;
  message: string;
}

/** `file:line path: message`, for terminals and logs. */
export function formatPlaybookError(error: PlaybookError): string {
  const where = `${error.file ?? 'playbook'}:${error.line}${error.column > 0 ? `:${error.column}` : ''}`;
  return `${where}${error.path ? ` ${error.path}` : ''}: ${error.message}`;
}

/** `appTypeCues.booking[2]`, `entityTerms["time slot"]`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** The line of the deepest YAML node on `path` (the key node when `preferKey`). */
export function locate(
  doc: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
  path: ReadonlyArray<string | number>,
  preferKey: boolean,
): { line: number; column: number } {
  let node: unknown = doc.contents;
  let found: YamlNode | null = isScalar(node) || isMap(node) || isSeq(node) ? (node as YamlNode) : null;
  path.forEach((segment, index) => {
    const last = index === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) {
        node = undefined;
        return;
      }
      const keyNode = pair.key as YamlNode;
      const valueNode = pair.value as YamlNode | null;
      found = last && preferKey ? keyNode : (valueNode ?? keyNode);
      node = valueNode;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as YamlNode | undefined;
      if (item === undefined) {
        node = undefined;
        return;
      }
      found = item;
      node = item;
    } else {
      node = undefined;
    }
  });
  const offset = (found as YamlNode | null)?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const position = lineCounter.linePos(offset);
  return { line: position.line, column: position.col };
}
