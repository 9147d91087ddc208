/**
 * The corpus lifecycle (DESIGN §3 "The hold-out must stay unseen", §4): pure
 * rules over the study's corpus members. Storage lives in
 * `lifecycle-store.ts`; the loop calls both through `src/loop/corpus-lifecycle.ts`.
 *
 * - **Initial state**: on a study's first run every file example takes the
 *   partition its file names (`initial`, or `anchored` for anchors).
 * - **Files change later**: a new file example enters **shadow** first (an
 *   anchor stays an anchor: anchors are hand-chosen in the files); an example
 *   gone from the files is `removed`; an anchor may neither leave the files
 *   nor be re-labelled (an {@link InputError}).
 * - **Admission** (`kloop corpus add`, see `admission.ts`; new corpus-file
 *   records, see `file-admission.ts`): every new record passes the same gate;
 *   admitted examples enter **shadow**, never optimization; refused file
 *   records are left out of the study.
 * - **Exposure**: every gate decision that evaluated the shadow partition
 *   (`shadowConsulted`) adds 1 to each shadow member's `shadowExposures`.
 * - **Graduation** (between rounds): a shadow example that has served
 *   `graduateAfterDecisions` exposures, `graduateAfterRounds` rounds in shadow
 *   (whether or not the shadow was consulted: no deadlock when no candidate
 *   ever reaches the shadow check) or `graduateAfterDays` days in shadow, is due; at most `rotateSlice` due examples (most exposed first) move to
 *   optimization per round boundary, never taking the shadow below
 *   {@link MIN_SHADOW_EXAMPLES}; the others wait (status says so). An example
 *   due by time alone (rounds or days, not exposures) moves only while the
 *   shadow is larger than the optimization partition: time-based graduation
 *   grows a small optimization partition out of a stuck study, it does not
 *   drain a working shadow (a shadow of 5 cannot confirm a real gain: see
 *   {@link planBoundary}).
 * - **Rotation** (between rounds): once any shadow example has reached
 *   `maxShadowExposures` the shadow is *spent*: the `rotateSlice` most
 *   exposed shadow examples move to optimization (`rotated_out`). When that
 *   would leave fewer than {@link MIN_SHADOW_EXAMPLES} in shadow, the study
 *   refuses to rotate and stops (`shadow_spent`): admit new examples first.
 * - **Anchors** never rotate and never leave, except by a human's recorded
 *   `kloop corpus promote` (`promoted`), which also places any example in any
 *   partition; a promoted placement is not overridden by the file's label.
 *
 * Every move is a {@link CorpusMove}, stored with the last experiment decided
 * when it happened; the partitions a decision E saw are the fold of every move
 * whose experiment id is below E ({@link reconstructPartitions}).
 */
import type { Example, PartitionName } from './example.ts';
import { PARTITIONS } from './example.ts';

/**
 * Fewest examples the shadow partition may hold after a graduation or a
 * rotation: 5. Below that a shadow comparison rests on too few paired
 * differences to confirm anything (the gate's standard error needs at least
 * 2, and one lucky example would decide). A study whose files start with a
 * smaller shadow keeps it, but nothing graduates from it.
 */
export const MIN_SHADOW_EXAMPLES = 5;

/**
 * Fewest anchors below which a warning says the anchor partition is too small
 * to mean anything: 3. Anchors are checked one by one (no statistics), so
 * any number works mechanically; but with fewer than 3 hand-chosen cases a
 * "no anchor regressed" verdict protects almost nothing of the task.
 */
export const MIN_ANCHOR_EXAMPLES = 3;

/** Default of `corpusPolicy.graduateAfterRounds`: 5 rounds. */
export const DEFAULT_GRADUATE_AFTER_ROUNDS = 5;

/** The `corpusPolicy` of kloop.yaml (see `src/config/config.ts`). */
export interface CorpusPolicy {
  /** Shadow-consulting gate decisions an example serves before it may graduate. Default 20. */
  graduateAfterDecisions: number;
  /** Days in shadow after which an example may graduate, whatever its exposures. Default: none. */
  graduateAfterDays?: number;
  /** Examples moved out of shadow at one round boundary. Default 3. */
  rotateSlice: number;
  /** Exposures after which an example is spent and the shadow must rotate. Default 40. */
  maxShadowExposures: number;
  /**
   * Rounds an example serves in shadow before it may graduate, whether or not
   * any decision consulted the shadow (so a study whose candidates never reach
   * the shadow check still grows its optimization partition), while the
   * shadow is larger than the optimization partition. Default 5.
   */
  graduateAfterRounds?: number;
  /** Admit corpus-file records whose gold has no app type (partial gold). Default false. */
  partialGold?: boolean;
}

