/**
 * Outcome lines: NDJSON, one `{"unit", "metric", "value", "at"}` object per
 * line, as `POST /outcomes` and a metric scraper send them, and the checks
 * every outcome passes before it is stored, whichever way it came in.
 *
 * A line is refused, with its 1-based line number and the reason, when it is
 * not JSON, lacks a key or has an unknown one, names a metric the study does
 * not define, a unit never assigned, a time that is not a date, lies before
 * the unit's first exposure or after now (a clock running backwards or
 * ahead), or gives a binary metric a value other than 0 or 1. Refused lines
 * are counted and recorded; the others are stored (never guessed).
 */
import { z } from 'zod';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { firstExposures, type OutcomeInput } from '../../storage/online-store.ts';

/** A refused outcome line. */
export interface OutcomeRefusal {
  /** 1-based line of the batch (1 for a single outcome). */
  line: number;
  reason: string;
  /** The line as sent. */
  text: string;
}

/** An outcome that parsed, with its line. */
export interface ParsedOutcome {
  line: number;
  text: string;
  outcome: OutcomeInput;
}

const outcomeSchema = z.strictObject({
  unit: z.string().min(1, 'unit is empty').max(200, 'unit is longer than 200 characters'),
  metric: z.string().min(1, 'metric is empty'),
  value: z.number().refine(Number.isFinite, 'value must be a finite number'),
  at: z.union([z.string(), z.number()]),
});

/**
 * Parses one outcome (an object from a line, or a library call); `at` is an
 * ISO time or milliseconds since the epoch, normalized to `toISOString()`.
 *
 * @returns the outcome, or the reason it is refused
 */
export function parseOutcome(value: unknown): { ok: true; outcome: OutcomeInput } | { ok: false; reason: string } {
  const result = outcomeSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown key ${issue.keys.map((key) => `"${key}"`).join(', ')} (allowed: unit, metric, value, at)`
        : issue.code === 'invalid_type' && issue.input === undefined
          ? 'required'
          : issue.message;
    return { ok: false, reason: `${field}${message}` };
  }
  const time = new Date(result.data.at);
  if (Number.isNaN(time.getTime()))
    return {
      ok: false,
      reason: `at: not a date (${JSON.stringify(result.data.at)}); give an ISO time such as 2026-01-05T10:00:00Z`,
    };
  return {
    ok: true,
    outcome: { unit: result.data.unit, metric: result.data.metric, value: result.data.value, at: time.toISOString() },
  };
}

/** Splits NDJSON text into parsed outcomes and refused lines (blank lines are skipped). */
export function parseOutcomeLines(text: string): { parsed: ParsedOutcome[]; refusals: OutcomeRefusal[] } {
  const parsed: ParsedOutcome[] = [];
  const refusals: OutcomeRefusal[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      refusals.push({ line, reason: `not JSON (${(error as Error).message})`, text: raw });
      return;
    }
    const result = parseOutcome(value);
    if (result.ok) parsed.push({ line, text: raw, outcome: result.outcome });
    else refusals.push({ line, reason: result.reason, text: raw });
  });
  return { parsed, refusals };
}

/** The metrics of a study, by name, with their kind. */
export type MetricKinds = ReadonlyMap<string, 'binary' | 'continuous'>;

/**
 * Checks parsed outcomes against the study: metric defined, unit assigned,
 * time between the unit's first exposure and `now`, binary value 0 or 1.
 */
export async function checkOutcomes(
  db: StudyDatabase,
  parsed: readonly ParsedOutcome[],
  metrics: MetricKinds,
  now: Date,
): Promise<{ accepted: ParsedOutcome[]; refusals: OutcomeRefusal[] }> {
  const exposed = await firstExposures(db, [...new Set(parsed.map((entry) => entry.outcome.unit))]);
  const accepted: ParsedOutcome[] = [];
  const refusals: OutcomeRefusal[] = [];
  const nowIso = now.toISOString();
  for (const entry of parsed) {
    const { unit, metric, value, at } = entry.outcome;
    const kind = metrics.get(metric);
    const first = exposed.get(unit);
    let reason: string | undefined;
    if (kind === undefined)
      reason = `metric: unknown metric "${metric}" (this study defines ${[...metrics.keys()].join(', ')})`;
    else if (first === undefined)
      reason = `unit: unknown unit "${unit}": it was never assigned (an outcome counts only for a unit the study assigned)`;
    else if (at < first) reason = `at: ${at} is before the unit's first exposure (${first})`;
    else if (at > nowIso)
      reason = `at: ${at} is after now (${nowIso}): the sender's clock is ahead, or this one went backwards`;
    else if (kind === 'binary' && value !== 0 && value !== 1)
      reason = `value: ${metric} is binary: 0 or 1 (got ${value})`;
    if (reason === undefined) accepted.push(entry);
    else refusals.push({ line: entry.line, reason, text: entry.text });
  }
  return { accepted, refusals };
}
