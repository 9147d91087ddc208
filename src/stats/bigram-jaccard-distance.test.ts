import { describe, expect, it } from 'vitest';
import { bigramJaccardDistance, textWords, wordBigrams } from './bigram-jaccard-distance.ts';

describe('textWords and wordBigrams', () => {
  it('splits on anything but letters and digits, lower-cased', () => {
    expect(textWords('Hello, World-42!')).toEqual(['hello', 'world', '42']);
    expect(textWords("Don't STOP_now")).toEqual(['don', 't', 'stop', 'now']);
    expect(textWords('Café ÉTÉ 2024')).toEqual(['café', 'été', '2024']);
    expect(textWords(' ... ')).toEqual([]);
  });

  it('builds the set of adjacent word pairs, with a lone word standing for itself', () => {
    expect(wordBigrams('The cat sat')).toEqual(new Set(['the cat', 'cat sat']));
    expect(wordBigrams('a b a b')).toEqual(new Set(['a b', 'b a']));
    expect(wordBigrams('Alone.')).toEqual(new Set(['alone']));
    expect(wordBigrams('')).toEqual(new Set());
  });
});

describe('bigramJaccardDistance', () => {
  it('is 0 for texts with the same bigrams, ignoring case and punctuation', () => {
    expect(bigramJaccardDistance('the cat sat', 'The cat, sat!')).toBe(0);
    expect(bigramJaccardDistance('a b a b', 'a b a')).toBe(0); // both {a b, b a}
  });

  it('computes 1 − |A∩B| / |A∪B| on hand cases', () => {
    // {the cat, cat sat} vs {the cat, cat ran}: 1 shared of 3.
    expect(bigramJaccardDistance('the cat sat', 'the cat ran')).toBeCloseTo(2 / 3, 15);
    // {a b, b c, c d} vs {b c, c d, d e, e f}: 2 shared of 5.
    expect(bigramJaccardDistance('a b c d', 'b c d e f')).toBeCloseTo(3 / 5, 15);
    // {a b, b c} vs {a b}: 1 shared of 2.
    expect(bigramJaccardDistance('a b c', 'a b')).toBe(0.5);
    // disjoint
    expect(bigramJaccardDistance('one two', 'three four')).toBe(1);
    // same words, reversed order: {x y, y z} vs {z y, y x}
    expect(bigramJaccardDistance('x y z', 'z y x')).toBe(1);
  });

  it('is symmetric and stays in [0, 1]', () => {
    const texts = ['', 'word', 'Add a retry step.', 'Add a retry step before parsing', 'retry step', '!!'];
    for (const first of texts) {
      for (const second of texts) {
        const distance = bigramJaccardDistance(first, second);
        expect(distance).toBeGreaterThanOrEqual(0);
        expect(distance).toBeLessThanOrEqual(1);
        expect(distance).toBe(bigramJaccardDistance(second, first));
      }
    }
    // {add a, a retry, retry step} vs the same plus {step before, before parsing}: 3 of 5.
    expect(bigramJaccardDistance('Add a retry step.', 'Add a retry step before parsing')).toBeCloseTo(2 / 5, 15);
  });

  it('defines the edge cases without words or with one word', () => {
    expect(bigramJaccardDistance('', '')).toBe(0);
    expect(bigramJaccardDistance('...', '  !? ')).toBe(0); // no words on either side
    expect(bigramJaccardDistance('', 'some words')).toBe(1);
    expect(bigramJaccardDistance('Hello', 'hello!')).toBe(0);
    expect(bigramJaccardDistance('hello', 'world')).toBe(1);
    expect(bigramJaccardDistance('hello', 'hello world')).toBe(1); // a unigram never matches a bigram
  });
});
