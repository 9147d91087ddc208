/**
 * One experiment in full, for the viewer's experiment page and the reports:
 * its scores, every check of its evidence, the delta as a diff (for an
 * accepted candidate, whose text the registry keeps), and the per-example
 * changes — which optimization, anchor and shadow examples moved, by how
 * much, and what changed in their diagnostics — sorted by size.
 *
 * The per-example means come from the evidence when the gate recorded them
 * (`scores.<partition>.examples`: the examples valid for both sides, as it
 * compared them), and the diagnostics from the stored ExampleScoreRecords of
 * both sides (`example_results`: the first valid repeat of each side, else
 * repeat 0); an example left out of the comparison (invalid on a side) is a
 * validity change when it is valid on the other side. Experiments recorded
 * before read both from the per-partition store (`evaluation_examples`).
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readVersion } from '../storage/notebook/view-queries.ts';
import { readEvaluationExamples } from '../storage/notebook/view-results-queries.ts';
import type { EvidenceCheck, EvidencePartitionScores, EvidenceRebase } from './evidence.ts';
import type { EvaluationIndex, ExperimentScore, ViewPartition } from './experiment-scores.ts';
import { VIEW_PARTITIONS } from './experiment-scores.ts';
import type { StoredRecord } from './stored-results.ts';
import type { TextDiff } from './text-diff.ts';
import { diffTexts } from './text-diff.ts';

/** How one example's score moved between the incumbent and the candidate. */
export interface ExampleChange {
  exampleId: string;
  partition: ViewPartition;
  /** The incumbent's mean composite over valid repeats; null when invalid in every repeat. */
  before: number | null;
  /** The candidate's. */
  after: number | null;
  /** after − before; null when either side is invalid. */
  change: number | null;
  /** What changed in the diagnostics ("found entity Patient", "behaviour payment now missing", ...). */
  notes: string[];
}

/** An experiment with everything its page shows. */
export interface ExperimentDetail extends Omit<ExperimentScore, 'evidence'> {
  checks: EvidenceCheck[];
  shadowConsulted: boolean;
  evidenceReadable: boolean;
  /** The delta as a line diff, base version → accepted version; null when the candidate's text was not kept (refused and skipped candidates). */
  diff: TextDiff | null;
  /** Examples whose score or validity changed, largest change first (validity changes first of all). */
  changes: ExampleChange[];
  /** Examples compared per partition, and how many moved. */
  compared: Record<ViewPartition, { examples: number; improved: number; worsened: number; validityChanged: number }>;
  /** Set when the candidate was rebased onto a newer incumbent before it was judged (method, conflicts, the hash as proposed). */
  rebased: EvidenceRebase | null;
  /**
   * The study's headline figure the page labels the scores with (kloop.yaml
   * `task.reportAs`, e.g. "misroute rate"; `complement`: it is 1 − composite,
   * lower is better); `{ name: 'composite', complement: false }` by default.
   */
  headline: { name: string; complement: boolean };
}

type StoredExample = Pick<StoredRecord, 'valid' | 'composite' | 'diagnostics' | 'feedback'>;

/** Per-example mean composites (valid repeats) and the first repeat's diagnostics, by example id (the per-partition store). */
async function loadLegacyExamples(
  db: StudyDatabase,
  evaluationIds: readonly number[],
): Promise<Map<string, { mean: number | null; first: StoredExample }>> {
  if (evaluationIds.length === 0) return new Map();
  const rows = await readEvaluationExamples(db, evaluationIds);
  const sums = new Map<string, { sum: number; count: number; first: StoredExample }>();
  for (const row of rows) {
    let score: StoredExample;
    try {
      score = JSON.parse(row.score) as StoredExample;
    } catch {
      score = { valid: row.valid === 1, composite: row.composite };
    }
    const entry = sums.get(row.example_id) ?? { sum: 0, count: 0, first: score };
    if (row.valid === 1 && row.composite !== null) {
      entry.sum += row.composite;
      entry.count += 1;
    }
    sums.set(row.example_id, entry);
  }
  return new Map(
    [...sums].map(([id, entry]) => [
      id,
      { mean: entry.count === 0 ? null : entry.sum / entry.count, first: entry.first },
    ]),
  );
}

function setDifference(left: readonly string[] | undefined, right: readonly string[] | undefined): string[] {
  const exclude = new Set(right ?? []);
  return (left ?? []).filter((item) => !exclude.has(item));
}

