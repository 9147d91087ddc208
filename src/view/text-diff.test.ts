import { describe, expect, it } from 'vitest';
import { diffTexts, unifiedDiff } from './text-diff.ts';

const left = `${['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].join('\n')}\n`;

describe('diffTexts', () => {
  it('pairs a replaced line as a change, with context and gaps for the unchanged rest', () => {
    const right = left.replace('f\n', 'F\n');
    const diff = diffTexts(left, right, 2);
    expect(diff).toMatchObject({ added: 1, removed: 1, identical: false });
    expect(diff.rows.map((row) => row.kind)).toEqual([
      'gap',
      'context',
      'context',
      'change',
      'context',
      'context',
      'gap',
    ]);
    expect(diff.rows[0]!.left).toBe('3 unchanged lines');
    expect(diff.rows[3]).toEqual({ kind: 'change', leftNumber: 6, left: 'f', rightNumber: 6, right: 'F' });
    expect(diff.rows[6]!.left).toBe('4 unchanged lines');
  });

  it('numbers added and removed lines on their own side only', () => {
    const right = left.replace('c\n', '').replace('j\n', 'j\nj2\nj3\n');
    const diff = diffTexts(left, right, 0);
    expect(diff.added).toBe(2);
    expect(diff.removed).toBe(1);
    expect(diff.rows.filter((row) => row.kind === 'del')).toEqual([
      { kind: 'del', leftNumber: 3, left: 'c', rightNumber: null, right: null },
    ]);
    expect(diff.rows.filter((row) => row.kind === 'add')).toEqual([
      { kind: 'add', leftNumber: null, left: null, rightNumber: 10, right: 'j2' },
      { kind: 'add', leftNumber: null, left: null, rightNumber: 11, right: 'j3' },
    ]);
  });

  it('says when two texts are identical', () => {
    expect(diffTexts(left, left)).toEqual({ rows: [], added: 0, removed: 0, identical: true });
  });
});

describe('unifiedDiff', () => {
  it('prints diff -u headers and hunks', () => {
    const text = unifiedDiff('version 1', 'x\ny\n', 'version 2', 'x\nz\n');
    expect(text).toBe('--- version 1\n+++ version 2\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n');
  });
});
