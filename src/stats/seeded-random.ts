/**
 * A small seeded pseudo-random number generator, so that every resampling
 * in kloop is reproducible from a stored seed.
 *
 * @module
 */

/** A source of uniform pseudo-random numbers in [0, 1), like `Math.random`. */
export type RandomSource = () => number;

/**
 * Creates a seeded generator of uniform numbers in [0, 1) — Mulberry32.
 *
 * Algorithm: Mulberry32 by Tommy Ettinger (2017, public domain), as published
 * in bryc's "Pseudorandom number generators" collection
 * (https://github.com/bryc/code/blob/master/jshash/PRNGs.md#mulberry32).
 * 32 bits of state, period 2³²; each output is a 32-bit integer divided by
 * 2³², so values are multiples of 2⁻³² in [0, 1). Statistically fine for
 * bootstrap resampling and shuffles; **not** cryptographically secure.
 * `scripts/reference/stats_reference.py` re-implements it in Python and
 * prints the first outputs for seeds 0 and 12345, which the tests pin.
 *
 * @param seed - Any safe integer (`Number.isSafeInteger`); it is reduced
 *   modulo 2³² (so `seed` and `seed + 2³²` give the same stream).
 * @returns A function returning the next number of the stream on each call.
 * @throws RangeError when `seed` is not a safe integer.
 *
 * @example
 * ```ts
 * const random = createSeededRandom(42);
 * const first = random(); // same value on every run with seed 42
 * ```
 */
export function createSeededRandom(seed: number): RandomSource {
  if (!Number.isSafeInteger(seed)) {
    throw new RangeError(`seed must be a safe integer; got ${String(seed)}.`);
  }
  let state = Number(BigInt.asUintN(32, BigInt(seed))) | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
