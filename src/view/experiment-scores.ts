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
import type { StudyDatabase } from '../storage/database.ts';
import type { MembershipMoveRow } from '../storage/notebook/view-queries.ts';
import { readExperiments, readMembershipMoves, readVersionHashes } from '../storage/notebook/view-queries.ts';
import type { EvaluationRow } from '../storage/notebook/view-results-queries.ts';
import { readEvaluations } from '../storage/notebook/view-results-queries.ts';
import type { Evidence, EvidenceScores } from './evidence.ts';
import { gateDelta, gatePValue, gateRepeatsOfSides, gateWelchPValue, parseEvidence } from './evidence.ts';
import type { EvaluationUsage, ExampleResultStore, MembershipHistory, ViewPartition } from './stored-results.ts';
import {
  VIEW_PARTITIONS,
  compositeFromResults,
  loadMembershipHistory,
  membershipKey,
  openExampleResults,
} from './stored-results.ts';

export { VIEW_PARTITIONS, type EvaluationUsage, type ViewPartition } from './stored-results.ts';

/** A composite in [0, 1] per partition; null = not evaluated or nothing valid. */
export type PartitionComposites = Record<ViewPartition, number | null>;

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

/** Stored evaluations of the per-partition store indexed by (fingerprint, artifact, partition), with the reads of the per-example store. */
export interface EvaluationIndex {
  rows(fingerprint: string, artifactHash: string, partition: string): readonly EvaluationRow[];
  /** The membership of the latest evaluation of `partition` (any artifact) stored in [from, to); null bounds are open. */
  latestMembership(fingerprint: string, partition: string, from: string | null, to: string | null): string | null;
  /** The per-partition store's usage (evaluations recorded before results were stored per example). */
  total(): EvaluationUsage;
  /** True when the per-partition store holds any evaluation. */
  readonly hasLegacy: boolean;
  /** Results per example and repeat (`example_results`). */
  results: ExampleResultStore;
  /** The partitions in force at each decision, from the corpus history. */
  memberships: MembershipHistory;
  /**
   * Everything stored: calls = results stored per example and repeat (the
   * per-partition store's were copied in when the notebook was migrated);
   * tokens and cost of those results plus the per-partition store's (whose
   * copies carry no usage, so nothing counts twice).
   */
  storedTotal(): Promise<EvaluationUsage>;
}

const EMPTY_USAGE: EvaluationUsage = Object.freeze({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });

function addUsage(left: EvaluationUsage, right: EvaluationUsage): EvaluationUsage {
  return {
    calls: left.calls + right.calls,
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
    costUsd: left.costUsd + right.costUsd,
  };
}

function usageOf(rows: readonly EvaluationRow[]): EvaluationUsage {
  const sum = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  for (const row of rows) {
    sum.calls += Number(row.total);
    try {
      const usage = JSON.parse(row.usage) as { inputTokens?: unknown; outputTokens?: unknown; costUsd?: unknown };
      sum.inputTokens += typeof usage.inputTokens === 'number' ? usage.inputTokens : 0;
      sum.outputTokens += typeof usage.outputTokens === 'number' ? usage.outputTokens : 0;
      sum.costUsd += typeof usage.costUsd === 'number' ? usage.costUsd : 0;
    } catch {
      // unreadable usage counts as none
    }
  }
  return sum;
}

/** Loads every evaluation of the per-partition store (not its per-example rows), and opens the per-example store and the corpus history. */
export async function loadEvaluationIndex(db: StudyDatabase): Promise<EvaluationIndex> {
  let rows: EvaluationRow[] = [];
  try {
    rows = await readEvaluations(db);
  } catch {
    rows = []; // a notebook without the per-partition store
  }
  const index = new Map<string, EvaluationRow[]>();
  for (const row of rows) {
    const key = `${row.fingerprint}\u0000${row.artifact_hash}\u0000${row.partition}`;
    const list = index.get(key);
    if (list === undefined) index.set(key, [row]);
    else list.push(row);
  }
  const results = await openExampleResults(db);
  const memberships = await loadMembershipHistory(db);
  const legacyTotal = usageOf(rows);
  return {
    rows: (fingerprint, artifactHash, partition) =>
      index.get(`${fingerprint}\u0000${artifactHash}\u0000${partition}`) ?? [],
    latestMembership: (fingerprint, partition, from, to) => {
      let best: EvaluationRow | undefined;
      for (const row of rows) {
        if (row.fingerprint !== fingerprint || row.partition !== partition) continue;
        if ((from !== null && row.created_at < from) || (to !== null && row.created_at >= to)) continue;
        if (best === undefined || row.created_at >= best.created_at) best = row;
      }
      return best?.partition_hash ?? null;
    },
    total: () => legacyTotal,
    hasLegacy: rows.length > 0,
    results,
    memberships,
    storedTotal: async () => {
      if (!results.available) return legacyTotal;
      const stored = await results.total();
      return {
        calls: stored.calls,
        inputTokens: stored.inputTokens + legacyTotal.inputTokens,
        outputTokens: stored.outputTokens + legacyTotal.outputTokens,
        costUsd: stored.costUsd + legacyTotal.costUsd,
      };
    },
  };
}

