/**
 * The score of every experiment, from what the notebook stored. Nothing is
 * recomputed that the gate measured.
 *
 * **Experiments whose evidence carries `scores`** (every decision the gate
 * made since results are stored per example and repeat): the candidate's and
 * the incumbent's composites on each partition the gate compared
 * (optimization, anchor, and shadow when it consulted it), Δ, the p-values,
 * the repeats of each side and the candidate's usage are read from the
 * evidence as the gate recorded them.
 *
 * **Experiments recorded before** (the per-partition store: `evaluations`,
 * keyed by evaluator fingerprint, artifact hash, partition membership hash
 * and repeat), the legacy path: the candidate's composite is the mean over
 * its valid example-repeats on P (repeats 0..R−1) from the evaluation stored
 * at or before the decision; the membership of P in force is the
 * candidate's, or for a partition the experiment did not evaluate, that of
 * the experiments between the same corpus moves; the incumbent's composite is
 * its evaluation on that membership.
 *
 * **A version's composite that no experiment's own evidence holds** (the
 * incumbent on a shadow the gate did not consult, the incumbent of a
 * candidate refused before the gate, the versions page, a version activated
 * by hand) is resolved by {@link createVersionScorer}, in this order:
 *
 * 1. the legacy evaluation on the experiment's membership (legacy experiments);
 * 2. carried from the decision nearest in the notebook that measured that
 *    version on the same membership of that partition (same evaluator
 *    fingerprint; reconstructed from the corpus history) — preferring one
 *    with the requested repeats, then the latest at or before, then the
 *    earliest after;
 * 3. computed from `example_results` on the membership in force
 *    (reconstructed from the corpus history), over the repeats stored for
 *    every member, up to the requested ones;
 * 4. else null.
 *
 * A composite is null when nothing was valid or nothing was stored (a
 * duplicate skipped before evaluation, a candidate whose evaluation failed in
 * the infrastructure, a partition never evaluated for that version): never 0.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readExperiments, readVersionHashes } from '../storage/notebook/view-queries.ts';
import type { Evidence, EvidenceScores } from './evidence.ts';
import { gateDelta, gatePValue, gateWelchPValue } from './evidence.ts';
import type { EvaluationIndex, PartitionComposites } from './evaluation-index.ts';
import {
  EMPTY_USAGE,
  NO_COMPOSITES,
  addUsage,
  compositesOf,
  loadEvaluationIndex,
  repeatRows,
  usageOf,
} from './evaluation-index.ts';
import type { EvaluationUsage, ViewPartition } from './stored-results.ts';
import { VIEW_PARTITIONS, membershipKey } from './stored-results.ts';
import type { VersionScorer } from './version-scorer.ts';
import { createVersionScorer } from './version-scorer.ts';
import type { OwnEntry } from './experiment-memberships.ts';
import {
  fillLegacyMemberships,
  fillReconstructedMemberships,
  fillUnknownRepeats,
  ownEntryOf,
} from './experiment-memberships.ts';

export { VIEW_PARTITIONS, type EvaluationUsage, type ViewPartition } from './stored-results.ts';
export {
  type CompositesQuery,
  type EvaluationIndex,
  type PartitionComposites,
  compositesOf,
  loadEvaluationIndex,
  meanComposite,
} from './evaluation-index.ts';
export { type VersionScorer, createVersionScorer } from './version-scorer.ts';

/** One experiment with its scores (read-only record). */
export interface ExperimentScore {
  id: number;
  run: number;
  round: number;
  proposer: string;
  /** 'accepted' | 'refused' | 'skipped' */
  decision: string;
  /** 'accepted', or the refusal reason code */
  reason: string;
  /** The change, as the proposer described it. */
  delta: string;
  rationale: string;
  baseVersion: number;
  acceptedVersion: number | null;
  candidateHash: string;
  fingerprint: string;
  createdAt: string;
  /** The candidate's optimization composite. */
  composite: number | null;
  /** The incumbent's optimization composite on the same membership. */
  incumbentComposite: number | null;
  /** Δoptimization, candidate − incumbent: the gate's paired Δ when recorded, else the difference of composites. */
  compositeDelta: number | null;
  /** The paired test's p-value of the significance check; null when it did not run. */
  pValue: number | null;
  /** Welch's p-value on run-level composites, when the gate ran it. */
  welchPValue: number | null;
  /** The candidate's composites per partition (shadow only when the gate consulted it). */
  candidate: PartitionComposites;
  /** The incumbent's composites per partition after the decision (the accepted version's, or the incumbent's). */
  incumbentAfter: PartitionComposites;
  /** The incumbent's composites per partition before the decision. */
  incumbentBefore: PartitionComposites;
  /** Executor usage of the candidate's evaluations (calls: example-repeats evaluated; tokens and cost as first computed). */
  usage: EvaluationUsage;
  /** Repeats of the candidate compared. */
  repeats: number;
  /** Repeats of the incumbent compared (more than the candidate's for a stochastic executor's topped-up incumbent). */
  incumbentRepeats: number;
  /**
   * Where the candidate's scores come from: `evidence` (the gate's record),
   * `evaluations` (the per-partition store of experiments recorded before),
   * `none` (skipped before evaluation, refused before the gate, or nothing stored).
   */
  scoreSource: 'evidence' | 'evaluations' | 'none';
  /**
   * An identifier of each partition's membership in force at this decision:
   * the stored membership hash of the per-partition store for experiments
   * recorded before, else {@link membershipKey} of the members reconstructed
   * from the corpus history (null: unknown).
   */
  partitionHashes: Record<ViewPartition, string | null>;
  evidence: Evidence;
}

