/**
 * Reading JSON out of a model's text answer, defensively: reasoning blocks
 * (`<think>…</think>`, `<thinking>…</thinking>`) are removed, a fenced code
 * block (```` ```json ````) is unwrapped, and otherwise the outermost `{…}` is
 * taken. Every problem is returned, never thrown.
 */
import { capWithCount } from '../text/characters.ts';

/** Raw answers are kept up to this many characters (code points; cut between whole characters). */
export const MAX_RAW_CHARACTERS = 4000;

/** Caps a raw answer for storage: its first {@link MAX_RAW_CHARACTERS} characters and a note of how many more there were. */
export function capRaw(text: string): string {
  return capWithCount(text, MAX_RAW_CHARACTERS);
}

/** Why an answer yielded no JSON value. */
export type AnswerProblem = 'empty' | 'unclosed-think' | 'unclosed-fence' | 'unparsable';

export type JsonAnswer =
  | { ok: true; value: unknown; json: string }
  | { ok: false; problem: AnswerProblem; message: string };

const THINK_OPEN = /<(think|thinking|reasoning)>/i;

/**
 * Removes complete reasoning blocks. Returns null when one is opened and never
 * closed (the answer was cut off inside the model's reasoning).
 */
export function stripReasoning(text: string): string | null {
  let result = text;
  for (;;) {
    const open = THINK_OPEN.exec(result);
    if (open === null) break;
    const tag = open[1]!.toLowerCase();
    const closeIndex = result.toLowerCase().indexOf(`</${tag}>`, open.index);
    if (closeIndex === -1) return null;
    result = result.slice(0, open.index) + result.slice(closeIndex + tag.length + 3);
  }
  // A stray closing tag (the opening one was in the prompt template): keep what follows it.
  const strayClose = /<\/(think|thinking|reasoning)>/i.exec(result);
  if (strayClose !== null) result = result.slice(strayClose.index + strayClose[0].length);
  return result;
}

interface FenceScan {
  /** Contents of the first complete fenced block, when there is one. */
  firstBlock?: string;
  /** True when a fence is opened and never closed. */
  unclosed: boolean;
}

function scanFences(text: string): FenceScan {
  const lines = text.split(/\r?\n/);
  let open: { marker: string; start: number } | undefined;
  let firstBlock: string | undefined;
  lines.forEach((line, index) => {
    const match = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (match === null) return;
    const marker = match[1]!;
    if (open === undefined) {
      open = { marker, start: index };
    } else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && match[2]!.trim() === '') {
      if (firstBlock === undefined) firstBlock = lines.slice(open.start + 1, index).join('\n');
      open = undefined;
    }
  });
  return { ...(firstBlock !== undefined ? { firstBlock } : {}), unclosed: open !== undefined };
}

/**
 * Extracts and parses one JSON value from a model's answer.
 *
 * @example
 * ```ts
 * parseJsonAnswer('<think>hmm</think>\n```json\n{"a": 1}\n```'); // { ok: true, value: { a: 1 }, json: '{"a": 1}' }
 * parseJsonAnswer('```json\n{"a": 1'); // { ok: false, problem: 'unclosed-fence', ... }
 * ```
 */
export function parseJsonAnswer(text: string): JsonAnswer {
  if (text.trim() === '') return { ok: false, problem: 'empty', message: 'the answer is empty' };
  const visible = stripReasoning(text);
  if (visible === null)
    return { ok: false, problem: 'unclosed-think', message: 'the answer opens a <think> block and never closes it' };
  if (visible.trim() === '')
    return { ok: false, problem: 'empty', message: 'the answer has nothing outside its reasoning block' };
  const fences = scanFences(visible);
  if (fences.unclosed && fences.firstBlock === undefined) {
    return { ok: false, problem: 'unclosed-fence', message: 'the answer opens a code fence and never closes it' };
  }
  const candidates: string[] = [];
  if (fences.firstBlock !== undefined) candidates.push(fences.firstBlock.trim());
  const trimmed = visible.trim();
  candidates.push(trimmed);
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first !== -1 && last > first) candidates.push(trimmed.slice(first, last + 1));
  let lastError = 'no JSON object found';
  for (const candidate of candidates) {
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown, json: candidate };
    } catch (error) {
      lastError = (error as Error).message;
    }
  }
  return { ok: false, problem: 'unparsable', message: `the answer is not JSON (${lastError})` };
}
