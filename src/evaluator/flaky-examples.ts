/**
 * Flaky examples: with repeats (a sampled model evaluated R times on the same
 * examples), the examples whose outcome varies across the repeats of one
 * artifact's evaluation beyond a documented level, {@link FLAKY_RANGE}.
 *
 * An example is **flaky** when, over its repeats (at least 2):
 *
 * - it was valid in some repeats and invalid in others (the model sometimes
 *   answers out of schema); or
 * - its composite moved by {@link FLAKY_RANGE} (0.2) or more between two
 *   valid repeats (max − min ≥ 0.2). For a binary task (each example right
 *   or wrong) that is any flip: right in some repeats, wrong in others.
 *
 * 0.2 is a fifth of the score range: for the intent task's composite, one of
 * its smaller components (role accuracy or behaviour coverage, weight 0.20)
 * flipping from 0 to 1; smaller movements are the ordinary wobble of a
 * partial score. A transient failure (a timeout or server error after the
 * executor's retries) is the infrastructure's, not the example's: it is left
 * out.
 *
 * Flaky examples are what the run-to-run noise of a calibration is made of;
 * they are named so a user can read them (`kloop eval`, `kloop show`, the run
 * report), not used by the gate, whose tests already account for the noise.
 *
 * @module
 */

/**
 * Range of an example's composite across the repeats of one evaluation
 * (max − min) at or above which it is flaky: 0.2.
 */
export const FLAKY_RANGE = 0.2;

/** The least of one example-repeat that the flakiness check reads. */
export interface RepeatOutcome {
  exampleId: string;
  repeat: number;
  valid: boolean;
  /** The composite in [0, 1] when valid; null or absent otherwise. */
  composite?: number | null;
  /** A transient failure (left out). */
  transient?: true;
}

/** One flaky example. */
export interface FlakyExample {
  id: string;
  /** Repeats read (transient failures left out). */
  repeats: number;
  /** Repeats with a valid output. */
  valid: number;
  /** Lowest and highest composite over the valid repeats; null when none was valid. */
  min: number | null;
  max: number | null;
  /** `validity`: valid in some repeats, invalid in others; `range`: max − min ≥ the level. */
  why: 'validity' | 'range';
}

/** The flaky examples of one evaluation (or of several, each example's repeats read together). */
export interface FlakyExamples {
  /** The level: composite range at or above which an example is flaky ({@link FLAKY_RANGE}). */
  level: number;
  /** Most repeats of any example read; below 2 nothing can be flaky. */
  repeats: number;
  /** Number of flaky examples. */
  count: number;
  /** Their ids, in the order the examples were first read. */
  ids: string[];
  examples: FlakyExample[];
}

/** The repeats of one example, valid composites and validity. */
interface Tally {
  repeats: number;
  valid: number;
  min: number;
  max: number;
}

/**
 * The flaky examples among `outcomes` (see the module comment).
 *
 * @param outcomes example-repeats, in any order; an example's repeats are read together
 * @param level the composite range at or above which an example is flaky; default {@link FLAKY_RANGE}
 * @example
 * ```ts
 * findFlakyExamples([
 *   { exampleId: 'a', repeat: 0, valid: true, composite: 1 },
 *   { exampleId: 'a', repeat: 1, valid: true, composite: 0 },
 *   { exampleId: 'b', repeat: 0, valid: true, composite: 0.9 },
 *   { exampleId: 'b', repeat: 1, valid: true, composite: 0.8 },
 * ]).ids; // ['a']
 * ```
 */
export function findFlakyExamples(outcomes: Iterable<RepeatOutcome>, level: number = FLAKY_RANGE): FlakyExamples {
  const tallies = new Map<string, Tally>();
  for (const outcome of outcomes) {
    if (!outcome.valid && outcome.transient === true) continue;
    let tally = tallies.get(outcome.exampleId);
    if (tally === undefined) {
      tally = { repeats: 0, valid: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
      tallies.set(outcome.exampleId, tally);
    }
    tally.repeats += 1;
    if (outcome.valid && typeof outcome.composite === 'number') {
      tally.valid += 1;
      tally.min = Math.min(tally.min, outcome.composite);
      tally.max = Math.max(tally.max, outcome.composite);
    }
  }
  const examples: FlakyExample[] = [];
  let repeats = 0;
  // A range computed from weighted sums may fall short of the level by rounding (0.19999999999999996).
  const threshold = level - 1e-9;
  for (const [id, tally] of tallies) {
    repeats = Math.max(repeats, tally.repeats);
    if (tally.repeats < 2) continue;
    const range = tally.valid > 0 ? tally.max - tally.min : 0;
    const why = tally.valid > 0 && tally.valid < tally.repeats ? 'validity' : range >= threshold ? 'range' : undefined;
    if (why === undefined) continue;
    examples.push({
      id,
      repeats: tally.repeats,
      valid: tally.valid,
      min: tally.valid > 0 ? tally.min : null,
      max: tally.valid > 0 ? tally.max : null,
      why,
    });
  }
  return { level, repeats, count: examples.length, ids: examples.map((example) => example.id), examples };
}

/**
 * One line naming the flaky examples for text output, e.g. `flaky examples
 * (outcome varies across 5 repeats: valid in some and invalid in others, or a
 * composite range ≥ 0.2): 2 — a, b`; `none` when there are none; null when
 * fewer than 2 repeats were read (nothing can be told).
 *
 * @param shown most ids listed (the rest are counted); default 20
 */
export function describeFlakyExamples(flaky: FlakyExamples, shown = 20): string | null {
  if (flaky.repeats < 2) return null;
  const head = `flaky examples (outcome varies across ${flaky.repeats} repeats: valid in some and invalid in others, or a composite range ≥ ${flaky.level})`;
  if (flaky.count === 0) return `${head}: none`;
  const ids =
    flaky.ids.length <= shown
      ? flaky.ids.join(', ')
      : `${flaky.ids.slice(0, shown).join(', ')} and ${flaky.ids.length - shown} more`;
  return `${head}: ${flaky.count} — ${ids}`;
}
