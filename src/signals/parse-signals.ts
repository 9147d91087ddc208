/**
 * Reading signals from text: JSON Lines (one signal object per line, blank
 * lines skipped) or a JSON body (one signal object or an array of them).
 *
 * Nothing here throws for bad input: every malformed record becomes a
 * {@link SignalIssue} naming its line (JSON Lines) or index (arrays) and the
 * field, and the valid records are returned beside them.
 */
import type { Signal, SignalIssue } from './signal.ts';
import { parseSignal } from './signal.ts';

/** One validated signal and where it was read. */
export interface LocatedSignal {
  signal: Signal;
  /** 1-based line (JSON Lines). */
  line?: number;
  /** 0-based record index. */
  index: number;
}

/** Valid signals and the records refused, in input order. */
export interface ParsedSignals {
  signals: LocatedSignal[];
  /** Every problem; a record with several problems has several issues. */
  issues: SignalIssue[];
  /** Records seen (valid + malformed). */
  records: number;
  /** Records refused (each counted once however many issues it has). */
  malformed: number;
}

/** Longest JSON Lines line accepted, in characters (a goal is at most 20 000). */
export const MAX_SIGNAL_LINE_CHARACTERS = 100_000;

/**
 * Parses one JSON Lines line (`lineNumber` 1-based, `index` the record
 * number). Returns `undefined` for a blank line.
 */
export function parseSignalLine(
  text: string,
  lineNumber: number,
  index: number,
): { ok: true; signal: LocatedSignal } | { ok: false; issues: SignalIssue[] } | undefined {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') return undefined;
  if (trimmed.length > MAX_SIGNAL_LINE_CHARACTERS) {
    return {
      ok: false,
      issues: [{ line: lineNumber, index, message: `line longer than ${MAX_SIGNAL_LINE_CHARACTERS} characters` }],
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    return { ok: false, issues: [{ line: lineNumber, index, message: `invalid JSON: ${(error as Error).message}` }] };
  }
  const parsed = parseSignal(value, { line: lineNumber, index });
  if (!parsed.success) return { ok: false, issues: parsed.issues };
  return { ok: true, signal: { signal: parsed.signal, line: lineNumber, index } };
}

/** Parses JSON Lines text (any line ending; blank lines skipped). */
export function parseSignalLines(text: string): ParsedSignals {
  const result: ParsedSignals = { signals: [], issues: [], records: 0, malformed: 0 };
  const lines = text.split(/\r?\n/);
  lines.forEach((line, offset) => {
    const parsed = parseSignalLine(line, offset + 1, result.records);
    if (parsed === undefined) return;
    result.records += 1;
    if (parsed.ok) result.signals.push(parsed.signal);
    else {
      result.malformed += 1;
      result.issues.push(...parsed.issues);
    }
  });
  return result;
}

/** Validates an already parsed JSON value: one signal object or an array of them. */
export function parseSignalValue(value: unknown): ParsedSignals {
  const items = Array.isArray(value) ? value : [value];
  const result: ParsedSignals = { signals: [], issues: [], records: items.length, malformed: 0 };
  items.forEach((item, index) => {
    const parsed = parseSignal(item, { index });
    if (parsed.success) result.signals.push({ signal: parsed.signal, index });
    else {
      result.malformed += 1;
      result.issues.push(...parsed.issues);
    }
  });
  return result;
}

/**
 * Parses a request body: JSON Lines when `jsonLines` is true (or when the
 * body is not one JSON value but has several non-blank lines), else one JSON
 * value (a signal or an array of signals).
 */
export function parseSignalBody(text: string, jsonLines = false): ParsedSignals {
  if (jsonLines) return parseSignalLines(text);
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '')
    return {
      signals: [],
      issues: [{ message: 'the body is empty: send one signal, an array of signals or JSON Lines' }],
      records: 0,
      malformed: 0,
    };
  try {
    return parseSignalValue(JSON.parse(body) as unknown);
  } catch (error) {
    const lines = body.split(/\r?\n/).filter((line) => line.trim() !== '');
    if (lines.length > 1) return parseSignalLines(body);
    return {
      signals: [],
      issues: [{ message: `invalid JSON: ${(error as Error).message}` }],
      records: 1,
      malformed: 1,
    };
  }
}
