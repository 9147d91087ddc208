/**
 * The top-level sections of a playbook text as character spans (a section's
 * column-0 comment block included), and the text of each: what playbook edits
 * (./playbook-edit.ts) rewrite and what section diffs compare.
 */
import { isMap, isScalar } from 'yaml';
import { PREAMBLE_SECTION, playbookDocument } from './playbook.ts';

/** Character span of one section in the playbook text. */
export interface SectionSpan {
  name: string;
  /** Offset of the first character (its leading column-0 comment block included). */
  start: number;
  /** Offset just past the last character (the next section's start, or the text's end). */
  end: number;
}

/**
 * Splits a playbook text into top-level sections. A section starts at its key
 * line, moved up over the column-0 comment lines directly above it; it ends
 * where the next section starts. Text before the first section (a header
 * comment) is reported as {@link PREAMBLE_SECTION} when not blank.
 *
 * @returns the spans in file order, or null when the text is not a YAML mapping
 */
export function playbookSectionSpans(text: string): readonly SectionSpan[] | null {
  const cached = spansCache.get(text);
  if (cached !== undefined) return cached;
  const spans = readSectionSpans(text);
  if (spansCache.size >= SPANS_CACHE_LIMIT) spansCache.delete(spansCache.keys().next().value!);
  spansCache.set(text, spans);
  return spans;
}

/**
 * Spans of recent texts: the gate splits the incumbent and each candidate to
 * check the editable sections, the editor splits the text it edits, and the
 * same incumbent comes back for every candidate of a round. Entries are
 * frozen (callers share them).
 */
const spansCache = new Map<string, readonly SectionSpan[] | null>();
const SPANS_CACHE_LIMIT = 32;

function readSectionSpans(text: string): readonly SectionSpan[] | null {
  const { doc } = playbookDocument(text);
  if (doc.errors.length > 0) return null;
  const contents = doc.contents;
  if (contents === null) return Object.freeze([]);
  if (!isMap(contents)) return null;
  const starts: Array<{ name: string; start: number }> = [];
  for (const pair of contents.items) {
    const key = pair.key;
    if (!isScalar(key) || key.range === undefined || key.range === null) return null;
    starts.push({ name: String(key.value), start: commentBlockStart(text, lineStart(text, key.range[0])) });
  }
  const spans: SectionSpan[] = [];
  const first = starts[0]?.start ?? text.length;
  if (text.slice(0, first).trim() !== '') spans.push(Object.freeze({ name: PREAMBLE_SECTION, start: 0, end: first }));
  starts.forEach((entry, index) => {
    spans.push(Object.freeze({ name: entry.name, start: entry.start, end: starts[index + 1]?.start ?? text.length }));
  });
  return Object.freeze(spans);
}

/**
 * Section name → its exact text (see {@link playbookSectionSpans}), for the
 * generic editable-region check: two versions differ in a section iff the
 * section's texts differ.
 *
 * @returns null when the text is not a YAML mapping
 */
export function playbookSections(text: string): Record<string, string> | null {
  const spans = playbookSectionSpans(text);
  if (spans === null) return null;
  const sections: Record<string, string> = {};
  for (const span of spans) sections[span.name] = text.slice(span.start, span.end);
  return sections;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Moves a line start up over directly preceding column-0 comment lines. */
function commentBlockStart(text: string, start: number): number {
  let current = start;
  while (current > 0) {
    const previous = lineStart(text, current - 1);
    if (!text.startsWith('#', previous)) break;
    current = previous;
  }
  return current;
}
