/**
 * The optimization examples each refused experiment fixed and broke against
 * its base, read from the notebook's per-example results (`example_results`,
 * keyed by evaluator fingerprint, artifact hash, example and repeat): the
 * evidence {@link combinedEdits} (src/report/stuck-factors.ts) weighs.
 *
 * Right/wrong tasks only: an example is fixed when the candidate's mean
 * over its stored valid repeats is above the base's, broken when below.
 *
 * @module
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readExampleComposites, readExperimentSides } from '../storage/notebook/report-queries.ts';
import type { ExampleOutcomes } from './stuck-factors.ts';

/** Per-example mean composite of one artifact under one fingerprint, over the given example ids (valid repeats only). */
async function meansOf(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  ids: ReadonlySet<string>,
): Promise<Map<string, number>> {
  const rows = await readExampleComposites(db, fingerprint, artifactHash);
  const sums = new Map<string, { sum: number; n: number }>();
  for (const row of rows) {
    if (!ids.has(row.exampleId) || Number(row.valid) !== 1 || row.composite === null) continue;
    const entry = sums.get(row.exampleId) ?? { sum: 0, n: 0 };
    entry.sum += Number(row.composite);
    entry.n += 1;
    sums.set(row.exampleId, entry);
  }
  return new Map([...sums].map(([id, entry]) => [id, entry.sum / entry.n]));
}

/**
 * The outcomes of the experiments `experimentIds` on the examples
 * `optimizationIds`, by experiment id; an experiment whose base or candidate
 * has no stored results on them is left out.
 */
export async function refusedOutcomes(
  db: StudyDatabase,
  experimentIds: readonly number[],
  optimizationIds: readonly string[],
): Promise<Map<number, ExampleOutcomes>> {
  const outcomes = new Map<number, ExampleOutcomes>();
  if (experimentIds.length === 0) return outcomes;
  const ids = new Set(optimizationIds);
  const rows = await readExperimentSides(db, experimentIds);
  for (const row of rows) {
    const base = await meansOf(db, row.fingerprint, row.baseHash, ids);
    const candidate = await meansOf(db, row.fingerprint, row.candidateHash, ids);
    if (base.size === 0 || candidate.size === 0) continue;
    const fixed: string[] = [];
    const broken: string[] = [];
    for (const [id, before] of base) {
      const after = candidate.get(id);
      if (after === undefined) continue;
      if (after > before) fixed.push(id);
      else if (after < before) broken.push(id);
    }
    outcomes.set(row.id, { fixed: fixed.sort(), broken: broken.sort() });
  }
  return outcomes;
}
