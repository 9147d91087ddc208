/**
 * The diversity filter of the proposers that screen single edits on the
 * optimization partition (the error-driven proposer, the keyword-rules
 * proposer): several edits often fix the same examples, so a round's slots go
 * first to edits that fix an example no better-ranked edit already fixes.
 *
 * @module
 */

/** A screened edit as the filter reads it: the ids of the optimization examples it fixes. */
export interface FixingEdit {
  fixedIds: ReadonlySet<string>;
}

/**
 * The top `limit` edits of `ranked` (best first), preferring first those that
 * fix an example no edit chosen before them fixes; the remaining slots go to
 * the rest in rank order. The chosen edits are returned sorted by `compare`
 * (the proposer's order of candidates).
 *
 * @param ranked edits, best first
 * @param limit most edits returned (the round's `maxCandidates`), an integer ≥ 0
 * @param compare the order of the returned edits
 * @returns at most `limit` edits of `ranked` (the same objects), each once
 */
export function selectDiverse<Edit extends FixingEdit>(
  ranked: readonly Edit[],
  limit: number,
  compare: (a: Edit, b: Edit) => number,
): Edit[] {
  const chosen: Edit[] = [];
  const covered = new Set<string>();
  for (const entry of ranked) {
    if (chosen.length >= limit) break;
    if ([...entry.fixedIds].some((id) => !covered.has(id))) {
      chosen.push(entry);
      for (const id of entry.fixedIds) covered.add(id);
    }
  }
  for (const entry of ranked) {
    if (chosen.length >= limit) break;
    if (!chosen.includes(entry)) chosen.push(entry);
  }
  return chosen.sort(compare);
}