/** What changed in one example's diagnostics, in words (at most 8 notes). */
export function diagnosticNotes(before: StoredExample | undefined, after: StoredExample | undefined): string[] {
  if (before === undefined || after === undefined) return [];
  if (before.valid && !after.valid) return ['the output became invalid'];
  if (!before.valid && after.valid) return ['the output became valid'];
  const left = before.diagnostics ?? {};
  const right = after.diagnostics ?? {};
  const notes: string[] = [];
  for (const name of setDifference(left.missedEntities, right.missedEntities)) notes.push(`found entity ${name}`);
  for (const name of setDifference(right.missedEntities, left.missedEntities)) notes.push(`lost entity ${name}`);
  const wrongBefore = new Set((left.wrongRoles ?? []).map((role) => role.entity));
  const wrongAfter = new Map((right.wrongRoles ?? []).map((role) => [role.entity, role]));
  for (const entity of wrongBefore) if (!wrongAfter.has(entity)) notes.push(`role of ${entity} now right`);
  for (const [entity, role] of wrongAfter)
    if (!wrongBefore.has(entity))
      notes.push(`role of ${entity} now wrong (${role.predicted}, expected ${role.expected})`);
  for (const name of setDifference(left.missingBehaviors, right.missingBehaviors))
    notes.push(`found behaviour ${name}`);
  for (const name of setDifference(right.missingBehaviors, left.missingBehaviors)) notes.push(`lost behaviour ${name}`);
  if (left.appTypeMismatch !== undefined && right.appTypeMismatch === undefined) notes.push('app type now right');
  if (
    right.appTypeMismatch !== undefined &&
    (left.appTypeMismatch === undefined || left.appTypeMismatch.predicted !== right.appTypeMismatch.predicted)
  ) {
    notes.push(
      `app type now ${right.appTypeMismatch.predicted} (expected ${right.appTypeMismatch.expected.join(' or ')})`,
    );
  }
  for (const name of setDifference(right.spuriousEntities, left.spuriousEntities))
    notes.push(`spurious entity ${name}`);
  for (const name of setDifference(left.spuriousEntities, right.spuriousEntities))
    notes.push(`no longer spurious: ${name}`);
  // Any task: when the diagnostics name nothing the intent task's do, the feedback says what changed.
  if (
    notes.length === 0 &&
    typeof before.feedback === 'string' &&
    typeof after.feedback === 'string' &&
    before.feedback !== after.feedback
  ) {
    notes.push(after.feedback === '' ? 'now right' : `now: ${after.feedback}`);
  }
  return notes.length > 8 ? [...notes.slice(0, 8), `and ${notes.length - 8} more`] : notes;
}

/** The ids of one artifact's evaluations on the membership in force, repeats 0..R−1 (the per-partition store). */
function evaluationIds(
  index: EvaluationIndex,
  score: ExperimentScore,
  artifactHash: string,
  partition: ViewPartition,
  upTo: string | null,
  repeats: number,
): number[] {
  const membership = score.partitionHashes[partition];
  if (membership === null) return [];
  return index
    .rows(score.fingerprint, artifactHash, partition)
    .filter(
      (row) => row.partition_hash === membership && row.repeat < repeats && (upTo === null || row.created_at <= upTo),
    )
    .map((row) => row.id);
}

/** One side of an example as the stored records show it: the mean over valid repeats and the record whose diagnostics are read. */
function sideOf(records: readonly StoredRecord[] | undefined): {
  mean: number | null;
  shown: StoredExample | undefined;
} {
  if (records === undefined || records.length === 0) return { mean: null, shown: undefined };
  const valid = records.filter((record) => record.valid && record.composite !== null);
  return {
    mean: valid.length === 0 ? null : valid.reduce((sum, record) => sum + record.composite!, 0) / valid.length,
    shown: valid[0] ?? records[0],
  };
}

const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