/** The defaults of `corpusPolicy` (the same as `src/config/config.ts`). */
export const DEFAULT_CORPUS_POLICY: Readonly<CorpusPolicy> = Object.freeze({
  graduateAfterDecisions: 20,
  rotateSlice: 3,
  maxShadowExposures: 40,
  graduateAfterRounds: DEFAULT_GRADUATE_AFTER_ROUNDS,
  partialGold: false,
});

/** Where a member is: one of the named partitions, or gone from the corpus files. */
export type MemberPartition = PartitionName | 'removed';

/** Every kind of move, in the order a member usually meets them. */
export const CORPUS_EVENT_KINDS = [
  'initial',
  'anchored',
  'admitted',
  'refused',
  'shadow',
  'graduated',
  'rotated_out',
  'removed',
  'promoted',
  'reset',
] as const;
export type CorpusEventKind = (typeof CORPUS_EVENT_KINDS)[number];

/** An example read from a corpus file, with that file (relative to the study folder when inside it). */
export interface FileExample {
  example: Example;
  file: string;
  /** 1-based line where the record starts in `file`, when known. */
  line?: number;
}

/** One example of the study's corpus and its place in the lifecycle. */
export interface CorpusMember {
  exampleId: string;
  origin: 'file' | 'admitted';
  /** The file it came from. */
  source: string;
  /** The example itself, for admitted examples (file examples live in their files). */
  example?: Example;
  partition: MemberPartition;
  /** Shadow-consulting gate decisions made while it was in shadow. */
  shadowExposures: number;
  /** When it last entered shadow (ISO 8601), or null. */
  shadowSince: string | null;
  /** When it joined the study's corpus (ISO 8601). */
  admittedAt: string;
  updatedAt: string;
  /** Derived from the history when read (not stored): the line of `source` it was admitted from (admitted examples). */
  line?: number;
  /** Derived from the history when read (not stored): who put it in its partition, when its last move was `kloop corpus promote`. */
  promotedBy?: string;
  /** Derived from the notebook when read (not stored): rounds closed since it last entered shadow (0 when unknown). */
  shadowRounds?: number;
}

/** One move, as written to `corpus_events`. */
export interface CorpusMove {
  exampleId: string | null;
  kind: CorpusEventKind;
  from: MemberPartition | null;
  to: MemberPartition | null;
  reason: string;
  details?: Record<string, unknown>;
}

/** A move as stored, with its place in the history. */
export interface CorpusEvent extends CorpusMove {
  id: number;
  /** The last experiment decided when it happened (null: none yet). */
  experimentId: number | null;
  createdAt: string;
}

export type { CorpusSyncPlan } from './corpus-sync.ts';
export { planCorpusSync } from './corpus-sync.ts';

/** The corpus the loop uses: examples with their current partitions. */
export interface ResolvedCorpus {
  corpus: Example[];
  partitions: Record<PartitionName, Example[]>;
}

/**
 * The study's corpus from the file examples and the (synced) members: file
 * examples in file order, then admitted examples in admission order, each
 * with the partition its member has; removed members are left out.
 */
export function resolveCorpus(files: readonly FileExample[], members: readonly CorpusMember[]): ResolvedCorpus {
  const byId = new Map(members.map((member) => [member.exampleId, member]));
  const corpus: Example[] = [];
  for (const { example } of files) {
    const member = byId.get(example.id);
    const partition = member === undefined ? example.partition : member.partition;
    if (partition !== 'removed') corpus.push(partition === example.partition ? example : { ...example, partition });
  }
  const admitted = members
    .filter((member) => member.origin === 'admitted' && member.partition !== 'removed' && member.example !== undefined)
    .sort(
      (left, right) => left.admittedAt.localeCompare(right.admittedAt) || left.exampleId.localeCompare(right.exampleId),
    );
  for (const member of admitted) corpus.push({ ...member.example!, partition: member.partition as PartitionName });
  const partitions = Object.fromEntries(PARTITIONS.map((name) => [name, [] as Example[]])) as Record<
    PartitionName,
    Example[]
  >;
  for (const example of corpus) partitions[example.partition].push(example);
  return { corpus, partitions };
}

