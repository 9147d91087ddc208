/**
 * The corpus lifecycle as a study uses it (DESIGN §3, §4): the loop's hooks
 * (sync at the start of a run, graduation and rotation at round boundaries,
 * exposure counting with each decision) and admission into a study.
 *
 * Partition changes happen only at deterministic points recorded in the
 * database: when a run starts and between rounds (never inside an open round,
 * so a crashed round resumes with the partitions it began with).
 *
 * The sync planned in memory is in src/loop/corpus-sync.ts; the corpus
 * commands' functions (`kloop corpus add`, `status`, `promote`) are in
 * src/loop/corpus-admit.ts, src/loop/corpus-status.ts and
 * src/loop/corpus-promotion.ts, re-exported here.
 */
import type { FileAdmission, FileRecordRefused, PartitionSizeWarning } from '../corpus/file-admission.ts';
import { partitionSizeWarnings } from '../corpus/file-admission.ts';
import type { BoundaryPlan, CorpusMove } from '../corpus/lifecycle.ts';
import { planBoundary } from '../corpus/lifecycle.ts';
import {
  applyBoundaryMoves,
  lastExperimentId,
  readCorpusMembers,
  readRefusalFingerprints,
  writeMembers,
  writeMoves,
} from '../corpus/lifecycle-store.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { readStudyState } from './study-state.ts';
import { applyCorpusState, corpusPolicyOf, leakError, planFileSync } from './corpus-sync.ts';
import type { Notebook } from '../storage/notebook/index.ts';

export type { FileSyncPlan } from './corpus-sync.ts';
export { applyCorpusState, corpusPolicyOf, fileExamplesOf, leakError, planFileSync } from './corpus-sync.ts';
export type { AdmissionOutcome } from './corpus-admit.ts';
export { admitToStudy } from './corpus-admit.ts';
export type { CorpusStatus, MemberStatus } from './corpus-status.ts';
export { corpusStatus } from './corpus-status.ts';
export type { PromotionOutcome } from './corpus-promotion.ts';
export { promoteExamples } from './corpus-promotion.ts';

/** What the start of a run did to the corpus. */
export interface CorpusStart {
  /** Moves recorded (initial partitions, new file records, removals). */
  moves: CorpusMove[];
  corpusChanged: boolean;
  /** The admission of the corpus files' new records (undefined for studies built in code). */
  admission?: FileAdmission;
  /** Refusals of file records recorded now (a record refused at an earlier start is not noted twice). */
  refusalsRecorded: number;
  /** Partitions too small to mean anything. */
  warnings: PartitionSizeWarning[];
}

/**
 * The start of a run: initialises the lifecycle from the files on the first
 * run, admits the files' new records (refused ones are recorded and left
 * out), records file changes, and sets the study's partitions from it; all
 * in one transaction. Calling it again with nothing new changes nothing.
 *
 * @throws InputError when two partitions share a goal (identical or
 *   near-duplicate; both records named), or from `planCorpusSync`
 */
export async function startCorpusLifecycle(
  notebook: Notebook,
  study: LoadedStudy,
  now: () => Date,
): Promise<CorpusStart> {
  const result = await notebook.transaction(async (transaction) => {
    const at = now().toISOString();
    // A round a crash left open resumes with the partitions it began with: new records wait until it is finished.
    const state = await readStudyState(transaction);
    const plan = planFileSync(study, await readCorpusMembers(transaction), at, {
      deferNew: state.openRound !== undefined && state.openRound !== null,
    });
    if (plan.leaks.length > 0) throw leakError(plan.leaks, study);
    const experimentId = await lastExperimentId(transaction);
    if (plan.changed.length > 0) await writeMembers(transaction, plan.changed);
    if (plan.moves.length > 0) await writeMoves(transaction, plan.moves, experimentId, at);
    let refusalsRecorded = 0;
    if (plan.admission !== undefined && plan.admission.refused.length > 0) {
      const noted = await readRefusalFingerprints(transaction);
      const fresh = plan.admission.refused.filter((record) => !noted.has(record.fingerprint));
      await writeMoves(transaction, fresh.map(fileRefusalMove), experimentId, at);
      refusalsRecorded = fresh.length;
    }
    return { plan, refusalsRecorded };
  });
  const { plan } = result;
  if (plan.admission !== undefined && study.corpusAdmission !== undefined) {
    study.fileCorpus = plan.admission.accepted;
    study.corpusAdmission = { admission: plan.admission, leaks: [] };
  }
  const corpusChanged = applyCorpusState(study, plan.members);
  return {
    moves: plan.moves,
    corpusChanged,
    ...(plan.admission !== undefined ? { admission: plan.admission } : {}),
    refusalsRecorded: result.refusalsRecorded,
    warnings: partitionSizeWarnings(study.partitions, { shadowAlpha: study.gate.shadowAlpha }),
  };
}

function fileRefusalMove(record: FileRecordRefused): CorpusMove {
  return {
    exampleId: record.id,
    kind: 'refused',
    from: null,
    to: null,
    reason: `${record.location}: ${record.reasons.map((reason) => `${reason.check}: ${reason.message}`).join('; ')}`,
    details: {
      origin: 'file',
      source: record.file,
      line: record.line,
      reasons: record.reasons,
      fingerprint: record.fingerprint,
    },
  };
}