/**
 * Mean composite over the valid example-repeats of the given repeat rows
 * (Σ composite·valid / Σ valid); null when nothing was valid.
 */
export function meanComposite(rows: readonly EvaluationRow[]): number | null {
  // One repeat: its stored composite is already the mean over its valid examples (exactly, no re-weighting).
  if (rows.length === 1) return Number(rows[0]!.total) - Number(rows[0]!.invalid) > 0 ? rows[0]!.composite : null;
  let weighted = 0;
  let valid = 0;
  for (const row of rows) {
    const count = Number(row.total) - Number(row.invalid);
    if (row.composite === null || count <= 0) continue;
    weighted += row.composite * count;
    valid += count;
  }
  return valid === 0 ? null : weighted / valid;
}

/** The rows of one membership, repeats 0..repeats−1. */
function repeatRows(rows: readonly EvaluationRow[], membership: string, repeats: number): EvaluationRow[] {
  return rows.filter((row) => row.partition_hash === membership && row.repeat < repeats);
}

/** The membership of the latest evaluation stored at or before `at`, if any. */
function membershipAt(rows: readonly EvaluationRow[], at: string): string | null {
  let best: EvaluationRow | undefined;
  for (const row of rows)
    if (row.created_at <= at && (best === undefined || row.created_at >= best.created_at)) best = row;
  return best?.partition_hash ?? null;
}

const NO_COMPOSITES: Readonly<PartitionComposites> = Object.freeze({ optimization: null, anchor: null, shadow: null });

/** Which stored evaluations of one artifact to read (the per-partition store). */
export interface CompositesQuery {
  fingerprint: string;
  artifactHash: string;
  /** Membership hash per partition (null: none known, composite null). */
  memberships: Readonly<Record<ViewPartition, string | null>>;
  /** Repeats 0..repeats−1. */
  repeats: number;
  /** Only evaluations stored at or before this ISO time; null = any. */
  upTo: string | null;
}

/** An artifact's composites per partition from the per-partition store (experiments recorded before results were stored per example). */
export function compositesOf(index: EvaluationIndex, query: CompositesQuery): PartitionComposites {
  const result = { ...NO_COMPOSITES };
  for (const partition of VIEW_PARTITIONS) {
    const membership = query.memberships[partition];
    if (membership === null) continue;
    const rows = index
      .rows(query.fingerprint, query.artifactHash, partition)
      .filter((row) => query.upTo === null || row.created_at <= query.upTo!);
    result[partition] = meanComposite(repeatRows(rows, membership, query.repeats));
  }
  return result;
}

/** Corpus moves that changed the partitions, grouped by the experiment after which they happened. */
interface CorpusSegments {
  /** Experiment ids after which partitions changed, ascending (0: before the first decision). */
  boundaries: number[];
  /** ISO time segment `index` began (null: open, the study's start or beyond the last move). */
  startOf(index: number): string | null;
}

async function loadCorpusSegments(db: StudyDatabase): Promise<CorpusSegments> {
  let rows: MembershipMoveRow[] = [];
  try {
    rows = await readMembershipMoves(db);
  } catch {
    rows = []; // a database without the corpus lifecycle
  }
  const starts = new Map<number, string>();
  for (const row of rows) {
    const boundary = row.experimentId ?? 0;
    if (boundary > 0 && !starts.has(boundary)) starts.set(boundary, row.createdAt);
  }
  const boundaries = [...starts.keys()].sort((left, right) => left - right);
  return {
    boundaries,
    startOf: (index) => (index <= 0 || index > boundaries.length ? null : starts.get(boundaries[index - 1]!)!),
  };
}

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