/** The per-example changes of one partition the gate compared, from its evidence and the stored records. */
async function changesFromEvidence(
  index: EvaluationIndex,
  score: ExperimentScore,
  baseHash: string,
  partition: ViewPartition,
  compared: EvidencePartitionScores,
): Promise<{ changes: ExampleChange[]; tally: ExperimentDetail['compared'][ViewPartition] }> {
  const { ids, incumbent, candidate, leftOut } = compared.examples;
  const tally = { examples: ids.length + leftOut.length, improved: 0, worsened: 0, validityChanged: 0 };
  const moved: Array<{ exampleId: string; before: number | null; after: number | null; change: number | null }> = [];
  ids.forEach((exampleId, position) => {
    const change = round6(candidate[position]! - incumbent[position]!);
    if (change > 0) tally.improved += 1;
    if (change < 0) tally.worsened += 1;
    if (change !== 0) moved.push({ exampleId, before: incumbent[position]!, after: candidate[position]!, change });
  });
  const wanted = [...moved.map((entry) => entry.exampleId), ...leftOut];
  const before = await index.results.records(score.fingerprint, baseHash, wanted, score.incumbentRepeats);
  const after = await index.results.records(score.fingerprint, score.candidateHash, wanted, score.repeats);
  for (const exampleId of leftOut) {
    const left = sideOf(before.get(exampleId));
    const right = sideOf(after.get(exampleId));
    // Left out: invalid on at least one side. Valid on the other is a validity change; invalid on both, no change.
    if ((left.mean === null) === (right.mean === null)) continue;
    tally.validityChanged += 1;
    moved.push({ exampleId, before: left.mean, after: right.mean, change: null });
  }
  return {
    changes: moved.map((entry) => ({
      ...entry,
      partition,
      notes: diagnosticNotes(sideOf(before.get(entry.exampleId)).shown, sideOf(after.get(entry.exampleId)).shown),
    })),
    tally,
  };
}

/**
 * Builds the detail of one scored experiment.
 *
 * @param headline the study's headline figure (see {@link ExperimentDetail.headline}); default the composite
 */
export async function loadExperimentDetail(
  db: StudyDatabase,
  index: EvaluationIndex,
  score: ExperimentScore,
  headline: ExperimentDetail['headline'] = { name: 'composite', complement: false },
): Promise<ExperimentDetail> {
  const base = await readVersion(db, score.baseVersion);
  const accepted = score.acceptedVersion === null ? undefined : await readVersion(db, score.acceptedVersion);
  const changes: ExampleChange[] = [];
  const compared = {} as ExperimentDetail['compared'];
  for (const partition of VIEW_PARTITIONS) {
    compared[partition] = { examples: 0, improved: 0, worsened: 0, validityChanged: 0 };
    const evaluatedCandidate =
      score.decision !== 'skipped' && (partition !== 'shadow' || score.evidence.shadowConsulted);
    if (base === undefined || !evaluatedCandidate) continue;
    if (score.evidence.scores !== null) {
      const recorded = score.evidence.scores[partition];
      if (recorded === null) continue;
      const found = await changesFromEvidence(index, score, base.hash, partition, recorded);
      changes.push(...found.changes);
      compared[partition] = found.tally;
      continue;
    }
    if (!index.hasLegacy) continue;
    const before = await loadLegacyExamples(
      db,
      evaluationIds(index, score, base.hash, partition, null, score.incumbentRepeats),
    );
    const after = await loadLegacyExamples(
      db,
      evaluationIds(index, score, score.candidateHash, partition, score.createdAt, score.repeats),
    );
    for (const [exampleId, right] of after) {
      const left = before.get(exampleId);
      if (left === undefined) continue;
      compared[partition].examples += 1;
      const change = left.mean !== null && right.mean !== null ? right.mean - left.mean : null;
      const validityChanged = (left.mean === null) !== (right.mean === null);
      if (change !== null && change > 0) compared[partition].improved += 1;
      if (change !== null && change < 0) compared[partition].worsened += 1;
      if (validityChanged) compared[partition].validityChanged += 1;
      if (change === 0 || (change === null && !validityChanged)) continue;
      changes.push({
        exampleId,
        partition,
        before: left.mean,
        after: right.mean,
        change,
        notes: diagnosticNotes(left.first, right.first),
      });
    }
  }
  const size = (change: ExampleChange): number => (change.change === null ? 2 : Math.abs(change.change)); // a validity change ranks first
  changes.sort(
    (left, right) =>
      size(right) - size(left) ||
      left.partition.localeCompare(right.partition) ||
      left.exampleId.localeCompare(right.exampleId),
  );
  const { evidence, ...rest } = score;
  return {
    ...rest,
    checks: evidence.checks,
    shadowConsulted: evidence.shadowConsulted,
    evidenceReadable: evidence.readable,
    diff: base !== undefined && accepted !== undefined ? diffTexts(base.text, accepted.text) : null,
    changes,
    compared,
    rebased: evidence.rebased,
    headline,
  };
}
