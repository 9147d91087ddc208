/**
 * How one extracted field is compared with its gold value: the three match
 * rules of the `extraction` task, each giving a score in [0, 1].
 *
 * - `exact`: a JSON scalar (string, number, boolean) or null. Two strings
 *   match when equal after {@link normalizeText} (Unicode NFKC, trimmed,
 *   inner runs of white space as one space, lower case); numbers and
 *   booleans when `===`; values of different types never match (`"42"` is
 *   not `42`). Score 1 or 0.
 * - `set-f1`: a list of strings or numbers, read as a set of normalised
 *   items (strings as above, duplicates collapsed). Score: the F1 of the
 *   predicted set against the gold set, 2·|G ∩ P| / (|G| + |P|), i.e. the
 *   harmonic mean of precision |G ∩ P| / |P| and recall |G ∩ P| / |G|; 1 when
 *   both are empty. An absent or null prediction is the empty set.
 * - `number`: a finite number. Score 1 when |predicted − gold| ≤ tolerance
 *   (absolute, in the field's own units, default 0), allowing for binary
 *   floating-point rounding (4 units in the last place of the larger
 *   magnitude, so 41.99 is within 0.01 of 42), else 0.
 *
 * For `exact` and `number`, a gold null means "the text has no such value":
 * the prediction is right when it is null or absent. A gold value with an
 * absent or null prediction scores 0 (`missing`).
 *
 * Source for F1: C. J. van Rijsbergen, "Information Retrieval", 2nd ed.
 * (1979), ch. 7 (the F-measure with β = 1).
 *
 * @module
 */

/** The match rules. */
export const FIELD_MATCHES = ['exact', 'set-f1', 'number'] as const;
export type FieldMatch = (typeof FIELD_MATCHES)[number];

/** A JSON scalar an `exact` field holds. */
export type ExactValue = string | number | boolean | null;
/** An item of a `set-f1` field. */
export type SetItem = string | number;

/** What went wrong (or right) with one field. */
export interface FieldDiagnostic {
  match: FieldMatch;
  /** The field's score in [0, 1]. */
  score: number;
  /** The gold value. */
  expected: unknown;
  /** The predicted value; null when the output lacks the field. */
  predicted: unknown;
  /** Gold value present, prediction absent or null. */
  missing?: true;
  /** Gold null (no such value), but a value was predicted. */
  unexpected?: true;
  /** `set-f1`: gold items not predicted, and predicted items not in the gold (as written). */
  missingItems?: string[];
  extraItems?: string[];
  /** `set-f1`: precision and recall (null when 0/0). */
  precision?: number | null;
  recall?: number | null;
  /** `number`: |predicted − gold|. */
  difference?: number;
  /** `number`: the tolerance applied. */
  tolerance?: number;
}

/** A string as `exact` and `set-f1` compare it: NFKC, trimmed, white space collapsed, lower case. */
export function normalizeText(value: string): string {
  return value.normalize('NFKC').trim().replace(/\s+/gu, ' ').toLowerCase();
}

function itemKey(item: SetItem): string {
  return typeof item === 'number' ? `n:${item}` : `s:${normalizeText(item)}`;
}

function shown(item: SetItem): string {
  return typeof item === 'number' ? String(item) : item;
}

/** Scores an `exact` field. */
export function matchExact(expected: ExactValue, predicted: ExactValue | undefined): FieldDiagnostic {
  const value = predicted ?? null;
  const base = { match: 'exact' as const, expected, predicted: value };
  if (expected === null) return value === null ? { ...base, score: 1 } : { ...base, score: 0, unexpected: true };
  if (value === null) return { ...base, score: 0, missing: true };
  const right =
    typeof expected === 'string' && typeof value === 'string'
      ? normalizeText(expected) === normalizeText(value)
      : expected === value;
  return { ...base, score: right ? 1 : 0 };
}

/** Scores a `set-f1` field. */
export function matchSet(
  expected: readonly SetItem[],
  predicted: readonly SetItem[] | null | undefined,
): FieldDiagnostic {
  const gold = new Map<string, SetItem>();
  for (const item of expected) if (!gold.has(itemKey(item))) gold.set(itemKey(item), item);
  const guess = new Map<string, SetItem>();
  for (const item of predicted ?? []) if (!guess.has(itemKey(item))) guess.set(itemKey(item), item);
  let common = 0;
  for (const key of guess.keys()) if (gold.has(key)) common += 1;
  const score = gold.size + guess.size === 0 ? 1 : (2 * common) / (gold.size + guess.size);
  return {
    match: 'set-f1',
    score,
    expected: [...expected],
    predicted: predicted === undefined || predicted === null ? null : [...predicted],
    ...(gold.size > 0 && guess.size === 0 ? { missing: true as const } : {}),
    missingItems: [...gold].filter(([key]) => !guess.has(key)).map(([, item]) => shown(item)),
    extraItems: [...guess].filter(([key]) => !gold.has(key)).map(([, item]) => shown(item)),
    precision: guess.size === 0 ? null : common / guess.size,
    recall: gold.size === 0 ? null : common / gold.size,
  };
}

/** Scores a `number` field with an absolute tolerance ≥ 0. */
export function matchNumber(
  expected: number | null,
  predicted: number | null | undefined,
  tolerance: number,
): FieldDiagnostic {
  const value = predicted ?? null;
  const base = { match: 'number' as const, expected, predicted: value, tolerance };
  if (expected === null) return value === null ? { ...base, score: 1 } : { ...base, score: 0, unexpected: true };
  if (value === null) return { ...base, score: 0, missing: true };
  const difference = Math.abs(value - expected);
  const rounding = 4 * Number.EPSILON * Math.max(Math.abs(value), Math.abs(expected));
  return { ...base, difference, score: difference <= tolerance + rounding ? 1 : 0 };
}
