/**
 * The propose phase of a round: ask the proposer (seeded by the study seed,
 * the round and the attempt), record the call, and drop what was tried
 * before or is a near-duplicate of a delta already evaluated — before
 * anything is paid for.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { Candidate, ProposalResult } from '../proposers/proposer.ts';
import { bigramJaccardDistance, createSeededRandom } from '../stats/index.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { PriorExperiments } from './notebook.ts';
import { MAX_EVALUATION_FAILURES } from './notebook.ts';

/** The seed of a round's proposer call: attempt 0 keeps the seeding of earlier releases. */
export function proposalSeed(studySeed: number, round: number, attempt: number): number {
  return studySeed * 7919 + round + attempt * 104_729;
}

/** Asks the proposer for the round's candidates. Throws what must stop the run (infrastructure, budget, abort). */
export function askProposer(input: {
  study: LoadedStudy;
  base: ArtifactVersion;
  baseOptimization: PartitionScore;
  prior: PriorExperiments;
  round: number;
  attempt: number;
  evaluateOptimization: (text: string) => Promise<PartitionScore>;
  signal?: AbortSignal;
}): Promise<ProposalResult> {
  const { study } = input;
  const outputContract = study.task.outputContract?.();
  return study.proposer.propose({
    incumbentText: input.base.text,
    instructions: study.instructions,
    constraints: study.constraintsText,
    limits: { editableSections: study.constraints.editableSections, maxArtifactCharacters: study.constraints.maxArtifactCharacters },
    examples: study.partitions.optimization,
    incumbentScores: input.baseOptimization,
    evaluateOptimization: input.evaluateOptimization,
    history: input.prior.history,
    triedHashes: input.prior.triedHashes,
    maxCandidates: study.candidatesPerRound,
    random: createSeededRandom(proposalSeed(study.seed, input.round, input.attempt)),
    attempt: input.attempt,
    ...(outputContract !== undefined ? { outputContract } : {}),
    ...(input.signal !== undefined ? { signal: input.signal } : {}),
  });
}

/** True when the proposer's answer failed as a whole: nothing usable, and at least one failure. */
export function answerFailed(result: ProposalResult): boolean {
  return result.candidates.length === 0 && (result.repeats ?? 0) === 0 && result.failures.length > 0;
}

/** A candidate dropped before evaluation, and why. */
export interface SkippedCandidate {
  candidate: Candidate;
  hash: string;
  /** Bigram Jaccard distance to the nearest earlier delta (1 when there is none). */
  distance: number;
  /**
   * `duplicate`: tried before or a near-duplicate; `evaluation_failed`: its
   * evaluation failed {@link MAX_EVALUATION_FAILURES} times before.
   */
  kind: 'duplicate' | 'evaluation_failed';
  /** How many evaluations of it failed before (`evaluation_failed` only). */
  failures?: number;
  reason: string;
}

/**
 * Splits the proposer's candidates into fresh ones and ones skipped before
 * evaluation: a candidate whose evaluation failed {@link MAX_EVALUATION_FAILURES}
 * times before, the same content as an artifact evaluated before, or a delta
 * within `gate.minDeltaDistance` (bigram Jaccard distance) of a delta
 * evaluated before or of a fresh candidate earlier in this round. Deltas
 * describe only what a candidate changes (the lines it adds and removes, or
 * the playbook edit), so a new line added to a growing section is compared
 * with other added lines, not with the section.
 */
export function dedupeCandidates(
  candidates: readonly Candidate[],
  prior: PriorExperiments,
  minDeltaDistance: number,
): { fresh: Candidate[]; skipped: SkippedCandidate[]; distances: number[] } {
  const fresh: Candidate[] = [];
  const skipped: SkippedCandidate[] = [];
  const distances: number[] = [];
  const deltas = [...prior.deltas];
  const hashes = new Set(prior.triedHashes);
  for (const candidate of candidates) {
    const hash = contentHash(candidate.text);
    const distance = deltas.length === 0 ? 1 : Math.min(...deltas.map((delta) => bigramJaccardDistance(delta, candidate.delta)));
    distances.push(distance);
    const failed = prior.failedEvaluations.get(hash);
    if (failed !== undefined && failed.count >= MAX_EVALUATION_FAILURES) {
      skipped.push({
        candidate,
        hash,
        distance,
        kind: 'evaluation_failed',
        failures: failed.count,
        reason: `its evaluation failed in the infrastructure ${failed.count} times before (${MAX_EVALUATION_FAILURES} at most): not tried again${failed.detail !== '' ? `; last: ${failed.detail}` : ''}`,
      });
      continue;
    }
    const reason = hashes.has(hash)
      ? 'same content as an artifact already evaluated'
      : distance < minDeltaDistance
        ? `delta too close to one already evaluated (bigram Jaccard distance ${distance.toFixed(3)} < ${minDeltaDistance})`
        : undefined;
    if (reason !== undefined) {
      skipped.push({ candidate, hash, distance, kind: 'duplicate', reason });
      continue;
    }
    hashes.add(hash);
    deltas.push(candidate.delta);
    fresh.push(candidate);
  }
  return { fresh, skipped, distances };
}
