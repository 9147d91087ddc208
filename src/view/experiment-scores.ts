/**
 * The score of every experiment, from what the notebook stored: the
 * evaluations (`evaluations`, keyed by evaluator fingerprint, artifact hash,
 * partition membership hash and repeat) and the decision's evidence.
 *
 * For experiment E on partition P:
 *
 * - the candidate's composite is the mean over its valid example-repeats on P
 *   (repeats 0..R−1, R as the gate compared them), from the evaluation stored
 *   at or before E's decision, so a partition that changed later (graduation,
 *   rotation) does not leak in;
 * - the membership of P "in force" at E is the candidate's; for a partition
 *   E did not evaluate (shadow, when the gate stopped before it) it is carried
 *   over from the nearest experiment that did;
 * - the incumbent's composite is its evaluation on that same membership;
 * - the incumbent after E is the accepted version, or the incumbent itself.
 *
 * A composite is null when nothing was valid or nothing was stored (a
 * duplicate skipped before evaluation, or a partition never evaluated for
 * that version): never 0.
 */
import type { StudyDatabase } from '../storage/database.ts';
import type { Evidence } from './evidence.ts';
import { gateDelta, gatePValue, gateRepeats, gateWelchPValue, parseEvidence } from './evidence.ts';

/** The three named partitions, in report order. */
export const VIEW_PARTITIONS = ['optimization', 'anchor', 'shadow'] as const;
export type ViewPartition = (typeof VIEW_PARTITIONS)[number];

/** A composite in [0, 1] per partition; null = not evaluated or nothing valid. */
export type PartitionComposites = Record<ViewPartition, number | null>;

/** Executor usage of stored evaluations. */
export interface EvaluationUsage {
  /** Executor calls: example-repeats evaluated. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

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
  /** The p-value the significance check decided on; null when it did not run. */
  pValue: number | null;
  /** Welch's p-value on run-level composites, when the gate ran it. */
  welchPValue: number | null;
  /** The candidate's composites per partition (shadow only when the gate consulted it). */
  candidate: PartitionComposites;
  /** The incumbent's composites per partition after the decision (the accepted version's, or the incumbent's). */
  incumbentAfter: PartitionComposites;
  /** The incumbent's composites per partition before the decision. */
  incumbentBefore: PartitionComposites;
  /** Executor usage of the candidate's evaluations. */
  usage: EvaluationUsage;
  /** Repeats compared. */
  repeats: number;
  /** Membership hash of each partition in force at this decision (null: unknown). */
  partitionHashes: Record<ViewPartition, string | null>;
  evidence: Evidence;
}

interface EvaluationRow {
  id: number;
  fingerprint: string;
  artifact_hash: string;
  partition: string;
  partition_hash: string;
  repeat: number;
  composite: number | null;
  invalid: number;
  total: number;
  usage: string;
  created_at: string;
}

/** Stored evaluations indexed by (fingerprint, artifact, partition). */
export interface EvaluationIndex {
  rows(fingerprint: string, artifactHash: string, partition: string): readonly EvaluationRow[];
  /** The membership of the latest evaluation of `partition` (any artifact) stored in [from, to); null bounds are open. */
  latestMembership(fingerprint: string, partition: string, from: string | null, to: string | null): string | null;
  /** All evaluations' usage. */
  total(): EvaluationUsage;
}

const EMPTY_USAGE: EvaluationUsage = Object.freeze({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });

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