/** The candidate's composites recorded in the evidence (null for a partition the gate did not compare). */
function evidenceCandidate(scores: EvidenceScores): PartitionComposites {
  return {
    optimization: scores.optimization?.candidate ?? null,
    anchor: scores.anchor?.candidate ?? null,
    shadow: scores.shadow?.candidate ?? null,
  };
}

function evidenceIncumbent(scores: EvidenceScores): PartitionComposites {
  return {
    optimization: scores.optimization?.incumbent ?? null,
    anchor: scores.anchor?.incumbent ?? null,
    shadow: scores.shadow?.incumbent ?? null,
  };
}

/** A legacy experiment's composites of one artifact from the per-partition store; none for a recorded one. */
function legacyComposites(
  evaluations: EvaluationIndex,
  entry: OwnEntry,
  artifactHash: string | undefined,
  upTo: string | null,
  repeats: number,
): PartitionComposites {
  return artifactHash === undefined || !entry.legacy || !evaluations.hasLegacy
    ? { ...NO_COMPOSITES }
    : compositesOf(evaluations, {
        fingerprint: entry.row.fingerprint,
        artifactHash,
        memberships: entry.hashes,
        repeats,
        upTo,
      });
}

/** The candidate's usage: as the evidence recorded it, else from the per-partition store (legacy). */
function candidateUsageOf(evaluations: EvaluationIndex, entry: OwnEntry): EvaluationUsage {
  const { row, evidence, hashes, repeats } = entry;
  const recorded = evidence.scores;
  if (recorded !== null) {
    const calls = VIEW_PARTITIONS.reduce((sum, partition) => sum + (recorded[partition]?.evaluated ?? 0), 0);
    return { calls, ...recorded.usage };
  }
  if (row.decision === 'skipped' || !evaluations.hasLegacy) return EMPTY_USAGE;
  return VIEW_PARTITIONS.reduce<EvaluationUsage>((sum, partition) => {
    const membership = hashes[partition];
    if (membership === null || (partition === 'shadow' && !evidence.shadowConsulted)) return sum;
    return addUsage(
      sum,
      usageOf(
        repeatRows(
          evaluations
            .rows(row.fingerprint, row.candidate_hash, partition)
            .filter((stored) => stored.created_at <= row.created_at),
          membership,
          repeats,
        ),
      ),
    );
  }, EMPTY_USAGE);
}

/** Pass 3: what the evidence (or the per-partition store) holds of one experiment. */
function scoreOf(
  evaluations: EvaluationIndex,
  versions: ReadonlyMap<number, string>,
  entry: OwnEntry,
): ExperimentScore {
  const { row, evidence, hashes, repeats, incumbentRepeats } = entry;
  const recorded = evidence.scores;
  const candidate =
    row.decision === 'skipped'
      ? { ...NO_COMPOSITES }
      : recorded !== null
        ? evidenceCandidate(recorded)
        : legacyComposites(evaluations, entry, row.candidate_hash, row.created_at, repeats);
  if (!evidence.shadowConsulted) candidate.shadow = null;
  const incumbentBefore =
    recorded !== null
      ? evidenceIncumbent(recorded)
      : legacyComposites(evaluations, entry, versions.get(row.base_version_id), null, incumbentRepeats);
  const scoreSource: ExperimentScore['scoreSource'] =
    recorded !== null
      ? 'evidence'
      : VIEW_PARTITIONS.some((partition) => candidate[partition] !== null)
        ? 'evaluations'
        : 'none';
  const composite = candidate.optimization;
  const incumbentComposite = incumbentBefore.optimization;
  return {
    id: row.id,
    run: row.run_id,
    round: row.round,
    proposer: row.proposer,
    decision: row.decision,
    reason: row.reason,
    delta: row.delta,
    rationale: row.rationale,
    baseVersion: row.base_version_id,
    acceptedVersion: row.accepted_version_id,
    candidateHash: row.candidate_hash,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
    composite,
    incumbentComposite,
    compositeDelta:
      gateDelta(evidence) ??
      (composite !== null && incumbentComposite !== null ? composite - incumbentComposite : null),
    pValue: gatePValue(evidence),
    welchPValue: gateWelchPValue(evidence),
    candidate,
    incumbentAfter: incumbentBefore, // set by pass 4
    incumbentBefore,
    usage: candidateUsageOf(evaluations, entry),
    repeats,
    incumbentRepeats,
    scoreSource,
    partitionHashes: hashes,
    evidence,
  };
}

