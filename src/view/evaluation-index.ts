/**
 * The per-partition store of experiments recorded before results were stored
 * per example (`evaluations`), indexed for the viewer, with the reads of the
 * per-example store and the corpus history: what the scores of
 * src/view/experiment-scores.ts are read from (see its module comment).
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readMembershipMoves } from '../storage/notebook/view-queries.ts';
import type { MembershipMoveRow } from '../storage/notebook/view-queries.ts';
import type { EvaluationRow } from '../storage/notebook/view-results-queries.ts';
import { readEvaluations } from '../storage/notebook/view-results-queries.ts';
import type { EvaluationUsage, ExampleResultStore, MembershipHistory, ViewPartition } from './stored-results.ts';
import { VIEW_PARTITIONS, loadMembershipHistory, openExampleResults } from './stored-results.ts';

/** A composite in [0, 1] per partition; null = not evaluated or nothing valid. */
export type PartitionComposites = Record<ViewPartition, number | null>;

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

export const EMPTY_USAGE: EvaluationUsage = Object.freeze({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });

export function addUsage(left: EvaluationUsage, right: EvaluationUsage): EvaluationUsage {
  return {
    calls: left.calls + right.calls,
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
    costUsd: left.costUsd + right.costUsd,
  };
}

export function usageOf(rows: readonly EvaluationRow[]): EvaluationUsage {
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
export function repeatRows(rows: readonly EvaluationRow[], membership: string, repeats: number): EvaluationRow[] {
  return rows.filter((row) => row.partition_hash === membership && row.repeat < repeats);
}

/** The membership of the latest evaluation stored at or before `at`, if any. */
export function membershipAt(rows: readonly EvaluationRow[], at: string): string | null {
  let best: EvaluationRow | undefined;
  for (const row of rows)
    if (row.created_at <= at && (best === undefined || row.created_at >= best.created_at)) best = row;
  return best?.partition_hash ?? null;
}

export const NO_COMPOSITES: Readonly<PartitionComposites> = Object.freeze({
  optimization: null,
  anchor: null,
  shadow: null,
});

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
export interface CorpusSegments {
  /** Experiment ids after which partitions changed, ascending (0: before the first decision). */
  boundaries: number[];
  /** ISO time segment `index` began (null: open, the study's start or beyond the last move). */
  startOf(index: number): string | null;
}

export async function loadCorpusSegments(db: StudyDatabase): Promise<CorpusSegments> {
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
