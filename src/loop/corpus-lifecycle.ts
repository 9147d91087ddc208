/**
 * The corpus lifecycle as a study uses it (DESIGN §3, §4): the loop's hooks
 * (sync at the start of a run, graduation and rotation at round boundaries,
 * exposure counting with each decision) and admission into a study.
 *
 * Partition changes happen only at deterministic points recorded in the
 * database: when a run starts and between rounds (never inside an open round,
 * so a crashed round resumes with the partitions it began with).
 */
import type {
  FileAdmission,
  FileRecordRefused,
  PartitionLeak,
  PartitionSizeWarning,
} from '../corpus/file-admission.ts';
import {
  admitFileRecords,
  findStudyLeaks,
  memberLocations,
  partitionLeakError,
  partitionSizeWarnings,
} from '../corpus/file-admission.ts';
import type { AdmissionOptions, AdmissionVerdict, CandidateRecord } from '../corpus/admission.ts';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { BoundaryPlan, CorpusMember, CorpusMove, CorpusPolicy, FileExample } from '../corpus/lifecycle.ts';
import {
  DEFAULT_CORPUS_POLICY,
  MIN_SHADOW_EXAMPLES,
  applyMoves,
  graduationDue,
  planBoundary,
  planCorpusSync,
  resolveCorpus,
} from '../corpus/lifecycle.ts';
import type { CorpusDatabase } from '../corpus/lifecycle-store.ts';
import {
  applyBoundaryMoves,
  lastExperimentId,
  readCorpusEvents,
  readCorpusMembers,
  readRefusalFingerprints,
  writeMembers,
  writeMoves,
} from '../corpus/lifecycle-store.ts';
import { corpusVersion } from '../evaluator/evaluator.ts';
import { boundaryMovesRecordedAt, countCorpusEvents } from '../storage/notebook/lifecycle-moves-store.ts';
import { InputError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { readStudyState } from './study-state.ts';
import type { ExampleFormat } from '../corpus/example-format.ts';

/** The study's corpus policy (kloop.yaml `corpusPolicy`, or the defaults for studies built in code). */
export function corpusPolicyOf(study: LoadedStudy): CorpusPolicy {
  return study.config?.corpusPolicy ?? { ...DEFAULT_CORPUS_POLICY };
}

/** The study's file examples (for studies built in code: its corpus, as written). */
export function fileExamplesOf(study: LoadedStudy): readonly FileExample[] {
  return study.fileCorpus ?? study.corpus.map((example) => ({ example, file: '(study built in code)' }));
}

/**
 * Replaces the study's corpus and partitions with those the members give.
 * Returns true when the corpus content changed (not only partitions), which
 * changes the evaluator fingerprint.
 */
export function applyCorpusState(study: LoadedStudy, members: readonly CorpusMember[]): boolean {
  const before = corpusVersion(study.corpus);
  const resolved = resolveCorpus(fileExamplesOf(study), members);
  for (const name of PARTITIONS) {
    if (resolved.partitions[name].length === 0) {
      throw new InputError(
        `the corpus lifecycle leaves no example in the ${name} partition (see \`kloop corpus status\`)`,
        { partition: name, studyPath: study.dir },
      );
    }
  }
  study.corpus = resolved.corpus;
  study.partitions = resolved.partitions;
  return corpusVersion(resolved.corpus) !== before;
}

/** The corpus files against the stored members, planned in memory: what a sync would write. */
export interface FileSyncPlan {
  /** The members as they must now be. */
  members: CorpusMember[];
  changed: CorpusMember[];
  moves: CorpusMove[];
  /** The admission of the files' new records; undefined for studies built in code. */
  admission?: FileAdmission;
  leaks: PartitionLeak[];
  /** The file examples the study uses (refused records left out). */
  files: readonly FileExample[];
}

/** The admission options of the study's corpus files: its record format (whose task applies corpusPolicy.partialGold). */
function fileAdmissionOptions(study: LoadedStudy): { format: ExampleFormat } {
  return { format: study.exampleFormat };
}

/**
 * Plans the sync of the corpus files with `stored` (pure but for reading the
 * study): new file records pass admission (`admitFileRecords`), the accepted
 * ones are reconciled with the members (`planCorpusSync`), and the corpus
 * that results is checked for leaks between partitions.
 */
export function planFileSync(
  study: LoadedStudy,
  stored: readonly CorpusMember[],
  at: string,
  options: { deferNew?: boolean } = {},
): FileSyncPlan {
  const records = study.corpusAdmission?.admission.records;
  const admission =
    records === undefined
      ? undefined
      : admitFileRecords(records, stored, { ...fileAdmissionOptions(study), deferNew: options.deferNew === true });
  const files = admission?.accepted ?? fileExamplesOf(study);
  const plan = planCorpusSync(files, stored, at);
  const leaks =
    admission === undefined
      ? []
      : findStudyLeaks(resolveCorpus(files, plan.members).corpus, memberLocations(files, plan.members), admission);
  return {
    members: plan.members,
    changed: plan.changed,
    moves: plan.moves,
    ...(admission !== undefined ? { admission } : {}),
    leaks,
    files,
  };
}

/** The InputError a run raises on leaks between partitions, naming both records of each (`partitionLeakError`). */
export function leakError(leaks: readonly PartitionLeak[], study: LoadedStudy): InputError {
  return partitionLeakError(leaks, {
    file: study.config?.configPath ?? study.dir,
    field: study.exampleFormat.inputField,
  });
}

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
  db: CorpusDatabase,
  study: LoadedStudy,
  now: () => Date,
): Promise<CorpusStart> {
  const result = await db.transaction().execute(async (transaction) => {
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
  db: CorpusDatabase,
  study: LoadedStudy,
  now: () => Date,
): Promise<BoundaryOutcome> {
  const members = await readCorpusMembers(db);
  // One boundary per point of the notebook: a run killed after a boundary's moves and before its
  // round opened must not move a second slice when it resumes (an uninterrupted run would not).
  if (await boundaryMovesRecordedAt(db, await lastExperimentId(db))) {
    return {
      plan: { kind: 'none', due: [], held: null },
      message: null,
      corpusChanged: applyCorpusState(study, members),
    };
  }
  const plan = planBoundary(members, corpusPolicyOf(study), now());
  if (plan.kind === 'spent') return { plan, message: plan.reason, corpusChanged: false };
  const after = plan.kind === 'none' ? members : await applyBoundaryMoves(db, plan.moves, now);
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

/** The outcome of `kloop corpus add`. */
export interface AdmissionOutcome {
  verdicts: AdmissionVerdict[];
  admitted: number;
  refused: number;
  /** Nothing was written (dry run). */
  dryRun: boolean;
}

/**
 * Admits a batch into the study: the lifecycle is synced with the files,
 * every record is checked (`checkAdmission`), admitted examples enter shadow
 * and every verdict is recorded (`admitted` / `refused` events), all in one
 * transaction.
 *
 * @throws InputError while a round is open (a run in progress, or one that
 *   stopped mid-round: finish it with `kloop run` first)
 */
export async function admitToStudy(
  db: CorpusDatabase,
  study: LoadedStudy,
  records: readonly CandidateRecord[],
  options: AdmissionOptions & { source: string; dryRun?: boolean; now?: () => Date },
): Promise<AdmissionOutcome> {
  const state = await readStudyState(db);
  if (state.openRound !== undefined && state.openRound !== null) {
    throw new InputError(
      `round ${state.openRound.round} of this study is open (a run is in progress, or stopped mid-round): admit examples between runs`,
      { studyPath: study.dir },
    );
  }
  const now = options.now ?? (() => new Date());
  // Loaded here, not with this module: admission's grounding check imports the NLP library (about 0.3 s), which a run never needs.
  const { checkAdmission } = await import('../corpus/admission.ts');
  return db.transaction().execute(async (transaction) => {
    const at = now().toISOString();
    const sync = planFileSync(study, await readCorpusMembers(transaction), at);
    const files = sync.files;
    const experimentId = await lastExperimentId(transaction);
    const resolved = resolveCorpus(files, sync.members);
    // Every id the study has had, and every id of the corpus files (a refused file record keeps its id).
    const taken = new Set([
      ...sync.members.map((member) => member.exampleId),
      ...(sync.admission?.records ?? []).map((entry) => entry.example.id),
    ]);
    // The study's record format, or the caller's (`kloop corpus add --partial-gold` gives the one that admits partial intent gold).
    const format = options.format ?? study.exampleFormat;
    const verdicts = checkAdmission(records, resolved.corpus, taken, {
      ...options,
      format,
      locations: memberLocations(files, sync.members),
    });
    const admitted = verdicts.filter((verdict) => verdict.admitted);
    const outcome = {
      verdicts,
      admitted: admitted.length,
      refused: verdicts.length - admitted.length,
      dryRun: options.dryRun === true,
    };
    if (options.dryRun === true) return outcome;
    if (sync.changed.length > 0) await writeMembers(transaction, sync.changed);
    if (sync.moves.length > 0) await writeMoves(transaction, sync.moves, experimentId, at);
    await writeMembers(
      transaction,
      admitted.map((verdict) => ({
        exampleId: verdict.example!.id,
        origin: 'admitted',
        source: options.source,
        example: verdict.example!,
        partition: 'shadow',
        shadowExposures: 0,
        shadowSince: at,
        admittedAt: at,
        updatedAt: at,
      })),
    );
    await writeMoves(
      transaction,
      verdicts.map((verdict) =>
        verdict.admitted
          ? {
              exampleId: verdict.id ?? null,
              kind: 'admitted',
              from: null,
              to: 'shadow',
              reason: `admitted from ${options.source}: passed every admission check; shadow first`,
              details: { source: options.source, line: verdict.line, notes: verdict.notes },
            }
          : {
              exampleId: verdict.id ?? null,
              kind: 'refused',
              from: null,
              to: null,
              reason: verdict.reasons.map((reason) => `${reason.check}: ${reason.message}`).join('; '),
              details: { source: options.source, line: verdict.line, reasons: verdict.reasons },
            },
      ),
      experimentId,
      at,
    );
    return outcome;
  });
}

/** One member as `kloop corpus status` shows it. */
export interface MemberStatus {
  id: string;
  partition: PartitionName | 'removed';
  origin: 'file' | 'admitted';
  source: string;
  exposures: number;
  shadowSince: string | null;
  /** Rounds closed since it entered shadow (shadow members; 0 otherwise). */
  shadowRounds: number;
  /** Who placed it with `kloop corpus promote`, when its last move was a promotion. */
  promotedBy: string | null;
  /** Why it is due to graduate, when it is. */
  due: string | null;
}

/** The lifecycle at a glance. */
export interface CorpusStatus {
  /** False when the study has not run since the lifecycle was added: the state shown is the files'. */
  initialised: boolean;
  policy: CorpusPolicy;
  minShadowExamples: number;
  sizes: Record<PartitionName | 'removed', number>;
  members: MemberStatus[];
  /** The next round boundary's plan: graduation, rotation, or a refusal to rotate. */
  next: { kind: BoundaryPlan['kind']; ids: string[]; detail: string | null };
  /** Most exposures of any shadow example, and the limit. */
  shadowExposures: { max: number; limit: number };
  events: number;
  /** Records of the corpus files the admission gate refuses (left out of the study), with file:line and reasons. */
  refused: FileRecordRefused[];
  /** Records of the corpus files new to the study that the next run admits, and where. */
  pending: FileAdmission['admitted'];
  /** Goals shared by two partitions: the commands that load the study (all but `corpus status`, `at` and `promote`) refuse it until they are resolved. */
  leaks: PartitionLeak[];
  /** Partitions too small to mean anything, with the number needed. */
  warnings: PartitionSizeWarning[];
}

/**
 * The lifecycle state of a study, read-only: members as the next run would
 * see them (the files' changes applied in memory), sizes, exposures, and
 * what the next round boundary would do.
 */
export async function corpusStatus(
  db: CorpusDatabase | undefined,
  study: LoadedStudy,
  now: Date = new Date(),
): Promise<CorpusStatus> {
  const stored = db === undefined ? [] : await readCorpusMembers(db);
  const events = db === undefined ? 0 : await countCorpusEvents(db);
  const policy = corpusPolicyOf(study);
  const sync = planFileSync(study, stored, now.toISOString());
  const members = sync.members;
  const plan = planBoundary(members, policy, now);
  const resolved = resolveCorpus(sync.files, members);
  const sizes = { optimization: 0, anchor: 0, shadow: 0, removed: 0 };
  for (const member of members) sizes[member.partition] += 1;
  const order: Record<string, number> = { shadow: 0, optimization: 1, anchor: 2, removed: 3 };
  return {
    initialised: stored.length > 0,
    policy,
    minShadowExamples: MIN_SHADOW_EXAMPLES,
    sizes,
    members: members
      .map((member) => ({
        id: member.exampleId,
        partition: member.partition,
        origin: member.origin,
        source: member.source,
        exposures: member.shadowExposures,
        shadowSince: member.shadowSince,
        shadowRounds: member.partition === 'shadow' ? (member.shadowRounds ?? 0) : 0,
        promotedBy: member.promotedBy ?? null,
        due: graduationDue(member, policy, now) ?? null,
      }))
      .sort(
        (left, right) =>
          order[left.partition]! - order[right.partition]! ||
          right.exposures - left.exposures ||
          left.id.localeCompare(right.id),
      ),
    next: {
      kind: plan.kind,
      ids:
        plan.kind === 'graduate' || plan.kind === 'rotate'
          ? plan.moves.map((move) => move.exampleId!)
          : plan.kind === 'none'
            ? plan.due
            : plan.spent,
      detail:
        plan.kind === 'spent'
          ? plan.reason
          : plan.kind === 'rotate'
            ? `the shadow is spent: ${plan.moves.length} example(s) rotate out`
            : plan.held,
    },
    shadowExposures: {
      max: Math.max(
        0,
        ...members.filter((member) => member.partition === 'shadow').map((member) => member.shadowExposures),
      ),
      limit: policy.maxShadowExposures,
    },
    events,
    refused: sync.admission?.refused ?? [],
    pending: stored.length > 0 ? (sync.admission?.admitted ?? []) : [],
    leaks: sync.leaks,
    warnings: partitionSizeWarnings(resolved.partitions, { shadowAlpha: study.gate.shadowAlpha }),
  };
}

/** The outcome of `kloop corpus promote`. */
export interface PromotionOutcome {
  to: PartitionName;
  by: string;
  /** The examples moved, from where. */
  moved: Array<{ id: string; from: PartitionName; to: PartitionName }>;
  /** The examples already in `to` (nothing recorded for them). */
  unchanged: string[];
  /** Consequences the user should know (a seen example in shadow, a shadow below the minimum). */
  warnings: string[];
  sizes: Record<PartitionName, number>;
}

/**
 * `kloop corpus promote`: a human places examples in a partition, on the
 * record. Each move is a `promoted` event with `details.by` (and the reason
 * given); the files' labels do not override it afterwards (a promoted anchor
 * stays one though its file says otherwise; an anchor moved out stays out).
 * Promoting again reverses it, also on the record. Entering shadow restarts
 * its time there (exposures are kept: the novelty it spent is spent). The
 * files are synced first, in the same transaction.
 *
 * @throws InputError while a round is open; for an id that is not in the
 *   study's corpus (nothing is written), or when the move would leave a
 *   partition empty
 */
export async function promoteExamples(
  db: CorpusDatabase,
  study: LoadedStudy,
  ids: readonly string[],
  options: { to: PartitionName; by: string; reason?: string; now?: () => Date },
): Promise<PromotionOutcome> {
  const state = await readStudyState(db);
  if (state.openRound !== undefined && state.openRound !== null) {
    throw new InputError(
      `round ${state.openRound.round} of this study is open (a run is in progress, or stopped mid-round): move examples between runs`,
      { studyPath: study.dir },
    );
  }
  const now = options.now ?? (() => new Date());
  const outcome = await db.transaction().execute(async (transaction) => {
    const at = now().toISOString();
    // Records new to the corpus files stay pending: a run admits them, and says so (a promotion used to admit them unreported).
    const sync = planFileSync(study, await readCorpusMembers(transaction), at, { deferNew: true });
    const byId = new Map(sync.members.map((member) => [member.exampleId, member]));
    const unknown = [...new Set(ids)].filter(
      (id) => byId.get(id) === undefined || byId.get(id)!.partition === 'removed',
    );
    if (unknown.length > 0) {
      throw new InputError(
        `not in this study's corpus: ${unknown.map((id) => `"${id}"${byId.get(id)?.partition === 'removed' ? ' (removed from the corpus files)' : ''}`).join(', ')}; nothing was moved (see \`kloop corpus status\`)`,
        { field: '<id>', studyPath: study.dir },
      );
    }
    const history = await readCorpusEvents(transaction);
    const moves: CorpusMove[] = [];
    const unchanged: string[] = [];
    const warnings: string[] = [];
    for (const id of [...new Set(ids)]) {
      const member = byId.get(id)!;
      const from = member.partition as PartitionName;
      if (from === options.to) {
        unchanged.push(id);
        continue;
      }
      const seen =
        from === 'optimization' || history.some((event) => event.exampleId === id && event.to === 'optimization');
      if (options.to === 'shadow' && seen)
        warnings.push(
          `"${id}" has been in the optimization partition, which the proposer reads: as a shadow example it is no longer unseen`,
        );
      moves.push({
        exampleId: id,
        kind: 'promoted',
        from,
        to: options.to,
        reason: `moved from ${from} to ${options.to} by ${options.by}${options.reason !== undefined ? `: ${options.reason}` : ''}`,
        details: {
          by: options.by,
          ...(options.reason !== undefined ? { reason: options.reason } : {}),
          exposures: member.shadowExposures,
          seenByProposer: seen,
        },
      });
    }
    const after = applyMoves(sync.members, moves, at);
    const resolved = resolveCorpus(sync.files, after);
    for (const name of PARTITIONS) {
      if (resolved.partitions[name].length === 0)
        throw new InputError(
          `moving ${moves.map((move) => move.exampleId).join(', ')} would leave the ${name} partition empty; nothing was moved`,
          { field: '--to', studyPath: study.dir, partition: name },
        );
    }
    if (resolved.partitions.shadow.length < MIN_SHADOW_EXAMPLES && moves.some((move) => move.from === 'shadow')) {
      warnings.push(
        `the shadow partition now holds ${resolved.partitions.shadow.length} (< ${MIN_SHADOW_EXAMPLES}): too few paired differences to confirm a gain`,
      );
    }
    const experimentId = await lastExperimentId(transaction);
    if (sync.changed.length > 0) await writeMembers(transaction, sync.changed);
    if (sync.moves.length > 0) await writeMoves(transaction, sync.moves, experimentId, at);
    const movedIds = new Set(moves.map((move) => move.exampleId));
    await writeMembers(
      transaction,
      after.filter((member) => movedIds.has(member.exampleId)),
    );
    await writeMoves(transaction, moves, experimentId, at);
    const sizes = Object.fromEntries(PARTITIONS.map((name) => [name, resolved.partitions[name].length])) as Record<
      PartitionName,
      number
    >;
    return {
      to: options.to,
      by: options.by,
      moved: moves.map((move) => ({ id: move.exampleId!, from: move.from as PartitionName, to: options.to })),
      unchanged,
      warnings,
      sizes,
      after,
    };
  });
  applyCorpusState(study, outcome.after);
  const { after: _after, ...result } = outcome;
  return result;
}
