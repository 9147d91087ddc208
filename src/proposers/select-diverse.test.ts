import { describe, expect, it } from 'vitest';
import { selectDiverse } from './select-diverse.ts';

const edit = (name: string, rank: number, ...fixedIds: string[]) => ({ name, rank, fixedIds: new Set(fixedIds) });
const byRank = (a: { rank: number }, b: { rank: number }): number => a.rank - b.rank;

describe('selectDiverse', () => {
  const ranked = [edit('a', 1, 'x', 'y'), edit('b', 2, 'x'), edit('c', 3, 'y'), edit('d', 4, 'z'), edit('e', 5)];

  it('gives the slots first to edits that fix an example no better edit fixes', () => {
    expect(selectDiverse(ranked, 2, byRank).map((entry) => entry.name)).toEqual(['a', 'd']);
  });

  it('fills the remaining slots in rank order, and returns the chosen sorted by the given order', () => {
    expect(selectDiverse(ranked, 4, byRank).map((entry) => entry.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(selectDiverse(ranked, 3, (a, b) => b.rank - a.rank).map((entry) => entry.name)).toEqual(['d', 'b', 'a']);
  });

  it('returns each edit once, never more than the limit', () => {
    expect(selectDiverse(ranked, 10, byRank).map((entry) => entry.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(selectDiverse(ranked, 0, byRank)).toEqual([]);
  });
});
