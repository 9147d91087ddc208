/**
 * An index of goal texts for near-duplicate search: the word-bigram Jaccard
 * distance of `bigramJaccardDistance` (Jaccard 1912; word shingles as in
 * Broder 1997), computed from an inverted index of bigrams instead of one
 * pair at a time, so that admission and the leak check between partitions
 * stay fast as the corpus grows (each goal's bigrams are computed once; only
 * goals sharing a bigram are compared).
 *
 * Distances are exactly those of `bigramJaccardDistance`, edge cases
 * included (two texts without words are identical; a one-word text's word
 * stands in for its bigram).
 */
import { wordBigrams } from '../stats/index.ts';

/** One goal found near another. */
export interface GoalMatch<T> {
  entry: T;
  /** Word-bigram Jaccard distance in [0, 1]. */
  distance: number;
}

/** A growing set of goals, each with the caller's entry (id, partition, location, ...). */
export class GoalIndex<T> {
  readonly #entries: Array<{ entry: T; size: number }> = [];
  readonly #postings = new Map<string, number[]>();
  readonly #empty: number[] = [];

  /** Number of goals indexed. */
  get size(): number {
    return this.#entries.length;
  }

  /** Adds a goal. */
  add(goal: string, entry: T): void {
    const bigrams = wordBigrams(goal);
    const position = this.#entries.length;
    this.#entries.push({ entry, size: bigrams.size });
    if (bigrams.size === 0) this.#empty.push(position);
    for (const bigram of bigrams) {
      const list = this.#postings.get(bigram);
      if (list === undefined) this.#postings.set(bigram, [position]);
      else list.push(position);
    }
  }

  /**
   * Every indexed goal closer to `goal` than `below` (distance < below),
   * nearest first (ties in insertion order). Goals sharing no bigram are at
   * distance 1 and never returned.
   */
  near(goal: string, below: number): Array<GoalMatch<T>> {
    const bigrams = wordBigrams(goal);
    const matches: Array<GoalMatch<T> & { position: number }> = [];
    if (bigrams.size === 0) {
      return below > 0 ? this.#empty.map((position) => ({ entry: this.#entries[position]!.entry, distance: 0 })) : [];
    }
    const shared = new Map<number, number>();
    for (const bigram of bigrams) {
      for (const position of this.#postings.get(bigram) ?? []) shared.set(position, (shared.get(position) ?? 0) + 1);
    }
    for (const [position, intersection] of shared) {
      const { entry, size } = this.#entries[position]!;
      const distance = 1 - intersection / (bigrams.size + size - intersection);
      if (distance < below) matches.push({ entry, distance, position });
    }
    matches.sort((left, right) => left.distance - right.distance || left.position - right.position);
    return matches.map(({ entry, distance }) => ({ entry, distance }));
  }

  /** The nearest indexed goal closer than `below`, or undefined. */
  nearest(goal: string, below: number): GoalMatch<T> | undefined {
    return this.near(goal, below)[0];
  }
}