/** Loads every stored evaluation (not its per-example rows). */
export async function loadEvaluationIndex(db: StudyDatabase): Promise<EvaluationIndex> {
  const rows = (await db
    .selectFrom('evaluations')
    .select(['id', 'fingerprint', 'artifact_hash', 'partition', 'partition_hash', 'repeat', 'composite', 'invalid', 'total', 'usage', 'created_at'])
    .orderBy('id')
    .execute()) as EvaluationRow[];
  const index = new Map<string, EvaluationRow[]>();
  for (const row of rows) {
    const key = `${row.fingerprint}\u0000${row.artifact_hash}\u0000${row.partition}`;
    const list = index.get(key);
    if (list === undefined) index.set(key, [row]);
    else list.push(row);
  }
  return {
    rows: (fingerprint, artifactHash, partition) => index.get(`${fingerprint}\u0000${artifactHash}\u0000${partition}`) ?? [],
    latestMembership: (fingerprint, partition, from, to) => {
      let best: EvaluationRow | undefined;
      for (const row of rows) {
        if (row.fingerprint !== fingerprint || row.partition !== partition) continue;
        if ((from !== null && row.created_at < from) || (to !== null && row.created_at >= to)) continue;
        if (best === undefined || row.created_at >= best.created_at) best = row;
      }
      return best?.partition_hash ?? null;
    },
    total: () => usageOf(rows),
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
  for (const row of rows) if (row.created_at <= at && (best === undefined || row.created_at >= best.created_at)) best = row;
  return best?.partition_hash ?? null;
}

const NO_COMPOSITES: Readonly<PartitionComposites> = Object.freeze({ optimization: null, anchor: null, shadow: null });

/** Which stored evaluations of one artifact to read. */
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

/** An artifact's composites per partition from the stored evaluations. */
export function compositesOf(index: EvaluationIndex, query: CompositesQuery): PartitionComposites {
  const result = { ...NO_COMPOSITES };
  for (const partition of VIEW_PARTITIONS) {
    const membership = query.memberships[partition];
    if (membership === null) continue;
    const rows = index.rows(query.fingerprint, query.artifactHash, partition).filter((row) => query.upTo === null || row.created_at <= query.upTo!);
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

/** Kinds of corpus events that change a partition's membership (the initial placement aside). */
const MEMBERSHIP_MOVES = ['admitted', 'shadow', 'graduated', 'rotated_out', 'removed'];

async function loadCorpusSegments(db: StudyDatabase): Promise<CorpusSegments> {
  let rows: Array<{ experiment_id: number | null; created_at: string }> = [];
  try {
    rows = await db.selectFrom('corpus_events').select(['experiment_id', 'created_at']).where('kind', 'in', MEMBERSHIP_MOVES).orderBy('id').execute();
  } catch {
    rows = []; // a database without the corpus lifecycle
  }
  const starts = new Map<number, string>();
  for (const row of rows) {
    const boundary = row.experiment_id ?? 0;
    if (boundary > 0 && !starts.has(boundary)) starts.set(boundary, row.created_at);
  }
  const boundaries = [...starts.keys()].sort((left, right) => left - right);
  return { boundaries, startOf: (index) => (index <= 0 || index > boundaries.length ? null : starts.get(boundaries[index - 1]!)!) };
}

interface ExperimentRow {
  id: number;
  run_id: number;
  round: number;
  proposer: string;
  base_version_id: number;
  candidate_hash: string;
  delta: string;
  rationale: string;
  decision: string;
  reason: string;
  evidence: string;
  accepted_version_id: number | null;
  fingerprint: string;
  created_at: string;
}

/** Scores of every experiment, oldest first. */
export async function loadExperimentScores(db: StudyDatabase, index?: EvaluationIndex): Promise<ExperimentScore[]> {
  const evaluations = index ?? (await loadEvaluationIndex(db));
  const experiments = (await db.selectFrom('experiments').selectAll().orderBy('id').execute()) as ExperimentRow[];
  const versions = new Map((await db.selectFrom('artifact_versions').select(['id', 'hash']).execute()).map((row) => [row.id, row.hash]));

  // Pass 1: each experiment's own memberships and repeats.
  const own = experiments.map((row) => {
    const evidence = parseEvidence(row.evidence);
    const hashes = {} as Record<ViewPartition, string | null>;
    let storedRepeats = 0;
    for (const partition of VIEW_PARTITIONS) {
      const rows = evaluations.rows(row.fingerprint, row.candidate_hash, partition).filter((candidate) => candidate.created_at <= row.created_at);
      hashes[partition] = membershipAt(rows, row.created_at);
      if (partition === 'optimization' && hashes[partition] !== null) storedRepeats = new Set(rows.filter((candidate) => candidate.partition_hash === hashes[partition]).map((candidate) => candidate.repeat)).size;
    }
    return { row, evidence, hashes, repeats: gateRepeats(evidence) ?? Math.max(1, storedRepeats) };
  });
  // Pass 2: a partition an experiment did not evaluate (shadow, when the gate stopped before it) had the
  // membership of the other experiments between the same corpus moves (graduations, rotations,
  // admissions happen between rounds; a move recorded with experiment_id k came after decision k).
  const segments = await loadCorpusSegments(db);
  const segmentOf = (experimentId: number): number => segments.boundaries.filter((boundary) => boundary < experimentId).length;
  for (const partition of VIEW_PARTITIONS) {
    const known = new Map<string, string>();
    for (const entry of own) {
      const hash = entry.hashes[partition];
      const key = `${entry.row.fingerprint}\u0000${segmentOf(entry.row.id)}`;
      if (hash !== null && !known.has(key)) known.set(key, hash);
    }
    for (const entry of own) {
      if (entry.hashes[partition] !== null) continue;
      const segment = segmentOf(entry.row.id);
      entry.hashes[partition] =
        known.get(`${entry.row.fingerprint}\u0000${segment}`) ??
        // No experiment between those moves evaluated it: any evaluation of the partition stored in that time window.
        evaluations.latestMembership(entry.row.fingerprint, partition, segments.startOf(segment), segments.startOf(segment + 1)) ??
        null;
    }
  }

  return own.map(({ row, evidence, hashes, repeats }) => {
    const at = (artifactHash: string | undefined, upTo: string | null): PartitionComposites =>
      artifactHash === undefined ? { ...NO_COMPOSITES } : compositesOf(evaluations, { fingerprint: row.fingerprint, artifactHash, memberships: hashes, repeats, upTo });
    const skipped = row.decision === 'skipped';
    const candidate = skipped ? { ...NO_COMPOSITES } : at(row.candidate_hash, row.created_at);
    if (!evidence.shadowConsulted) candidate.shadow = null;
    const incumbentBefore = at(versions.get(row.base_version_id), null);
    const incumbentAfter = row.decision === 'accepted' ? at(row.accepted_version_id === null ? row.candidate_hash : versions.get(row.accepted_version_id), null) : incumbentBefore;
    const usage = skipped
      ? EMPTY_USAGE
      : VIEW_PARTITIONS.reduce<EvaluationUsage>((sum, partition) => {
          const membership = hashes[partition];
          if (membership === null || (partition === 'shadow' && !evidence.shadowConsulted)) return sum;
          const part = usageOf(repeatRows(evaluations.rows(row.fingerprint, row.candidate_hash, partition).filter((candidate) => candidate.created_at <= row.created_at), membership, repeats));
          return { calls: sum.calls + part.calls, inputTokens: sum.inputTokens + part.inputTokens, outputTokens: sum.outputTokens + part.outputTokens, costUsd: sum.costUsd + part.costUsd };
        }, EMPTY_USAGE);
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
      compositeDelta: gateDelta(evidence) ?? (composite !== null && incumbentComposite !== null ? composite - incumbentComposite : null),
      pValue: gatePValue(evidence),
      welchPValue: gateWelchPValue(evidence),
      candidate,
      incumbentAfter,
      incumbentBefore,
      usage,
      repeats,
      partitionHashes: hashes,
      evidence,
    };
  });
}
