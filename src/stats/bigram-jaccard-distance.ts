/**
 * Word-bigram Jaccard distance between two texts, used to skip candidate
 * deltas that are near-duplicates of deltas already tried (DESIGN.md §3,
 * "Diversity").
 *
 * @module
 */

/** Runs of Unicode letters or digits; everything else separates words. */
const WORD_PATTERN = /[\p{L}\p{N}]+/gu;

/**
 * The words of `text`: maximal runs of Unicode letters (`\p{L}`) and digits
 * (`\p{N}`), each lower-cased (`String.prototype.toLowerCase`), in order.
 * Punctuation, whitespace, marks and symbols separate words; "don't" is the
 * two words "don" and "t".
 *
 * @example
 * ```ts
 * textWords('Hello, World-42!'); // ['hello', 'world', '42']
 * ```
 */
export function textWords(text: string): string[] {
  return (text.match(WORD_PATTERN) ?? []).map((word) => word.toLowerCase());
}

/**
 * The set of word bigrams of `text` (see {@link textWords}), each the two
 * words joined by one space. A text of exactly one word yields that word
 * alone (a unigram standing in for a bigram; it never equals a real bigram
 * since words contain no space). A text without words yields the empty set.
 *
 * @example
 * ```ts
 * wordBigrams('The cat sat'); // Set { 'the cat', 'cat sat' }
 * ```
 */
export function wordBigrams(text: string): Set<string> {
  const words = textWords(text);
  if (words.length === 1) return new Set(words);
  const bigrams = new Set<string>();
  for (let index = 0; index + 1 < words.length; index += 1) {
    bigrams.add(`${words[index] as string} ${words[index + 1] as string}`);
  }
  return bigrams;
}

/**
 * Jaccard distance between the word-bigram sets of two texts:
 * 1 − |A ∩ B| / |A ∪ B| with A = {@link wordBigrams}(textA) and
 * B = {@link wordBigrams}(textB) (Jaccard 1912, "The distribution of the flora
 * in the alpine zone", New Phytologist 11; word shingles as in Broder 1997,
 * "On the resemblance and containment of documents").
 *
 * Case and punctuation are ignored; repeated bigrams count once; word order
 * matters only through adjacent pairs.
 *
 * Edge cases, all defined:
 * - both texts without any word (empty, only punctuation) → 0 (identical);
 * - one text without words, the other with words → 1;
 * - one-word texts: the single word is its only "bigram", so two one-word
 *   texts give 0 when the word is the same and 1 otherwise, and a one-word
 *   text against a longer text gives 1 (a unigram never matches a bigram).
 *
 * @param textA - Any string.
 * @param textB - Any string.
 * @returns Distance in [0, 1]: 0 for the same bigram set, 1 for disjoint sets.
 *
 * @example
 * ```ts
 * bigramJaccardDistance('the cat sat', 'The cat sat!'); // 0
 * bigramJaccardDistance('the cat sat', 'the cat ran'); // 1 − 1/3 ≈ 0.667
 * ```
 */
export function bigramJaccardDistance(textA: string, textB: string): number {
  const bigramsA = wordBigrams(textA);
  const bigramsB = wordBigrams(textB);
  if (bigramsA.size === 0 && bigramsB.size === 0) return 0;
  let intersectionSize = 0;
  for (const bigram of bigramsA) if (bigramsB.has(bigram)) intersectionSize += 1;
  const unionSize = bigramsA.size + bigramsB.size - intersectionSize;
  return 1 - intersectionSize / unionSize;
}
