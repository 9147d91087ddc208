/**
 * Sections of a markdown prompt artifact: a section starts at a level-2
 * heading (`## Name`) and runs to the next one; deeper headings (`###`) stay
 * inside it, and headings inside fenced code blocks are not headings. Text
 * before the first `##` heading (a title, an introduction) is the section
 * {@link PREAMBLE_SECTION} when it is not blank.
 *
 * These are the editable regions of an LLM study: `editableSections` in
 * `program.md` lists section names, and the reflective proposer edits the
 * prompt by replacing whole sections.
 */

/** Name of the text before the first `##` heading (same name as the playbook's preamble). */
export const PREAMBLE_SECTION = '(preamble)';

/** Character span of one section. */
export interface MarkdownSectionSpan {
  name: string;
  /** Offset of the heading line (0 for the preamble). */
  start: number;
  /** Offset just past the section (the next heading's line, or the end of the text). */
  end: number;
}

const HEADING = /^ {0,3}##[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const ANY_HEADING = /^ {0,3}##(?:[ \t]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

interface Line {
  text: string;
  start: number;
  inFence: boolean;
}

function scanLines(text: string): { lines: Line[]; unclosedFence: boolean } {
  const lines: Line[] = [];
  let offset = 0;
  let open: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const fence = FENCE.exec(line);
    let inFence = open !== undefined;
    if (fence !== null) {
      if (open === undefined) {
        open = fence[1]!;
        inFence = true;
      } else if (fence[1]![0] === open[0] && fence[1]!.length >= open.length && fence[2]!.trim() === '') {
        open = undefined;
        inFence = true;
      }
    }
    lines.push({ text: line, start: offset, inFence });
    offset += raw.length + 1;
  }
  return { lines, unclosedFence: open !== undefined };
}

/**
 * Finds the sections of a markdown text, in order.
 *
 * @throws Error when two sections have the same name, or a heading is empty
 */
export function markdownSectionSpans(text: string): MarkdownSectionSpan[] {
  const { lines } = scanLines(text);
  const starts: Array<{ name: string; start: number }> = [];
  for (const line of lines) {
    if (line.inFence || !ANY_HEADING.test(line.text)) continue;
    const name = HEADING.exec(line.text)?.[1]?.trim() ?? '';
    if (name === '') throw new Error(`an empty "##" heading at offset ${line.start}`);
    if (name === PREAMBLE_SECTION || starts.some((entry) => entry.name === name))
      throw new Error(`two sections are named "${name}"`);
    starts.push({ name, start: line.start });
  }
  const spans: MarkdownSectionSpan[] = [];
  const first = starts[0]?.start ?? text.length;
  if (text.slice(0, first).trim() !== '') spans.push({ name: PREAMBLE_SECTION, start: 0, end: first });
  starts.forEach((entry, index) =>
    spans.push({ name: entry.name, start: entry.start, end: starts[index + 1]?.start ?? text.length }),
  );
  return spans;
}

/**
 * Section name → its exact text (heading line included), for the
 * editable-section constraint: two versions differ in a section iff the
 * texts differ.
 *
 * @throws Error when two sections share a name (a `format` violation for a candidate)
 * @example
 * ```ts
 * markdownSections('# Title\n\n## Roles\nA party acts.\n');
 * // { '(preamble)': '# Title\n\n', Roles: '## Roles\nA party acts.\n' }
 * ```
 */
export function markdownSections(text: string): Record<string, string> {
  const sections: Record<string, string> = {};
  for (const span of markdownSectionSpans(text)) sections[span.name] = text.slice(span.start, span.end);
  return sections;
}

/** A new body for one section (the heading line is kept; a repeated heading line is dropped). */
export interface SectionReplacement {
  section: string;
  body: string;
}

export type ReplaceResult = { ok: true; text: string } | { ok: false; message: string };

/** True when `body` has a `##` heading line outside code fences, or an unclosed fence. */
function bodyProblem(body: string): string | undefined {
  const { lines, unclosedFence } = scanLines(body);
  if (unclosedFence) return 'it opens a code fence and never closes it';
  const heading = lines.find((line) => !line.inFence && ANY_HEADING.test(line.text));
  return heading !== undefined
    ? `it contains a "##" heading ("${heading.text.trim()}"); replace one section per entry`
    : undefined;
}

/**
 * Replaces the bodies of named sections, keeping every other byte. A section
 * that does not exist is appended at the end when `allowNew` is true.
 *
 * @example
 * ```ts
 * replaceSections('## A\nold\n\n## B\nkeep\n', [{ section: 'A', body: 'new' }]);
 * // { ok: true, text: '## A\nnew\n\n## B\nkeep\n' }
 * ```
 */
export function replaceSections(
  text: string,
  replacements: readonly SectionReplacement[],
  allowNew = false,
): ReplaceResult {
  let spans: MarkdownSectionSpan[];
  try {
    spans = markdownSectionSpans(text);
  } catch (error) {
    return { ok: false, message: `the prompt cannot be read as sections: ${(error as Error).message}` };
  }
  let result = text;
  const added: string[] = [];
  const seen = new Set<string>();
  for (const replacement of replacements) {
    const name = replacement.section.trim().replace(/^#+\s*/, '');
    if (name === PREAMBLE_SECTION) return { ok: false, message: 'the preamble cannot be replaced by section' };
    if (seen.has(name)) return { ok: false, message: `section "${name}" is replaced twice` };
    seen.add(name);
    let body = replacement.body.replace(/\r\n/g, '\n');
    const echoed = HEADING.exec(body.split('\n', 1)[0] ?? '');
    if (echoed !== null && echoed[1]?.trim() === name) body = body.slice(body.indexOf('\n') + 1 || body.length);
    const problem = bodyProblem(body);
    if (problem !== undefined)
      return { ok: false, message: `the new text of section "${name}" is not usable: ${problem}` };
    const current = markdownSectionSpans(result).find((span) => span.name === name);
    if (current === undefined) {
      if (!allowNew) return { ok: false, message: `there is no section "${name}" in the prompt` };
      added.push(name);
      const separator =
        result.trim() === '' ? '' : result.endsWith('\n\n') ? '' : result.endsWith('\n') ? '\n' : '\n\n';
      result = `${result}${separator}## ${name}\n\n${body.trim()}\n`;
      continue;
    }
    const original = result.slice(current.start, current.end);
    const headingLine = original.split('\n', 1)[0]!;
    const originalBody = original.slice(headingLine.length);
    // Keep the original layout (blank line after the heading or not, trailing blank lines).
    const leading =
      originalBody.trim() === '' ? '\n\n' : (/^\s*/.exec(originalBody)?.[0] ?? '\n').replace(/[ \t]+$/, '');
    const trailing = /\s*$/.exec(original)?.[0] ?? '\n';
    const isLast = current.end === result.length;
    const ending = isLast ? (trailing.includes('\n') ? '\n' : '') : trailing.includes('\n\n') ? trailing : '\n\n';
    const replaced = `${headingLine}${leading}${body.trim()}${ending}`;
    result = result.slice(0, current.start) + replaced + result.slice(current.end);
  }
  const expected = [...spans.map((span) => span.name), ...added];
  let after: string[];
  try {
    after = markdownSectionSpans(result).map((span) => span.name);
  } catch (error) {
    return { ok: false, message: `the edited prompt cannot be read as sections: ${(error as Error).message}` };
  }
  if (after.join('\u0000') !== expected.join('\u0000'))
    return { ok: false, message: "the edit changed the prompt's section structure" };
  return { ok: true, text: result };
}
