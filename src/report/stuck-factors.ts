/**
 * The evidence a stuck run's advice weighs before it blames the corpus
 * (issue 35: twelve FAQ questions were enough; the proposer's budget was
 * not):
 *
 * - {@link combinedEdits}: the refused edits of a right/wrong task taken
 *   together. Each fixed a few optimization examples, too few for McNemar's
 *   test on its own; if between them they fix enough different examples
 *   (and break few), the corpus already has the examples a combination
 *   needs, and what is missing is a candidate that combines them.
 * - {@link shadowCeiling}: the best p-value the shadow partition could
 *   give. With w shadow examples the incumbent gets wrong, a candidate
 *   fixing all of them and breaking none has McNemar p = 0.5^w; when that is
 *   not below `gate.shadowAlpha`, no candidate can be confirmed and the
 *   shadow's size is the limit.
 *
 * @module
 */
import { mcnemarExactTestFromCounts } from '../stats/mcnemar.ts';

/** One refused experiment's outcome on the optimization examples against its base (right/wrong tasks: the examples it fixed and broke). */
export interface ExampleOutcomes {
  fixed: readonly string[];
  broken: readonly string[];
}

/** What the refused edits would do together, if they do not interfere. */
export interface CombinedEdits {
  /** Refused edits counted (those with stored outcomes). */
  edits: number;
  /** Optimization examples fixed by at least one of them and broken by none. */
  fixed: number;
  /** Optimization examples broken by at least one of them. */
  broken: number;
  /** McNemar's exact one-sided p of `fixed` against `broken` (b, c). */
  pValue: number;
}

/**
 * The union of the refused edits' fixes (an example any of them fixed and
 * none broke) against the union of their breaks, and McNemar's exact
 * one-sided p of those counts (McNemar 1947, exact binomial form; the gate's
 * test for right/wrong outcomes). An optimistic reading: edits that fix the
 * same example by different words, or that interfere, do less together.
 *
 * @returns null when fewer than two edits have outcomes
 */
export function combinedEdits(outcomes: readonly ExampleOutcomes[]): CombinedEdits | null {
  if (outcomes.length < 2) return null;
  const broken = new Set(outcomes.flatMap((outcome) => outcome.broken));
  const fixed = new Set(outcomes.flatMap((outcome) => outcome.fixed).filter((id) => !broken.has(id)));
  const pValue =
    fixed.size + broken.size === 0
      ? 1
      : mcnemarExactTestFromCounts({ b: fixed.size, c: broken.size }, 'greater').pValue;
  return { edits: outcomes.length, fixed: fixed.size, broken: broken.size, pValue };
}

/** The shadow's ceiling: the examples the incumbent gets wrong there and the best p a candidate could reach. */
export interface ShadowCeiling {
  /** Shadow examples the incumbent got wrong (McNemar's b + both wrong). */
  wrong: number;
  /** 0.5^wrong: McNemar's exact one-sided p of a candidate that fixes every one of them and breaks none. */
  bestPValue: number;
}

/**
 * The shadow ceiling read from a `specialization` refusal's evidence (the
 * gate's `shadow` check with McNemar's counts); undefined when the shadow
 * was not tested with McNemar's test.
 */
export function shadowCeiling(evidence: unknown): ShadowCeiling | undefined {
  const checks = (evidence as { checks?: unknown } | null)?.checks;
  if (!Array.isArray(checks)) return undefined;
  const shadow = (checks as Array<{ name?: string; data?: Record<string, unknown> }>).find(
    (check) => check.name === 'shadow',
  );
  const data = shadow?.data;
  if (data === undefined || data.pairedTest !== 'mcnemar-exact') return undefined;
  const wrong = Number(data.b) + Number(data.bothWrong ?? 0);
  if (!Number.isInteger(wrong) || wrong < 0) return undefined;
  return { wrong, bestPValue: 0.5 ** wrong };
}
