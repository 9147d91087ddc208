/**
 * A tiny library-API workflow for tests (createStudy): the artifact lists
 * words, and an input is answered with the first word of the artifact it
 * contains, "right" when that is its word. 8 optimization examples, 1 anchor,
 * 6 shadow.
 */
import type { StudyExample } from '../api/create-study.ts';

/** The words the examples ask for; the first 8 are the optimization examples', the first 6 the shadow's. */
export const WORDS = [
  'apple',
  'pear',
  'plum',
  'fig',
  'kiwi',
  'lime',
  'date',
  'lemon',
  'mango',
  'peach',
  'grape',
  'melon',
];

/** o0–o7 ("I want <word>"), a0 ("I want apple"), s0–s5 ("give me <word> now"). */
export const wordExamples: StudyExample<string, string>[] = [
  ...WORDS.slice(0, 8).map((word, index) => ({
    id: `o${index}`,
    input: `I want ${word}`,
    expected: word,
    partition: 'optimization' as const,
  })),
  { id: 'a0', input: 'I want apple', expected: 'apple', partition: 'anchor' },
  ...WORDS.slice(0, 6).map((word, index) => ({
    id: `s${index}`,
    input: `give me ${word} now`,
    expected: word,
    partition: 'shadow' as const,
  })),
];

/** The first word of the artifact that the input contains, or "none". */
export const executeWordList = (artifact: string, input: string): string =>
  artifact.split(/\s+/).find((word) => word !== '' && input.includes(word)) ?? 'none';
