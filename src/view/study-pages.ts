/**
 * What the viewer's versions, corpus, review and signals pages show, read
 * from the study's notebook. Read-only.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import type { RegistryEvent } from '../storage/activation.ts';
import { listRegistryEvents } from '../storage/activation.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import { readLastExperimentId, readVersions } from '../storage/notebook/view-queries.ts';
import { readCorpusEvents, readCorpusMembers } from '../corpus/lifecycle-store.ts';
import type { ReviewItem } from '../review/review-queue.ts';
import { listReviewItems } from '../review/review-queue.ts';
import type { EvaluationIndex, ExperimentScore, PartitionComposites } from './experiment-scores.ts';
import { type VIEW_PARTITIONS, createVersionScorer } from './experiment-scores.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** One artifact version as the versions page lists it. */
export interface VersionSummary {
  id: number;
  hash: string;
  /** 'seed' | 'accepted' | 'approved' | 'imported' */
  source: string;
  parentId: number | null;
  experimentId: number | null;
  /** The accepted experiment's delta, when it came from one. */
  delta: string | null;
  createdAt: string;
  active: boolean;
  /**
   * Composites per partition on the partitions in force at the latest decision
   * (null: not evaluated on them): the gate's measurement of that version on
   * the same membership nearest that decision, else computed from the stored
   * results (see `createVersionScorer`).
   */
  composites: PartitionComposites;
  /** Lines of text. */
  lines: number;
}

/** The versions page. */
export interface VersionsPage {
  activeVersion: number | null;
  versions: VersionSummary[];
  registryEvents: RegistryEvent[];
}

/** Lists the versions, newest last. */
export async function loadVersionsPage(
  db: StudyDatabase,
  index: EvaluationIndex,
  scores: readonly ExperimentScore[],
): Promise<VersionsPage> {
  const active = await getRegistryVersion(db, 'active');
  const rows = await readVersions(db);
  const deltas = new Map(
    scores.filter((score) => score.acceptedVersion !== null).map((score) => [score.acceptedVersion!, score.delta]),
  );
  const latest = scores.filter((score) => score.decision !== 'skipped').at(-1);
  const scorer = createVersionScorer(index, scores, new Map(rows.map((row) => [row.id, row.hash])));
  const versions: VersionSummary[] = [];
  for (const row of rows) {
    versions.push({
      id: row.id,
      hash: row.hash,
      source: row.source,
      parentId: row.parent_id,
      experimentId: row.experiment_id,
      delta: deltas.get(row.id) ?? null,
      createdAt: row.created_at,
      active: row.id === active?.id,
      composites:
        latest === undefined
          ? { optimization: null, anchor: null, shadow: null }
          : await scorer.composites(row.hash, latest),
      lines: row.text === '' ? 0 : row.text.split('\n').length - (row.text.endsWith('\n') ? 1 : 0),
    });
  }
  return {
    activeVersion: active?.id ?? null,
    versions,
    registryEvents: await listRegistryEvents(db, 'active'),
  };
}

/** Partition sizes after one group of corpus moves. */
export interface PartitionSizes {
  /** The last experiment decided when the moves happened (0: before any). */
  experimentId: number;
  at: string;
  sizes: Record<(typeof VIEW_PARTITIONS)[number], number>;
}

/** The corpus page. */
export interface CorpusPage {
  /** Current members per partition ('removed' apart). */
  partitions: Record<string, number>;
  /** Shadow members now, most exposed first. */
  shadow: Array<{ exampleId: string; exposures: number; since: string | null; origin: string }>;
  /** Every move but the initial placement, oldest first. */
  events: Array<{
    id: number;
    exampleId: string | null;
    kind: string;
    from: string | null;
    to: string | null;
    reason: string;
    experimentId: number | null;
    createdAt: string;
  }>;
  /** Partition sizes over experiments, replayed from the moves. */
  sizes: PartitionSizes[];
  counts: Record<string, number>;
  /** corpusPolicy of kloop.yaml, when known. */
  policy: { graduateAfterDecisions: number; maxShadowExposures: number; rotateSlice: number } | null;
}

/** Reads the corpus lifecycle; the sizes run up to the last experiment. */
export async function loadCorpusPage(db: StudyDatabase, policy: CorpusPage['policy']): Promise<CorpusPage> {
  const lastExperiment = await readLastExperimentId(db);
  const members = await readCorpusMembers(openNotebook(db));
  const events = await readCorpusEvents(openNotebook(db));
  const partitions: Record<string, number> = {};
  for (const member of members) partitions[member.partition] = (partitions[member.partition] ?? 0) + 1;
  const counts: Record<string, number> = {};
  const current = new Map<string, string>();
  const sizes: PartitionSizes[] = [];
  const tally = (): PartitionSizes['sizes'] => {
    const result = { optimization: 0, anchor: 0, shadow: 0 };
    for (const partition of current.values()) if (partition in result) result[partition as keyof typeof result] += 1;
    return result;
  };
  for (const event of events) {
    counts[event.kind] = (counts[event.kind] ?? 0) + 1;
    if (event.exampleId !== null) {
      if (event.to === null || event.to === 'removed') current.delete(event.exampleId);
      else current.set(event.exampleId, event.to);
    }
    const experimentId = event.experimentId ?? 0;
    const last = sizes.at(-1);
    if (last !== undefined && last.experimentId === experimentId) {
      last.sizes = tally();
      last.at = event.createdAt;
    } else sizes.push({ experimentId, at: event.createdAt, sizes: tally() });
  }
  const final = sizes.at(-1);
  if (final !== undefined && lastExperiment > final.experimentId)
    sizes.push({ experimentId: lastExperiment, at: final.at, sizes: { ...final.sizes } });
  return {
    partitions,
    shadow: members
      .filter((member) => member.partition === 'shadow')
      .map((member) => ({
        exampleId: member.exampleId,
        exposures: member.shadowExposures,
        since: member.shadowSince,
        origin: member.origin,
      }))
      .sort((left, right) => right.exposures - left.exposures || left.exampleId.localeCompare(right.exampleId)),
    events: events
      .filter((event) => event.kind !== 'initial')
      .map((event) => ({
        id: event.id,
        exampleId: event.exampleId,
        kind: event.kind,
        from: event.from,
        to: event.to,
        reason: event.reason,
        experimentId: event.experimentId,
        createdAt: event.createdAt,
      })),
    sizes,
    counts,
    policy,
  };
}

/** The review page: every item, pending first. */
export async function loadReviewPage(
  db: StudyDatabase,
): Promise<{ items: ReviewItem[]; counts: Record<string, number> }> {
  const items = await listReviewItems(db, { status: 'all' });
  const counts: Record<string, number> = { pending: 0, approved: 0, rejected: 0 };
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  const order = (item: ReviewItem): number => (item.status === 'pending' ? 0 : 1);
  return { items: [...items].sort((left, right) => order(left) - order(right) || right.id - left.id), counts };
}
