/**
 * The composites of a version at a decision that no experiment's own
 * evidence holds (steps 1–4 of the module comment of
 * src/view/experiment-scores.ts).
 */
import type { ExperimentScore } from './experiment-scores.ts';
import type { EvaluationIndex, PartitionComposites } from './evaluation-index.ts';
import { NO_COMPOSITES, compositesOf } from './evaluation-index.ts';
import type { ViewPartition } from './stored-results.ts';
import { VIEW_PARTITIONS, compositeFromResults, membershipKey } from './stored-results.ts';

/** Resolves the composites of a version at a decision (see the module comment, steps 1–4). */
export interface VersionScorer {
  /**
   * The composites of the artifact with content hash `artifactHash` on the
   * partitions in force at decision `at`, with `repeats` repeats (default the
   * incumbent's at that decision).
   */
  composites(artifactHash: string, at: ExperimentScore, repeats?: number): Promise<PartitionComposites>;
  /** One partition of {@link composites}. */
  composite(
    artifactHash: string,
    at: ExperimentScore,
    partition: ViewPartition,
    repeats?: number,
  ): Promise<number | null>;
}

interface Measurement {
  experimentId: number;
  composite: number | null;
  repeats: number;
}

/** The version hashes a decision's evidence measured, with the repeats of each side. */
function measuredSides(
  score: ExperimentScore,
  baseHash: string | undefined,
): Array<{ hash: string; side: 'incumbent' | 'candidate'; repeats: number }> {
  const sides: Array<{ hash: string; side: 'incumbent' | 'candidate'; repeats: number }> = [
    { hash: score.candidateHash, side: 'candidate', repeats: score.repeats },
  ];
  if (baseHash !== undefined) sides.push({ hash: baseHash, side: 'incumbent', repeats: score.incumbentRepeats });
  return sides;
}

/**
 * Builds the resolver of version composites over the scored experiments:
 * the gate's measurements of every decision (its evidence), indexed by
 * fingerprint, artifact, partition and membership, then the per-example
 * store. `baseHashes` maps version ids to content hashes.
 */
export function createVersionScorer(
  index: EvaluationIndex,
  scores: readonly ExperimentScore[],
  baseHashes: ReadonlyMap<number, string>,
): VersionScorer {
  const measured = new Map<string, Measurement[]>();
  const keyOf = (fingerprint: string, hash: string, partition: ViewPartition, members: readonly string[]): string =>
    `${fingerprint}\u0000${hash}\u0000${partition}\u0000${membershipKey(members)}`;
  for (const score of scores) {
    const recorded = score.evidence.scores;
    if (recorded === null) continue;
    const memberships = index.memberships.at(score.id);
    for (const partition of VIEW_PARTITIONS) {
      const compared = recorded[partition];
      const members = memberships[partition];
      if (compared === null || members === null) continue;
      for (const { hash, side, repeats } of measuredSides(score, baseHashes.get(score.baseVersion))) {
        const key = keyOf(score.fingerprint, hash, partition, members);
        const list = measured.get(key) ?? [];
        list.push({ experimentId: score.id, composite: compared[side], repeats });
        measured.set(key, list);
      }
    }
  }
  const composite = async (
    artifactHash: string,
    at: ExperimentScore,
    partition: ViewPartition,
    repeats = at.incumbentRepeats,
  ): Promise<number | null> => {
    // 1. The per-partition store, for a decision recorded before results were stored per example.
    if (at.scoreSource !== 'evidence' && index.hasLegacy) {
      const legacy = compositesOf(index, {
        fingerprint: at.fingerprint,
        artifactHash,
        memberships: at.partitionHashes,
        repeats,
        upTo: null,
      })[partition];
      if (legacy !== null) return legacy;
    }
    const members = index.memberships.at(at.id)[partition];
    if (members === null) return null;
    // 2. The nearest decision that measured this version on the same membership.
    const candidates = measured.get(keyOf(at.fingerprint, artifactHash, partition, members));
    if (candidates !== undefined && candidates.length > 0) {
      const rank = (entry: Measurement): [number, number, number] => [
        entry.repeats === repeats ? 0 : 1,
        entry.experimentId <= at.id ? 0 : 1,
        entry.experimentId <= at.id ? at.id - entry.experimentId : entry.experimentId - at.id,
      ];
      const best = [...candidates].sort((left, right) => {
        const [a, b] = [rank(left), rank(right)];
        return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
      })[0]!;
      return best.composite;
    }
    // 3. Computed from the stored results on the membership in force.
    return (
      compositeFromResults(await index.results.outcomes(at.fingerprint, artifactHash), members, repeats)?.composite ??
      null
    );
  };
  return {
    composite,
    composites: async (artifactHash, at, repeats) => {
      const result = { ...NO_COMPOSITES };
      for (const partition of VIEW_PARTITIONS)
        result[partition] = await composite(artifactHash, at, partition, repeats);
      return result;
    },
  };
}