/** The accepted version's composites after an accepted decision: recorded, from the per-partition store, else resolved. */
async function acceptedComposites(
  evaluations: EvaluationIndex,
  scorer: VersionScorer,
  versions: ReadonlyMap<number, string>,
  score: ExperimentScore,
): Promise<PartitionComposites> {
  const recorded = score.evidence.scores;
  const acceptedHash =
    score.acceptedVersion === null ? score.candidateHash : (versions.get(score.acceptedVersion) ?? score.candidateHash);
  const after =
    recorded !== null && acceptedHash === score.candidateHash
      ? evidenceCandidate(recorded)
      : score.scoreSource === 'evaluations'
        ? compositesOf(evaluations, {
            fingerprint: score.fingerprint,
            artifactHash: acceptedHash,
            memberships: score.partitionHashes,
            repeats: score.repeats,
            upTo: null,
          })
        : { ...NO_COMPOSITES };
  for (const partition of VIEW_PARTITIONS) {
    if (after[partition] !== null || (recorded !== null && recorded[partition] !== null)) continue;
    after[partition] = await scorer.composite(acceptedHash, score, partition, score.repeats);
  }
  return after;
}

/** Pass 4: what no experiment's own record holds of one score, resolved across the notebook. */
async function resolveAcrossNotebook(
  evaluations: EvaluationIndex,
  scorer: VersionScorer,
  versions: ReadonlyMap<number, string>,
  score: ExperimentScore,
): Promise<void> {
  const recorded = score.evidence.scores;
  const baseHash = versions.get(score.baseVersion);
  const before = { ...score.incumbentBefore };
  for (const partition of VIEW_PARTITIONS) {
    // A partition the gate compared keeps its record, null (nothing valid) included.
    if (before[partition] !== null || (recorded !== null && recorded[partition] !== null) || baseHash === undefined)
      continue;
    before[partition] = await scorer.composite(baseHash, score, partition);
  }
  score.incumbentBefore = before;
  score.incumbentComposite = before.optimization;
  if (score.compositeDelta === null && score.composite !== null && before.optimization !== null)
    score.compositeDelta = score.composite - before.optimization;
  score.incumbentAfter =
    score.decision === 'accepted' ? await acceptedComposites(evaluations, scorer, versions, score) : before;
  // A candidate refused before the gate (its evaluation failed in the infrastructure): the results it stored.
  if (recorded === null && score.decision !== 'skipped' && score.usage.calls === 0)
    score.usage = await storedUsageOf(evaluations, score);
}

/** Scores of every experiment, oldest first. */
export async function loadExperimentScores(db: StudyDatabase, index?: EvaluationIndex): Promise<ExperimentScore[]> {
  const evaluations = index ?? (await loadEvaluationIndex(db));
  const experiments = await readExperiments(db);
  const versions = await readVersionHashes(db);
  const own = experiments.map((row) => ownEntryOf(evaluations, row));
  fillUnknownRepeats(own);
  await fillLegacyMemberships(db, evaluations, own);
  fillReconstructedMemberships(evaluations, own);
  const scores = own.map((entry) => scoreOf(evaluations, versions, entry));
  const scorer = createVersionScorer(evaluations, scores, versions);
  for (const score of scores) await resolveAcrossNotebook(evaluations, scorer, versions, score);
  return scores;
}

/** The results a candidate stored on the optimization and anchor partitions in force, up to its decision. */
async function storedUsageOf(index: EvaluationIndex, score: ExperimentScore): Promise<EvaluationUsage> {
  const outcomes = await index.results.outcomes(score.fingerprint, score.candidateHash);
  const memberships = index.memberships.at(score.id);
  let usage = EMPTY_USAGE;
  for (const partition of ['optimization', 'anchor'] as const) {
    for (const id of memberships[partition] ?? []) {
      for (const outcome of outcomes.get(id) ?? []) {
        if (outcome.createdAt > score.createdAt) continue;
        usage = addUsage(usage, { calls: 1, ...outcome.usage });
      }
    }
  }
  return usage;
}
