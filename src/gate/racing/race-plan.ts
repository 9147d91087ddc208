/**
 * The batch plan of a raced evaluation: in which order a candidate's
 * example-repeats of one partition are evaluated.
 *
 * Repeat-major: every example once (repeat 0) in a seeded order, then every
 * example again (repeat 1) in another seeded order, and so on; cut into
 * batches of `batchSize` example-repeats (a batch may span two repeats). So
 * the first batches cover as many different examples as possible, and each
 * finished repeat is a complete run (a run-level composite for Welch's test).
 *
 * Every candidate of a round uses the same plan (seeded by the study seed and
 * the round), so they are compared on the same example-repeats batch by batch
 * ("sharing the batches"), and a resumed round evaluates exactly the same
 * batches again — which the notebook has stored: nothing is paid twice.
 *
 * @module
 */
import { createSeededRandom } from '../../stats/index.ts';

/** One example-repeat of the plan. */
export interface RaceSlot {
  readonly exampleId: string;
  readonly repeat: number;
}

/** The batches of a raced evaluation; see the module comment. */
export interface RacePlan {
  /** Example-repeats per batch (the last batch may be smaller). */
  readonly batchSize: number;
  /** The seed of the example orders. */
  readonly seed: number;
  /** Repeats of every example (R). */
  readonly repeats: number;
  /** Examples in the partition (n). */
  readonly examples: number;
  /** n × R. */
  readonly total: number;
  readonly batches: ReadonlyArray<readonly RaceSlot[]>;
}

/** The key of an example-repeat, as the race stores its scores. */
export function slotKey(slot: RaceSlot): string {
  return `${slot.repeat}\u0000${slot.exampleId}`;
}

/**
 * Plans the batches of a partition's example-repeats.
 *
 * @param options.exampleIds the partition's example ids (any order: they are sorted first)
 * @param options.repeats R, integer ≥ 1
 * @param options.batchSize example-repeats per batch, integer ≥ 1
 * @param options.seed any safe integer (the study seed combined with the round, see {@link raceSeed})
 * @throws RangeError on a repeat count or batch size below 1
 *
 * @example
 * ```ts
 * const plan = planRace({ exampleIds: ['a', 'b', 'c'], repeats: 2, batchSize: 4, seed: 7 });
 * plan.batches.map((batch) => batch.length); // [4, 2]
 * ```
 */
export function planRace(options: {
  exampleIds: readonly string[];
  repeats: number;
  batchSize: number;
  seed: number;
}): RacePlan {
  const { repeats, batchSize, seed } = options;
  if (!Number.isInteger(repeats) || repeats < 1) throw new RangeError(`repeats must be an integer ≥ 1, got ${repeats}`);
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize must be an integer ≥ 1, got ${batchSize}`);
  const ids = [...new Set(options.exampleIds)].sort();
  const random = createSeededRandom(seed);
  const slots: RaceSlot[] = [];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const order = [...ids];
    for (let index = order.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other]!, order[index]!];
    }
    for (const exampleId of order) slots.push({ exampleId, repeat });
  }
  const batches: RaceSlot[][] = [];
  for (let start = 0; start < slots.length; start += batchSize) batches.push(slots.slice(start, start + batchSize));
  return { batchSize, seed, repeats, examples: ids.length, total: slots.length, batches };
}

/** The plan seed of a round: the study seed and the round, mixed (so each round orders its examples afresh). */
export function raceSeed(studySeed: number, round: number): number {
  return (Math.imul(studySeed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(round + 1, 0xc2b2ae35)) >>> 0;
}
