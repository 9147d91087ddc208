/**
 * Line diffs of two artifact versions, computed with jsdiff (`diff`, Myers'
 * O(ND) algorithm): hunks with context, as side-by-side rows for the viewer
 * and the HTML report, and as a unified diff for the terminal.
 */
import { FILE_HEADERS_ONLY, createTwoFilesPatch, structuredPatch } from 'diff';

/** One row of a side-by-side diff. */
export interface DiffRow {
  /** context: same on both sides; change: a line replaced; del / add: only on the left / right; gap: unchanged lines left out. */
  kind: 'context' | 'change' | 'del' | 'add' | 'gap';
  /** 1-based line number on the left, null when the row has no left line. */
  leftNumber: number | null;
  left: string | null;
  rightNumber: number | null;
  right: string | null;
}

/** A diff of two texts. */
export interface TextDiff {
  rows: DiffRow[];
  /** Lines only on the right. */
  added: number;
  /** Lines only on the left. */
  removed: number;
  identical: boolean;
}

/** Default lines of context around each change. */
export const DEFAULT_DIFF_CONTEXT = 3;

/**
 * Side-by-side rows of the diff from `left` to `right` (a run of removed lines
 * followed by added lines is paired row by row as changes).
 */
export function diffTexts(left: string, right: string, context = DEFAULT_DIFF_CONTEXT): TextDiff {
  const patch = structuredPatch('left', 'right', left, right, '', '', { context });
  const rows: DiffRow[] = [];
  let added = 0;
  let removed = 0;
  let previousEnd = 0; // last left line shown
  for (const hunk of patch.hunks) {
    if (hunk.oldStart - 1 > previousEnd)
      rows.push({
        kind: 'gap',
        leftNumber: null,
        left: `${hunk.oldStart - 1 - previousEnd} unchanged lines`,
        rightNumber: null,
        right: null,
      });
    let leftNumber = hunk.oldStart;
    let rightNumber = hunk.newStart;
    const lines = hunk.lines.filter((line) => !line.startsWith('\\'));
    for (let index = 0; index < lines.length; ) {
      const line = lines[index]!;
      if (line.startsWith(' ')) {
        rows.push({ kind: 'context', leftNumber, left: line.slice(1), rightNumber, right: line.slice(1) });
        leftNumber += 1;
        rightNumber += 1;
        index += 1;
        continue;
      }
      const removedRun: string[] = [];
      const addedRun: string[] = [];
      while (index < lines.length && lines[index]!.startsWith('-')) removedRun.push(lines[index++]!.slice(1));
      while (index < lines.length && lines[index]!.startsWith('+')) addedRun.push(lines[index++]!.slice(1));
      removed += removedRun.length;
      added += addedRun.length;
      for (let pair = 0; pair < Math.max(removedRun.length, addedRun.length); pair += 1) {
        const leftLine = removedRun[pair];
        const rightLine = addedRun[pair];
        rows.push({
          kind: leftLine !== undefined && rightLine !== undefined ? 'change' : leftLine !== undefined ? 'del' : 'add',
          leftNumber: leftLine !== undefined ? leftNumber++ : null,
          left: leftLine ?? null,
          rightNumber: rightLine !== undefined ? rightNumber++ : null,
          right: rightLine ?? null,
        });
      }
    }
    previousEnd = leftNumber - 1;
  }
  const totalLeft = left === '' ? 0 : left.split('\n').length - (left.endsWith('\n') ? 1 : 0);
  if (patch.hunks.length > 0 && totalLeft > previousEnd)
    rows.push({
      kind: 'gap',
      leftNumber: null,
      left: `${totalLeft - previousEnd} unchanged lines`,
      rightNumber: null,
      right: null,
    });
  return { rows, added, removed, identical: left === right };
}

/** A unified diff (`--- a` / `+++ b` headers, @@ hunks), as `diff -u` prints it. */
export function unifiedDiff(
  leftName: string,
  left: string,
  rightName: string,
  right: string,
  context = DEFAULT_DIFF_CONTEXT,
): string {
  return createTwoFilesPatch(leftName, rightName, left, right, '', '', { context, headerOptions: FILE_HEADERS_ONLY });
}
