/**
 * Passes 1 and 2 of the viewer's scores (src/view/experiment-scores.ts): each
 * experiment's own record, the membership of each partition in force at its
 * decision and the repeats of both sides.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import type { ExperimentRow } from '../storage/notebook/view-queries.ts';
import type { Evidence } from './evidence.ts';
import { gateRepeatsOfSides, parseEvidence } from './evidence.ts';
import type { EvaluationIndex } from './evaluation-index.ts';
import { loadCorpusSegments, membershipAt } from './evaluation-index.ts';
import type { ViewPartition } from './stored-results.ts';
import { VIEW_PARTITIONS, membershipKey } from './stored-results.ts';

/** One experiment's own record: its memberships and repeats, before its scores are read. */
export interface OwnEntry {
  row: ExperimentRow;
  evidence: Evidence;
  /** Recorded before results were stored per example: its evidence has no scores. */
  legacy: boolean;
  hashes: Record<ViewPartition, string | null>;
  /** True when its evidence or the per-partition store says its repeats. */
  known: boolean;
  repeats: number;
  incumbentRepeats: number;
}

/** Pass 1: an experiment's own memberships and repeats (legacy: from the per-partition store). */
export function ownEntryOf(evaluations: EvaluationIndex, row: ExperimentRow): OwnEntry {
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
        rows.filter((candidate) => candidate.partition_hash === hashes[partition]).map((candidate) => candidate.repeat),
      ).size;
  }
  const sides = gateRepeatsOfSides(evidence);
  const known = sides.candidate !== null || storedRepeats > 0;
  const repeats = sides.candidate ?? Math.max(1, storedRepeats);
  return { row, evidence, legacy, hashes, known, repeats, incumbentRepeats: sides.incumbent ?? repeats };
}

/**
 * Repeats no record says (a candidate skipped or refused before the gate):
 * those of the decision before it, and that decision's incumbent repeats when
 * it had the same incumbent.
 */
export function fillUnknownRepeats(own: readonly OwnEntry[]): void {
  let previous: OwnEntry | undefined;
  for (const entry of own) {
    if (entry.known) previous = entry;
    else if (previous !== undefined) {
      entry.repeats = previous.repeats;
      entry.incumbentRepeats =
        previous.row.base_version_id === entry.row.base_version_id ? previous.incumbentRepeats : previous.repeats;
    }
  }
}

/**
 * Pass 2 (legacy): a partition an experiment did not evaluate (shadow, when
 * the gate stopped before it) had the membership of the other experiments
 * between the same corpus moves (graduations, rotations, admissions happen
 * between rounds; a move recorded with experiment_id k came after decision k).
 */
export async function fillLegacyMemberships(
  db: StudyDatabase,
  evaluations: EvaluationIndex,
  own: readonly OwnEntry[],
): Promise<void> {
  const legacyEntries = own.filter((entry) => entry.legacy);
  if (!evaluations.hasLegacy || legacyEntries.length === 0) return;
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

/** Every other membership: reconstructed from the corpus history. */
export function fillReconstructedMemberships(evaluations: EvaluationIndex, own: readonly OwnEntry[]): void {
  for (const entry of own) {
    const memberships = evaluations.memberships.at(entry.row.id);
    for (const partition of VIEW_PARTITIONS) {
      const members = memberships[partition];
      if (entry.hashes[partition] === null && members !== null) entry.hashes[partition] = membershipKey(members);
    }
  }
}
