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
import type { JudgedExperiment, RetrialVerdict } from './retrials.ts';
import { retrialVerdict } from './retrials.ts';

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
  /** The deltas the last (idle) answer repeated, to name to the proposer. */
  repeatedDeltas?: readonly string[];
  evaluateOptimization: (text: string) => Promise<PartitionScore>;
  signal?: AbortSignal;
}): Promise<ProposalResult> {
  const { study } = input;
  const outputContract = study.task.outputContract?.();
  return study.proposer.propose({
    incumbentText: input.base.text,
    instructions: study.instructions,
    constraints: study.constraintsText,
    limits: {
      editableSections: study.constraints.editableSections,
      maxArtifactCharacters: study.constraints.maxArtifactCharacters,
    },
    examples: study.partitions.optimization,
    incumbentScores: input.baseOptimization,
    evaluateOptimization: input.evaluateOptimization,
    history: input.prior.history,
    triedHashes: input.prior.triedHashes,
    maxCandidates: study.candidatesPerRound,
    random: createSeededRandom(proposalSeed(study.seed, input.round, input.attempt)),
    attempt: input.attempt,
    ...(input.repeatedDeltas !== undefined && input.repeatedDeltas.length > 0
      ? { repeatedDeltas: input.repeatedDeltas }
      : {}),
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
 * times before, the same content as an artifact evaluated before, a delta
 * within `gate.minDeltaDistance` (bigram Jaccard distance) of a fresh
 * candidate earlier in this round, or of a delta judged before that the
 * re-trial rule does not reopen (src/loop/retrials.ts: judged on this same
 * incumbent, refused for a reason that is not noise, its re-trials spent).
 * A delta refused by a noisy test on an earlier incumbent comes back as a
 * re-trial (`retrials`, keyed by candidate: its trial number). Deltas
 * describe only what a candidate changes (the lines it adds and removes, or
 * the playbook edit), so a new line added to a growing section is compared
 * with other added lines, not with the section.
 *
 * @param options.baseVersionId the incumbent the candidates were proposed against (absent: every earlier delta counts as judged on it)
 * @param options.retrials `gate.retrials` (default 0: no re-trials)
 * @param options.deepen re-try a noisy refusal on the incumbent it was judged on, with more repeats (a sampled
 *   executor; default false: a deterministic one would give the same answers again)
 */
export function dedupeCandidates(
  candidates: readonly Candidate[],
  prior: PriorExperiments,
  minDeltaDistance: number,
  options: { baseVersionId?: number; retrials?: number; deepen?: boolean } = {},
): {
  fresh: Candidate[];
  skipped: SkippedCandidate[];
  distances: number[];
  retrials: Map<Candidate, Extract<RetrialVerdict, { kind: 'retrial' }>>;
} {
  const fresh: Candidate[] = [];
  const skipped: SkippedCandidate[] = [];
  const distances: number[] = [];
  const retrials = new Map<Candidate, Extract<RetrialVerdict, { kind: 'retrial' }>>();
  const judged: JudgedExperiment[] =
    prior.judged ??
    prior.deltas.map((delta, index) => ({
      id: index + 1,
      delta,
      baseVersionId: options.baseVersionId ?? 0,
      decision: 'refused',
      reason: 'judged',
    }));
  const roundDeltas: string[] = [];
  const hashes = new Set(prior.triedHashes);
  for (const candidate of candidates) {
    const hash = contentHash(candidate.text);
    const judgedDistances = judged.map((experiment) => bigramJaccardDistance(experiment.delta, candidate.delta));
    const all = [...judgedDistances, ...roundDeltas.map((delta) => bigramJaccardDistance(delta, candidate.delta))];
    const distance = all.length === 0 ? 1 : Math.min(...all);
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
    const family = judged.filter((_, index) => judgedDistances[index]! < minDeltaDistance);
    const verdict = retrialVerdict(family, options.baseVersionId, options.retrials ?? 0, {
      deepen: options.deepen ?? false,
    });
    // A re-trial on the same incumbent is the same text: judged again with more repeats, not skipped for it.
    const deepening = verdict.kind === 'retrial' && verdict.repeatsFactor !== undefined;
    const roundDistance =
      roundDeltas.length === 0
        ? 1
        : Math.min(...roundDeltas.map((delta) => bigramJaccardDistance(delta, candidate.delta)));
    const reason =
      hashes.has(hash) && !deepening
        ? 'same content as an artifact already evaluated'
        : roundDistance < minDeltaDistance
          ? `delta too close to one earlier in this round (bigram Jaccard distance ${roundDistance.toFixed(3)} < ${minDeltaDistance})`
          : verdict.kind === 'skip'
            ? `delta too close to one already evaluated (bigram Jaccard distance ${distance.toFixed(3)} < ${minDeltaDistance})${prior.judged !== undefined ? `: ${verdict.reason}` : ''}`
            : undefined;
    if (reason !== undefined) {
      skipped.push({ candidate, hash, distance, kind: 'duplicate', reason });
      continue;
    }
    if (verdict.kind === 'retrial') retrials.set(candidate, verdict);
    hashes.add(hash);
    roundDeltas.push(candidate.delta);
    fresh.push(candidate);
  }
  return { fresh, skipped, distances, retrials };
}
