/**
 * `kloop corpus status`: the lifecycle state of a study, read-only (DESIGN
 * §3, §4).
 *
 * @module
 */
import type {
  FileAdmission,
  FileRecordRefused,
  PartitionLeak,
  PartitionSizeWarning,
} from '../corpus/file-admission.ts';
import { partitionSizeWarnings } from '../corpus/file-admission.ts';
import type { PartitionName } from '../corpus/example.ts';
import type { BoundaryPlan, CorpusPolicy } from '../corpus/lifecycle.ts';
import { MIN_SHADOW_EXAMPLES, graduationDue, planBoundary, resolveCorpus } from '../corpus/lifecycle.ts';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { corpusPolicyOf, planFileSync } from './corpus-sync.ts';
import type { Notebook } from '../storage/notebook/index.ts';

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
  notebook: Notebook | undefined,
  study: LoadedStudy,
  now: Date = new Date(),
): Promise<CorpusStatus> {
  const stored = notebook === undefined ? [] : await readCorpusMembers(notebook);
  const events = notebook === undefined ? 0 : await notebook.countCorpusEvents();
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
