/**
 * The corpus lifecycle as a study uses it (DESIGN §3, §4): the loop's hooks
 * (sync at the start of a run, graduation and rotation at round boundaries,
 * exposure counting with each decision) and admission into a study.
 *
 * Partition changes happen only at deterministic points recorded in the
 * database: when a run starts and between rounds (never inside an open round,
 * so a crashed round resumes with the partitions it began with).
 */
import type { AdmissionOptions, AdmissionVerdict, CandidateRecord } from '../corpus/admission.ts';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { BoundaryPlan, CorpusMember, CorpusMove, CorpusPolicy, FileExample } from '../corpus/lifecycle.ts';
import { DEFAULT_CORPUS_POLICY, MIN_SHADOW_EXAMPLES, graduationDue, planBoundary, planCorpusSync, resolveCorpus } from '../corpus/lifecycle.ts';
import type { CorpusDatabase } from '../corpus/lifecycle-store.ts';
import {
  applyBoundaryMoves,
  lastExperimentId,
  readCorpusMembers,
  syncCorpusMembers,
  writeMembers,
  writeMoves,
} from '../corpus/lifecycle-store.ts';
import { corpusVersion } from '../evaluator/evaluator.ts';
import { InputError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { readStudyState } from './study-state.ts';

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
      throw new InputError(`the corpus lifecycle leaves no example in the ${name} partition (see \`kloop corpus status\`)`, { partition: name, studyPath: study.dir });
    }
  }
  study.corpus = resolved.corpus;
  study.partitions = resolved.partitions;
  return corpusVersion(resolved.corpus) !== before;
}

/**
 * The start of a run: initialises the lifecycle from the files on the first
 * run, records file changes, and sets the study's partitions from it.
 */
export async function startCorpusLifecycle(db: CorpusDatabase, study: LoadedStudy, now: () => Date): Promise<{ moves: CorpusMove[]; corpusChanged: boolean }> {
  const { members, moves } = await syncCorpusMembers(db, fileExamplesOf(study), now);
  return { moves, corpusChanged: applyCorpusState(study, members) };
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
export async function corpusBoundary(db: CorpusDatabase, study: LoadedStudy, now: () => Date): Promise<BoundaryOutcome> {
  const members = await readCorpusMembers(db);
  // One boundary per point of the notebook: a run killed after a boundary's moves and before its
  // round opened must not move a second slice when it resumes (an uninterrupted run would not).
  if (await boundaryDoneAt(db, await lastExperimentId(db))) {
    return { plan: { kind: 'none', due: [], held: null }, message: null, corpusChanged: applyCorpusState(study, members) };
  }
  const plan = planBoundary(members, corpusPolicyOf(study), now());
  if (plan.kind === 'spent') return { plan, message: plan.reason, corpusChanged: false };
  const after = plan.kind === 'none' ? members : await applyBoundaryMoves(db, plan.moves, now);
  const corpusChanged = applyCorpusState(study, after);
  let message: string | null = null;
  if (plan.kind === 'graduate') message = `corpus: ${plan.moves.length} shadow example(s) graduated into optimization (${plan.moves.map((move) => move.exampleId).join(', ')})`;
  if (plan.kind === 'rotate') message = `corpus: the shadow partition is spent (${plan.spent.length} example(s) at maxShadowExposures); rotated ${plan.moves.length} into optimization (${plan.moves.map((move) => move.exampleId).join(', ')})`;
  return { plan, message, corpusChanged };
}

/** Whether graduation or rotation moves were already recorded at this point of the notebook. */
async function boundaryDoneAt(db: CorpusDatabase, experimentId: number | null): Promise<boolean> {
  let query = db.selectFrom('corpus_events').select('id').where('kind', 'in', ['graduated', 'rotated_out']);
  query = experimentId === null ? query.where('experiment_id', 'is', null) : query.where('experiment_id', '=', experimentId);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
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
  options: AdmissionOptions & { source: string; dryRun?: boolean; now?: () => Date } ,
): Promise<AdmissionOutcome> {
  const state = await readStudyState(db);
  if (state.openRound !== undefined && state.openRound !== null) {
    throw new InputError(`round ${state.openRound.round} of this study is open (a run is in progress, or stopped mid-round): admit examples between runs`, { studyPath: study.dir });
  }
  const now = options.now ?? (() => new Date());
  // Loaded here, not with this module: admission's grounding check imports the NLP library (about 0.3 s), which a run never needs.
  const { checkAdmission } = await import('../corpus/admission.ts');
  return db.transaction().execute(async (transaction) => {
    const at = now().toISOString();
    const files = fileExamplesOf(study);
    const sync = planCorpusSync(files, await readCorpusMembers(transaction), at);
    const experimentId = await lastExperimentId(transaction);
    const resolved = resolveCorpus(files, sync.members);
    const taken = new Set(sync.members.map((member) => member.exampleId));
    const verdicts = checkAdmission(records, resolved.corpus, taken, options);
    const admitted = verdicts.filter((verdict) => verdict.admitted);
    const outcome = { verdicts, admitted: admitted.length, refused: verdicts.length - admitted.length, dryRun: options.dryRun === true };
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
          ? { exampleId: verdict.id ?? null, kind: 'admitted', from: null, to: 'shadow', reason: `admitted from ${options.source}: passed every admission check; shadow first`, details: { source: options.source, line: verdict.line, notes: verdict.notes } }
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
}

/**
 * The lifecycle state of a study, read-only: members as the next run would
 * see them (the files' changes applied in memory), sizes, exposures, and
 * what the next round boundary would do.
 */
export async function corpusStatus(db: CorpusDatabase | undefined, study: LoadedStudy, now: Date = new Date()): Promise<CorpusStatus> {
  const stored = db === undefined ? [] : await readCorpusMembers(db);
  const events = db === undefined ? 0 : Number((await db.selectFrom('corpus_events').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirst())?.count ?? 0);
  const policy = corpusPolicyOf(study);
  const members = planCorpusSync(fileExamplesOf(study), stored, now.toISOString()).members;
  const plan = planBoundary(members, policy, now);
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
        due: graduationDue(member, policy, now) ?? null,
      }))
      .sort((left, right) => order[left.partition]! - order[right.partition]! || right.exposures - left.exposures || left.id.localeCompare(right.id)),
    next: {
      kind: plan.kind,
      ids: plan.kind === 'graduate' || plan.kind === 'rotate' ? plan.moves.map((move) => move.exampleId!) : plan.kind === 'none' ? plan.due : plan.spent,
      detail: plan.kind === 'spent' ? plan.reason : plan.kind === 'rotate' ? `the shadow is spent: ${plan.moves.length} example(s) rotate out` : plan.held,
    },
    shadowExposures: { max: Math.max(0, ...members.filter((member) => member.partition === 'shadow').map((member) => member.shadowExposures)), limit: policy.maxShadowExposures },
    events,
  };
}
