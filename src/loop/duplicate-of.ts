/**
 * Which experiment a skipped duplicate duplicates (issue 35: `kloop show` of
 * a duplicate did not say). The loop skips a candidate before evaluation when
 * its content was evaluated before or its delta is within `minDeltaDistance`
 * (bigram Jaccard distance) of a delta evaluated in an earlier round or
 * proposed earlier in its own round (src/loop/propose.ts,
 * `dedupeCandidates`); the duplicate is recorded first, so the experiment it
 * duplicates may have a larger id.
 *
 * Read back from the notebook: among the experiments that were evaluated
 * (not skipped, not an infrastructure failure) in an earlier round or in the
 * same round, the one with the same content hash, else the one whose delta
 * is nearest (ties: the lowest id).
 *
 * @module
 */
import type { Notebook } from '../storage/notebook/index.ts';
import { bigramJaccardDistance } from '../stats/bigram-jaccard-distance.ts';

/** The experiment a duplicate duplicates, and how close its delta is (0 = the same). */
export interface DuplicateOf {
  experimentId: number;
  /** True when the artifact texts are the same (content hash); else the deltas are near. */
  sameContent: boolean;
  /** Bigram Jaccard distance of the two deltas. */
  distance: number;
}

/**
 * The experiment that experiment `id` (a skipped `duplicate`) duplicates;
 * null when it is not a duplicate or no evaluated experiment is found.
 */
export async function duplicateOf(notebook: Notebook, id: number): Promise<DuplicateOf | null> {
  const row = await notebook.readExperimentIdentity(id);
  if (row === undefined || row.decision !== 'skipped' || row.reason !== 'duplicate') return null;
  const others = await notebook.readEvaluatedThrough(row.round, id);
  const same = others.find((other) => other.candidateHash === row.candidateHash);
  if (same !== undefined)
    return { experimentId: Number(same.id), sameContent: true, distance: bigramJaccardDistance(same.delta, row.delta) };
  let best: DuplicateOf | null = null;
  for (const other of others) {
    const distance = bigramJaccardDistance(other.delta, row.delta);
    if (best === null || distance < best.distance)
      best = { experimentId: Number(other.id), sameContent: false, distance };
  }
  return best;
}
