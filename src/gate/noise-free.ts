/**
 * Adaptive repeats (`gate.adaptiveRepeats`, docs/gate.md "Adaptive repeats"):
 * pay for the repeats that can change the decision.
 *
 * An example is **noise-free** when calibration measured its per-example SD
 * as exactly 0 over at least {@link MIN_NOISE_FREE_REPEATS} repeats of the
 * calibrated incumbent *and* every stored repeat of the current incumbent
 * there is valid with one and the same composite (its *reference* value). A
 * temperature-0 model is mostly noise-free.
 *
 * - **Candidates** are evaluated once (repeat 0) on a noise-free example. When
 *   that one draw equals the reference (valid, the same composite) it
 *   *stands* for every repeat: it is copied to repeats 1 … R − 1, in the
 *   per-example means (paired t-test) and in the run-level composites
 *   (Welch's test). When it differs, the change may have made the example
 *   noisy, and its remaining repeats are evaluated as usual.
 * - **Incumbent top-ups** (docs/gate.md "A noisy incumbent is topped up")
 *   skip a noise-free example: its first `repeats` stored repeats all agree,
 *   and their value stands for the top-up repeats.
 *
 * Exactness: where the example really is noise-free for the artifact (every
 * draw the same), the copied records are exactly the ones an evaluation
 * would return, so every statistic of the gate — and every decision — is the
 * one of full evaluation; only the bill differs. Where it is not (a rare
 * different answer that calibration's repeats and the incumbent's stored
 * repeats all missed, and the candidate's one draw missed too), the copy
 * pulls the candidate's mean on that example toward the reference, by at
 * most P(different answer) × its size × (R − 1)/R: toward the incumbent, so
 * a loss hidden there is a gain hidden elsewhere. `npm run bench:gate`
 * measures the false-accept rate with such rare answers in its world (the
 * three checks: noise SD exactly 0 over ≥ 3 calibration repeats, the
 * incumbent's agreeing repeats, the candidate's agreeing draw). The shadow is
 * always evaluated in full: the unbiased confirmation that bounds the chance
 * acceptance of a no-op at `shadowAlpha` per decision reaching it.
 *
 * Source: kloop issue #34, item 4 ("pay for evaluations that can change the
 * decision"); the stopping rule is a curtailed sample (stop sampling an
 * example once its outcome is known; Wald 1947, Sequential Analysis): with zero variance one
 * draw is the mean.
 *
 * @module
 */
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';

/** Calibration repeats a zero per-example SD needs before an example counts as noise-free (2 agreeing draws are too weak evidence). */
export const MIN_NOISE_FREE_REPEATS = 3;

/** What the rule reads of a calibration: per-example SDs and the noise repeats they were measured over. */
export interface NoiseFreeCalibration {
  readonly exampleSds: Readonly<Record<string, number>>;
  /** Repeats of the calibration's noise measurement; unknown (absent) → no example is noise-free. */
  readonly noiseRepeats?: number;
}

/** True when calibration measured `id`'s per-example SD as exactly 0 over ≥ {@link MIN_NOISE_FREE_REPEATS} repeats. */
export function calibratedNoiseFree(calibration: NoiseFreeCalibration, id: string): boolean {
  return (calibration.noiseRepeats ?? 0) >= MIN_NOISE_FREE_REPEATS && calibration.exampleSds[id] === 0;
}

/**
 * The reference values of the noise-free examples among `records` (one
 * artifact's stored example-repeats of one partition): example id → the
 * composite every one of its records has, for examples calibrated
 * noise-free whose records are all valid and equal. Examples with no record
 * are absent.
 *
 * @example
 * ```ts
 * noiseFreeReferences({ exampleSds: { a: 0, b: 0.1 }, noiseRepeats: 8 }, records); // Map { 'a' => 0.75 }
 * ```
 */
export function noiseFreeReferences(
  calibration: NoiseFreeCalibration,
  records: readonly ExampleScoreRecord[],
): Map<string, number> {
  const values = new Map<string, number | null>();
  for (const record of records) {
    if (!calibratedNoiseFree(calibration, record.exampleId)) continue;
    const value = record.valid ? record.composite : null;
    const seen = values.get(record.exampleId);
    if (seen === undefined) values.set(record.exampleId, value);
    else if (seen !== value) values.set(record.exampleId, null);
  }
  const references = new Map<string, number>();
  for (const [id, value] of values) if (value !== null && Number.isFinite(value)) references.set(id, value);
  return references;
}

/** True when `record` is valid with exactly the reference composite. */
export function agreesWith(record: ExampleScoreRecord, reference: number | undefined): boolean {
  return reference !== undefined && record.valid && record.composite === reference;
}

/**
 * The examples whose one draw stands for every repeat: those with a
 * reference whose draw in `draws` (one record per example, repeat 0)
 * agrees with it. A draw that differs is not standing: its remaining
 * repeats are evaluated.
 */
export function standingExamples(
  references: ReadonlyMap<string, number>,
  draws: readonly ExampleScoreRecord[],
): Set<string> {
  const standing = new Set<string>();
  for (const record of draws) if (agreesWith(record, references.get(record.exampleId))) standing.add(record.exampleId);
  return standing;
}

/**
 * Completes a standing example's repeats: its first record (lowest repeat)
 * is copied to every repeat in 0 … `repeats` − 1 it has no record for (the
 * copy's `repeat` renumbered); every other record is kept as it is. Records
 * come back ordered by repeat, then by example in `order` (default: the
 * order examples first appear in `records`), so a completed evaluation sums
 * its run composites in the order a full one does.
 *
 * @param repeats R, integer ≥ 1
 * @returns the records and how many were copied (example-repeats not evaluated)
 */
export function fillStanding(
  records: readonly ExampleScoreRecord[],
  standing: ReadonlySet<string>,
  repeats: number,
  order?: readonly string[],
): { records: ExampleScoreRecord[]; copied: number } {
  const first = new Map<string, ExampleScoreRecord>();
  const present = new Set<string>();
  const rank = new Map<string, number>((order ?? []).map((id, index) => [id, index]));
  for (const record of records) {
    present.add(`${record.repeat}\u0000${record.exampleId}`);
    if (!rank.has(record.exampleId)) rank.set(record.exampleId, rank.size);
    if (!standing.has(record.exampleId)) continue;
    const seen = first.get(record.exampleId);
    if (seen === undefined || record.repeat < seen.repeat) first.set(record.exampleId, record);
  }
  const out: ExampleScoreRecord[] = [...records];
  let copied = 0;
  for (const [id, record] of first) {
    for (let repeat = 0; repeat < repeats; repeat += 1) {
      if (present.has(`${repeat}\u0000${id}`)) continue;
      out.push({ ...record, repeat });
      copied += 1;
    }
  }
  out.sort((left, right) => left.repeat - right.repeat || rank.get(left.exampleId)! - rank.get(right.exampleId)!);
  return { records: out, copied };
}
