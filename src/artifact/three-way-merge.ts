/**
 * Edits that compose: a candidate is a change from the round's base text to
 * its own text, and that change can be re-applied to a newer incumbent (a
 * *rebase*) by a line-based three-way merge, whatever proposer made it.
 *
 * Two candidates that add different lines to one section both still apply
 * after either is merged: the merge keeps the incumbent's lines and adds the
 * candidate's. Where both changed the same base lines differently, the
 * candidate's version of those lines wins: the candidate is what is being
 * tested, and the gate then judges it against the incumbent as it now stands
 * (it is never discarded unjudged).
 *
 * The merge is the classic diff3 algorithm (Khanna, Kunal & Pierce, "A Formal
 * Investigation of Diff3", FSTTCS 2007), through the `node-diff3` library.
 *
 * @module
 */
import { diff3Merge, diffComm } from 'node-diff3';

/** The lines a change adds and removes (order kept; unchanged lines omitted). */
export interface LineChanges {
  added: string[];
  removed: string[];
}

/** The result of a rebase. */
export interface RebaseResult {
  /** The candidate's change applied to the incumbent. */
  text: string;
  /** Regions both sides changed differently, resolved in favour of the candidate. */
  conflicts: number;
  /** Regions where both sides only inserted lines at the same place; both kept, incumbent's first. */
  sideBySideInsertions: number;
}

function lines(text: string): string[] {
  return text.split('\n');
}

/**
 * The lines `after` adds to and removes from `before` (a line diff by
 * longest common subsequence). Blank lines are left out of both lists, and
 * so is a line that only gained or lost a trailing comma (with the line it
 * became): in a JSON list, adding an item after the last one adds a comma to
 * it without changing it.
 *
 * @example
 * ```ts
 * lineChanges('## Roles\nA party acts.\n', '## Roles\nA party acts.\nDecide from meaning.\n');
 * // { added: ['Decide from meaning.'], removed: [] }
 * ```
 */
export function lineChanges(before: string, after: string): LineChanges {
  const added: string[] = [];
  const removed: string[] = [];
  for (const block of diffComm(lines(before), lines(after))) {
    if ('common' in block) continue;
    const gone = block.buffer1.filter((line) => line.trim() !== '');
    const came = block.buffer2.filter((line) => line.trim() !== '');
    // A line that only gained or lost its trailing comma (a JSON list's last item, once another follows it) is
    // unchanged: it is not shown as removed and added again (issue 35).
    const unchanged = new Set<number>();
    const kept = gone.filter((line) => {
      const twin = came.findIndex(
        (other, index) =>
          !unchanged.has(index) && other !== line && withoutTrailingComma(other) === withoutTrailingComma(line),
      );
      if (twin === -1) return true;
      unchanged.add(twin);
      return false;
    });
    removed.push(...kept);
    added.push(...came.filter((_line, index) => !unchanged.has(index)));
  }
  return { added, removed };
}

function withoutTrailingComma(line: string): string {
  return line.replace(/,\s*$/, '').trimEnd();
}

/**
 * The text of a change for near-duplicate detection and the notebook: one
 * line per added (`+ `) or removed (`- `) line.
 *
 * @example
 * ```ts
 * changeText({ added: ['Decide from meaning.'], removed: ['Old rule.'] }); // '- Old rule.\n+ Decide from meaning.'
 * ```
 */
export function changeText(changes: LineChanges): string {
  return [...changes.removed.map((line) => `- ${line}`), ...changes.added.map((line) => `+ ${line}`)].join('\n');
}

/**
 * Re-applies the change `base → candidate` to `incumbent` (three-way merge
 * with `base` as the common ancestor).
 *
 * - A region only one side changed takes that side's version.
 * - A region where both sides inserted lines at the same place (nothing of
 *   the base between them) keeps both: the incumbent's lines, then the
 *   candidate's.
 * - A region both sides changed differently takes the candidate's version
 *   (counted in `conflicts`).
 *
 * @example
 * ```ts
 * const base = '## Roles\nA party acts.\n';
 * rebaseText(base, base + 'Hint B.\n', base + 'Hint A.\n').text; // '## Roles\nA party acts.\nHint A.\nHint B.\n'
 * ```
 */
export function rebaseText(base: string, candidate: string, incumbent: string): RebaseResult {
  if (incumbent === base) return { text: candidate, conflicts: 0, sideBySideInsertions: 0 };
  if (candidate === base) return { text: incumbent, conflicts: 0, sideBySideInsertions: 0 };
  const merged: string[] = [];
  let conflicts = 0;
  let sideBySideInsertions = 0;
  for (const block of diff3Merge(lines(incumbent), lines(base), lines(candidate), { excludeFalseConflicts: true })) {
    if (block.ok !== undefined) {
      merged.push(...block.ok);
      continue;
    }
    const conflict = block.conflict!;
    if (conflict.o.length === 0) {
      sideBySideInsertions += 1;
      merged.push(...conflict.a, ...conflict.b);
    } else {
      conflicts += 1;
      merged.push(...conflict.b);
    }
  }
  return { text: merged.join('\n'), conflicts, sideBySideInsertions };
}