export type { BoundaryPlan } from './corpus-boundary.ts';
export { graduationDue, graduationDueBy, planBoundary } from './corpus-boundary.ts';

/** Applies moves to members (pure), as a boundary or a sync would. */
export function applyMoves(members: readonly CorpusMember[], moves: readonly CorpusMove[], at: string): CorpusMember[] {
  const byId = new Map(members.map((member) => [member.exampleId, member]));
  for (const move of moves) {
    if (move.exampleId === null || move.to === null) continue;
    const member = byId.get(move.exampleId);
    if (member === undefined) continue;
    const entering = move.to === 'shadow' && member.partition !== 'shadow';
    const next: CorpusMember = {
      ...member,
      partition: move.to,
      updatedAt: at,
      shadowSince: entering ? at : member.shadowSince,
      ...(entering ? { shadowRounds: 0 } : {}),
    };
    if (move.kind === 'promoted' && typeof move.details?.by === 'string') next.promotedBy = move.details.by;
    else delete next.promotedBy;
    byId.set(move.exampleId, next);
  }
  return [...byId.values()];
}

/** An experiment as the reconstruction reads it. */
export interface DecisionRecord {
  id: number;
  /** The gate evaluated the shadow partition for this decision. */
  shadowConsulted: boolean;
}

/** The corpus partitions as a decision saw them. */
export interface PartitionsAt {
  experimentId: number;
  /** Member ids by partition, sorted. */
  partitions: Record<PartitionName, string[]>;
  /** Shadow exposures of each example before this decision (derived from the decisions that consulted shadow). */
  exposures: Record<string, number>;
  /** Lifecycle events (moves, admissions, refusals) recorded before this decision. */
  movesBefore: number;
  /** True when the decision came before the lifecycle was first recorded (the files' partitions were in force then, not stored). */
  beforeLifecycle: boolean;
}

/**
 * Reconstructs the partitions decision `experimentId` saw: every move with
 * an experiment id below it (null counts as 0), in order, and exposures
 * counted from the earlier decisions that consulted shadow.
 */
export function reconstructPartitions(
  events: readonly CorpusEvent[],
  decisions: readonly DecisionRecord[],
  experimentId: number,
): PartitionsAt {
  const ordered = [...events].sort(
    (left, right) => (left.experimentId ?? 0) - (right.experimentId ?? 0) || left.id - right.id,
  );
  const partitionOf = new Map<string, MemberPartition>();
  const exposures: Record<string, number> = {};
  let next = 0;
  const applyBefore = (limit: number): void => {
    while (next < ordered.length && (ordered[next]!.experimentId ?? 0) < limit) {
      const event = ordered[next]!;
      if (event.exampleId !== null && event.to !== null) partitionOf.set(event.exampleId, event.to);
      // A reset that kept the corpus history records the exposures the earlier (now gone) decisions left.
      const kept = event.kind === 'reset' ? event.details?.exposures : undefined;
      if (kept !== undefined && typeof kept === 'object' && kept !== null) {
        for (const key of Object.keys(exposures)) delete exposures[key];
        for (const [id, count] of Object.entries(kept as Record<string, unknown>))
          if (typeof count === 'number') exposures[id] = count;
      }
      next += 1;
    }
  };
  for (const decision of [...decisions].sort((left, right) => left.id - right.id)) {
    if (decision.id >= experimentId) break;
    applyBefore(decision.id);
    if (!decision.shadowConsulted) continue;
    for (const [id, partition] of partitionOf) if (partition === 'shadow') exposures[id] = (exposures[id] ?? 0) + 1;
  }
  applyBefore(experimentId);
  const partitions = Object.fromEntries(PARTITIONS.map((name) => [name, [] as string[]])) as Record<
    PartitionName,
    string[]
  >;
  for (const [id, partition] of partitionOf) if (partition !== 'removed') partitions[partition].push(id);
  for (const name of PARTITIONS) partitions[name].sort();
  const firstRecorded = ordered.find((event) => event.kind !== 'refused');
  return {
    experimentId,
    partitions,
    exposures: Object.fromEntries(Object.entries(exposures).sort(([left], [right]) => left.localeCompare(right))),
    movesBefore: next,
    beforeLifecycle: firstRecorded === undefined || (firstRecorded.experimentId ?? 0) >= experimentId,
  };
}