/** Scores of every experiment, oldest first. */
export async function loadExperimentScores(db: StudyDatabase, index?: EvaluationIndex): Promise<ExperimentScore[]> {
  const evaluations = index ?? (await loadEvaluationIndex(db));
  const experiments = await readExperiments(db);
  const versions = await readVersionHashes(db);

  // Pass 1: each experiment's own memberships and repeats (legacy: from the per-partition store).
  const own = experiments.map((row) => {
    const evidence = parseEvidence(row.evidence);
    const legacy = evidence.scores === null;
    const hashes = {} as Record<ViewPartition, string | null>;
    let storedRepeats = 0;
    for (const partition of VIEW_PARTITIONS) {
      hashes[partition] = null;
      if (!legacy || !evaluations.hasLegacy) continue;
      const rows = evaluations
        .rows(row.fingerprint, row.candidate_hash, partition)
        .filter((candidate) => candidate.created_at <= row.created_at);
      hashes[partition] = membershipAt(rows, row.created_at);
      if (partition === 'optimization' && hashes[partition] !== null)
        storedRepeats = new Set(
          rows
            .filter((candidate) => candidate.partition_hash === hashes[partition])
            .map((candidate) => candidate.repeat),
        ).size;
    }
    const sides = gateRepeatsOfSides(evidence);
    const known = sides.candidate !== null || storedRepeats > 0;
    const repeats = sides.candidate ?? Math.max(1, storedRepeats);
    return { row, evidence, legacy, hashes, known, repeats, incumbentRepeats: sides.incumbent ?? repeats };
  });
  // Repeats no record says (a candidate skipped or refused before the gate): those of the decision before it,
  // and that decision's incumbent repeats when it had the same incumbent.
  let previous: (typeof own)[number] | undefined;
  for (const entry of own) {
    if (entry.known) previous = entry;
    else if (previous !== undefined) {
      entry.repeats = previous.repeats;
      entry.incumbentRepeats =
        previous.row.base_version_id === entry.row.base_version_id ? previous.incumbentRepeats : previous.repeats;
    }
  }
  // Pass 2 (legacy): a partition an experiment did not evaluate (shadow, when the gate stopped before it) had the
  // membership of the other experiments between the same corpus moves (graduations, rotations,
  // admissions happen between rounds; a move recorded with experiment_id k came after decision k).
  const legacyEntries = own.filter((entry) => entry.legacy);
  if (evaluations.hasLegacy && legacyEntries.length > 0) {
    const segments = await loadCorpusSegments(db);
    const segmentOf = (experimentId: number): number =>
      segments.boundaries.filter((boundary) => boundary < experimentId).length;
    for (const partition of VIEW_PARTITIONS) {
      const known = new Map<string, string>();
      for (const entry of legacyEntries) {
        const hash = entry.hashes[partition];
        const key = `${entry.row.fingerprint}\u0000${segmentOf(entry.row.id)}`;
        if (hash !== null && !known.has(key)) known.set(key, hash);
      }
      for (const entry of legacyEntries) {
        if (entry.hashes[partition] !== null) continue;
        const segment = segmentOf(entry.row.id);
        entry.hashes[partition] =
          known.get(`${entry.row.fingerprint}\u0000${segment}`) ??
          // No experiment between those moves evaluated it: any evaluation of the partition stored in that time window.
          evaluations.latestMembership(
            entry.row.fingerprint,
            partition,
            segments.startOf(segment),
            segments.startOf(segment + 1),
          ) ??
          null;
      }
    }
  }
  // Every other membership: reconstructed from the corpus history.
  for (const entry of own) {
    const memberships = evaluations.memberships.at(entry.row.id);
    for (const partition of VIEW_PARTITIONS) {
      const members = memberships[partition];
      if (entry.hashes[partition] === null && members !== null) entry.hashes[partition] = membershipKey(members);
    }
  }

  // Pass 3: what the evidence (or the per-partition store) holds.
  const scores: ExperimentScore[] = own.map(({ row, evidence, legacy, hashes, repeats, incumbentRepeats }) => {
    const skipped = row.decision === 'skipped';
    const recorded = evidence.scores;
    const at = (artifactHash: string | undefined, upTo: string | null, count: number): PartitionComposites =>
      artifactHash === undefined || !legacy || !evaluations.hasLegacy
        ? { ...NO_COMPOSITES }
        : compositesOf(evaluations, {
            fingerprint: row.fingerprint,
            artifactHash,
            memberships: hashes,
            repeats: count,
            upTo,
          });
    const candidate = skipped
      ? { ...NO_COMPOSITES }
      : recorded !== null
        ? evidenceCandidate(recorded)
        : at(row.candidate_hash, row.created_at, repeats);
    if (!evidence.shadowConsulted) candidate.shadow = null;
    const incumbentBefore =
      recorded !== null ? evidenceIncumbent(recorded) : at(versions.get(row.base_version_id), null, incumbentRepeats);
    let usage: EvaluationUsage = EMPTY_USAGE;
    if (recorded !== null) {
      const calls = VIEW_PARTITIONS.reduce((sum, partition) => sum + (recorded[partition]?.evaluated ?? 0), 0);
      usage = { calls, ...recorded.usage };
    } else if (!skipped && evaluations.hasLegacy) {
      usage = VIEW_PARTITIONS.reduce<EvaluationUsage>((sum, partition) => {
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
      incumbentAfter: incumbentBefore, // set below
      incumbentBefore,
      usage,
      repeats,
      incumbentRepeats,
      scoreSource,
      partitionHashes: hashes,
      evidence,
    };
  });

  // Pass 4: what no experiment's own record holds, resolved across the notebook.
  const scorer = createVersionScorer(evaluations, scores, versions);
  for (const score of scores) {
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
    if (score.decision === 'accepted') {
      const acceptedHash =
        score.acceptedVersion === null
          ? score.candidateHash
          : (versions.get(score.acceptedVersion) ?? score.candidateHash);
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
      score.incumbentAfter = after;
    } else score.incumbentAfter = before;
    // A candidate refused before the gate (its evaluation failed in the infrastructure): the results it stored.
    if (recorded === null && score.decision !== 'skipped' && score.usage.calls === 0)
      score.usage = await storedUsageOf(evaluations, score);
  }
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
