/**
 * Rendering an edited routing-rules document back to text (./rules-edit.ts
 * edits it): a JSON file stays JSON with its indentation; a YAML file keeps
 * its untouched lines, through a three-way merge when the YAML library would
 * re-render them.
 */
import { parseDocument, type Document } from 'yaml';
import { rebaseText } from '../../artifact/three-way-merge.ts';
import { safeParseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';

export const RENDER_OPTIONS = { lineWidth: 0, flowCollectionPadding: false } as const;

/**
 * The edited document as text, best first: a JSON file stays JSON (with its
 * indentation); a YAML file keeps its untouched lines (through a three-way
 * merge when the library would re-render them), else the plain rendering.
 */
export function renderings(original: string, edited: Document, base: string | null): string[] {
  if (base === null) {
    const indent = /\n( +|\t)"/.exec(original)?.[1] ?? (original.trimEnd().includes('\n') ? 2 : 0);
    const value = edited.toJS() as unknown;
    const json = JSON.stringify(value, null, indent);
    const plain = original.endsWith('\n') ? `${json}\n` : json;
    const kept = keepRuleLines(original, value);
    return kept !== null && kept !== plain ? [kept, plain] : [plain];
  }
  const rendered = edited.toString(RENDER_OPTIONS);
  return base === original ? [rendered] : [rebaseText(base, rendered, original).text, rendered];
}

/**
 * A JSON rules file written one rule per line (`{ "id": "billing", "queue":
 * "billing", "any": ["refund"] },`), edited in that layout: the lines of the
 * rules that changed are rewritten in the style of their neighbours, an added
 * rule gets a line of its own and a removed one loses its line; every other
 * line is kept byte for byte. A re-indented rendering would change every line
 * of such a file, so every candidate's delta would be the whole file and the
 * candidates near-duplicates of one another.
 *
 * @returns the text, or null when the file is not in that layout or the edit
 *   reaches beyond the rules (the caller then renders the whole file)
 */
function keepRuleLines(original: string, edited: unknown): string | null {
  let before: unknown;
  try {
    before = JSON.parse(original);
  } catch {
    return null;
  }
  if (!isRecord(before) || !isRecord(edited) || !Array.isArray(before.rules) || !Array.isArray(edited.rules))
    return null;
  const { rules: oldRules, ...oldRest } = before;
  const { rules: newRules, ...newRest } = edited;
  if (JSON.stringify(oldRest) !== JSON.stringify(newRest)) return null;
  const lines = original.split('\n');
  // The line of each rule: one line that is that rule's JSON alone (and a comma), in order.
  const at: number[] = [];
  let from = 0;
  for (const rule of oldRules as unknown[]) {
    const index = lines.findIndex((line, position) => position >= from && lineValue(line) === JSON.stringify(rule));
    if (index < 0) return null;
    at.push(index);
    from = index + 1;
  }
  if (at.length === 0 || at.some((line, position) => position > 0 && line !== at[position - 1]! + 1)) return null;
  const sample = lines[at[0]!]!;
  const indentation = /^\s*/.exec(sample)![0];
  const spaced = /\{ "/.test(sample);
  const render = (rule: unknown): string => {
    const compact = JSON.stringify(rule);
    return spaced
      ? compact
          .replace(/("(?:[^"\\]|\\.)*")|([,:])/g, (match, string: string | undefined) =>
            string !== undefined ? match : `${match} `,
          )
          .replace(/^\{/, '{ ')
          .replace(/\}$/, ' }')
      : compact;
  };
  const oldTexts = (oldRules as unknown[]).map((rule) => JSON.stringify(rule));
  const ruleLines = (newRules as unknown[]).map((rule, position) => {
    const same = oldTexts.indexOf(JSON.stringify(rule));
    const text = same >= 0 ? lineValueText(lines[at[same]!]!) : render(rule);
    return `${indentation}${text}${position < newRules.length - 1 ? ',' : ''}`;
  });
  const rebuilt = [...lines.slice(0, at[0]), ...ruleLines, ...lines.slice(at[at.length - 1]! + 1)].join('\n');
  try {
    return JSON.stringify(JSON.parse(rebuilt)) === JSON.stringify(edited) ? rebuilt : null;
  } catch {
    return null;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A line's JSON without its indentation and trailing comma. */
function lineValueText(line: string): string {
  return line.trim().replace(/,$/, '');
}

/** The compact JSON of the value a line holds alone, or null. */
function lineValue(line: string): string | null {
  const text = lineValueText(line);
  if (!text.startsWith('{')) return null;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The last text edited, parsed, with its plain rendering (null for JSON): a proposer applies many edits to one incumbent. */
export interface ParsedSource {
  text: string;
  parsed: ReturnType<typeof safeParseRoutingRules>;
  /** The parsed document; each edit works on a clone. */
  document: Document;
  base: string | null;
}
let lastSource: ParsedSource | undefined;

export function sourceOf(text: string): ParsedSource {
  if (lastSource?.text !== text) {
    const parsed = safeParseRoutingRules(text);
    const document = parseDocument(text, { uniqueKeys: true });
    const base = !parsed.ok || isJson(text) ? null : document.toString(RENDER_OPTIONS);
    lastSource = { text, parsed, document, base };
  }
  return lastSource;
}

export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