/**
 * What the start of a run prints about the corpus (one line each, no
 * prefix): new records admitted (how many, to which partition, why), records
 * refused (file:line, check and reason; left out of the run), and partitions
 * too small to mean anything. Empty when nothing is new.
 */
export function describeCorpusStart(start: CorpusStart): string[] {
  const lines: string[] = [];
  const admission = start.admission;
  if (admission !== undefined && (admission.admitted.length > 0 || admission.refused.length > 0)) {
    const total = admission.admitted.length + admission.refused.length;
    lines.push(
      `corpus: ${total} record(s) new to the study in the corpus files${admission.initial ? ' (its first run)' : ''}: ${admission.admitted.length} admitted, ${admission.refused.length} refused`,
    );
    const why = {
      initial: "as their file says, on the study's first run",
      anchor: 'anchors are hand-chosen in the corpus files',
      shadow_first: 'new after the study began: shadow first',
    };
    const groups = new Map<string, FileAdmission['admitted']>();
    for (const record of admission.admitted) {
      const key = `${record.partition}|${record.placement}`;
      groups.set(key, [...(groups.get(key) ?? []), record]);
    }
    for (const records of groups.values()) {
      const { partition, placement } = records[0]!;
      const files = [...new Set(records.map((record) => record.file))].join(', ');
      lines.push(
        `  ${records.length} → ${partition} (${why[placement]}; ${files}): ${abbreviate(records.map((record) => record.id))}`,
      );
    }
    const overruled = admission.admitted.filter((record) => record.notes.length > 0).length;
    if (overruled > 0)
      lines.push(
        `  ${overruled} of them asked for another partition in their file: records added after the study began enter shadow first (docs/corpus.md)`,
      );
    if (admission.refused.length > 0)
      lines.push(`  refused, left out of this run (fix the record and it is admitted at the next run):`);
    for (const record of admission.refused) {
      for (const reason of record.reasons)
        lines.push(
          `    ${record.location} ${record.id}: ${reason.check}${reason.field !== undefined ? ` ${reason.field}` : ''}: ${reason.message}`,
        );
    }
  }
  if (admission !== undefined && admission.deferred.length > 0) {
    lines.push(
      `corpus: ${admission.deferred.length} record(s) new to the study wait until the open round is finished (its partitions do not change): ${abbreviate(admission.deferred.map((entry) => entry.example.id))}`,
    );
  }
  for (const warning of start.warnings) lines.push(`corpus: WARNING: ${warning.message}`);
  return lines;
}

function abbreviate(ids: readonly string[], shown = 8): string {
  return ids.length <= shown ? ids.join(', ') : `${ids.slice(0, shown).join(', ')} and ${ids.length - shown} more`;
}

/** What a round boundary did. */
export interface BoundaryOutcome {
  plan: BoundaryPlan;
  /** A one-line account for progress output; null when nothing happened. */
  message: string | null;
  /** The corpus content changed (examples admitted meanwhile): the evaluator must be recreated. */
  corpusChanged: boolean;
}

/**
 * A round boundary: graduates due shadow examples or rotates a spent shadow
 * (recorded in one transaction), then re-reads the partitions. A `spent`
 * plan means the study must stop: nothing was moved.
 */
export async function corpusBoundary(
  notebook: Notebook,
  study: LoadedStudy,
  now: () => Date,
): Promise<BoundaryOutcome> {
  const members = await readCorpusMembers(notebook);
  // One boundary per point of the notebook: a run killed after a boundary's moves and before its
  // round opened must not move a second slice when it resumes (an uninterrupted run would not).
  if (await notebook.boundaryMovesRecordedAt(await lastExperimentId(notebook))) {
    return {
      plan: { kind: 'none', due: [], held: null },
      message: null,
      corpusChanged: applyCorpusState(study, members),
    };
  }
  const plan = planBoundary(members, corpusPolicyOf(study), now());
  if (plan.kind === 'spent') return { plan, message: plan.reason, corpusChanged: false };
  const after = plan.kind === 'none' ? members : await applyBoundaryMoves(notebook, plan.moves, now);
  const corpusChanged = applyCorpusState(study, after);
  let message: string | null = null;
  if (plan.kind === 'graduate')
    message = `corpus: ${plan.moves.length} shadow example(s) graduated into optimization (${plan.moves.map((move) => move.exampleId).join(', ')})`;
  if (plan.kind === 'rotate')
    message = `corpus: the shadow partition is spent (${plan.spent.length} example(s) at maxShadowExposures); rotated ${plan.moves.length} into optimization (${plan.moves.map((move) => move.exampleId).join(', ')})`;
  // The run's header gave the partitions before this boundary: say what they are now.
  if (message !== null)
    message += `; partitions now: optimization ${study.partitions.optimization.length}, anchor ${study.partitions.anchor.length}, shadow ${study.partitions.shadow.length}`;
  return { plan, message, corpusChanged };
}
