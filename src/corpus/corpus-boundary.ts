/**
 * The corpus at a round boundary (pure): shadow examples that graduate into
 * optimization, a spent shadow that rotates, or a study that stops because
 * its shadow is spent. The rules are src/corpus/lifecycle.ts's module
 * comment.
 *
 * @module
 */
import type { CorpusMember, CorpusMove, CorpusPolicy } from './lifecycle.ts';
import { MIN_SHADOW_EXAMPLES } from './lifecycle.ts';

/** Shadow members, most exposed first, then longest in shadow, then by id. */
function shadowByExposure(members: readonly CorpusMember[]): CorpusMember[] {
  return members
    .filter((member) => member.partition === 'shadow')
    .sort(
      (left, right) =>
        right.shadowExposures - left.shadowExposures ||
        (left.shadowSince ?? '').localeCompare(right.shadowSince ?? '') ||
        left.exampleId.localeCompare(right.exampleId),
    );
}

/**
 * Whether a shadow member has served its time, and why: enough
 * shadow-consulting decisions (`graduateAfterDecisions`), enough rounds in
 * shadow (`graduateAfterRounds`, counted in `member.shadowRounds`), or enough
 * days (`graduateAfterDays`), whichever comes first.
 */
export function graduationDue(member: CorpusMember, policy: Readonly<CorpusPolicy>, now: Date): string | undefined {
  return graduationDueBy(member, policy, now)?.why;
}

/**
 * {@link graduationDue} with what made the member due: `exposures` (its
 * novelty spent by shadow-consulting decisions) or `time` (rounds or days in
 * shadow only, the deadlock breaker).
 */
export function graduationDueBy(
  member: CorpusMember,
  policy: Readonly<CorpusPolicy>,
  now: Date,
): { why: string; by: 'exposures' | 'time' } | undefined {
  if (member.partition !== 'shadow') return undefined;
  if (member.shadowExposures >= policy.graduateAfterDecisions) {
    return {
      by: 'exposures',
      why: `served ${member.shadowExposures} shadow decisions (graduateAfterDecisions ${policy.graduateAfterDecisions})`,
    };
  }
  const rounds = member.shadowRounds ?? 0;
  if (policy.graduateAfterRounds !== undefined && rounds >= policy.graduateAfterRounds) {
    return { by: 'time', why: `served ${rounds} rounds in shadow (graduateAfterRounds ${policy.graduateAfterRounds})` };
  }
  if (policy.graduateAfterDays !== undefined && member.shadowSince !== null) {
    const days = (now.getTime() - Date.parse(member.shadowSince)) / 86_400_000;
    if (days >= policy.graduateAfterDays)
      return {
        by: 'time',
        why: `served ${days.toFixed(1)} days in shadow (graduateAfterDays ${policy.graduateAfterDays})`,
      };
  }
  return undefined;
}

/** What a round boundary does to the corpus. */
export type BoundaryPlan =
  | { kind: 'none'; due: string[]; held: string | null }
  | { kind: 'graduate'; moves: CorpusMove[]; due: string[]; held: string | null }
  | { kind: 'rotate'; moves: CorpusMove[]; spent: string[] }
  | { kind: 'spent'; reason: string; spent: string[] };

/**
 * Decides the moves of one round boundary (pure): rotation when the shadow is
 * spent (or a refusal to rotate), else graduation of due examples. See the
 * module comment.
 *
 * Graduation takes due examples most exposed first, at most `rotateSlice`,
 * never leaving fewer than `minShadow` in shadow. An example due by time
 * alone (rounds or days) is taken only while the shadow is still larger than
 * the optimization partition (counted as the moves of this boundary leave
 * them): the shadow's power to confirm a gain falls with its size, so time —
 * unlike exposure, which spends an example's novelty — is no reason to shrink
 * a shadow that is already the smaller partition. Measured on
 * `npm run bench:llm-loop`: graduating by rounds down to 5 shadow examples
 * left good hints unconfirmable (recall 0.71 on seed 1 with racing off,
 * 1.00 with the shadow kept).
 *
 * @param minShadow the floor; default {@link MIN_SHADOW_EXAMPLES}
 */
export function planBoundary(
  members: readonly CorpusMember[],
  policy: Readonly<CorpusPolicy>,
  now: Date,
  minShadow: number = MIN_SHADOW_EXAMPLES,
): BoundaryPlan {
  const shadow = shadowByExposure(members);
  const spent = shadow
    .filter((member) => member.shadowExposures >= policy.maxShadowExposures)
    .map((member) => member.exampleId);
  if (spent.length > 0) {
    const slice = shadow.slice(0, policy.rotateSlice);
    const left = shadow.length - slice.length;
    const head = `the shadow partition is spent: ${spent.length} of its ${shadow.length} examples have served ${policy.maxShadowExposures} or more gate decisions (maxShadowExposures ${policy.maxShadowExposures})`;
    if (slice.length === 0)
      return { kind: 'spent', spent, reason: `${head}, and corpusPolicy.rotateSlice is 0: nothing can rotate` };
    if (left < minShadow) {
      return {
        kind: 'spent',
        spent,
        reason: `${head}; rotating ${slice.length} out would leave ${left} (< the minimum of ${minShadow}), so the study refuses to rotate: admit new examples with \`kloop corpus add\` before running again`,
      };
    }
    return {
      kind: 'rotate',
      spent,
      moves: slice.map((member) => ({
        exampleId: member.exampleId,
        kind: 'rotated_out',
        from: 'shadow',
        to: 'optimization',
        reason: `${head}: one of the ${slice.length} most exposed (${member.shadowExposures} exposures) rotates into optimization`,
        details: { exposures: member.shadowExposures, maxShadowExposures: policy.maxShadowExposures },
      })),
    };
  }
  const due = shadow
    .map((member) => ({ member, due: graduationDueBy(member, policy, now) }))
    .filter(
      (entry): entry is { member: CorpusMember; due: { why: string; by: 'exposures' | 'time' } } =>
        entry.due !== undefined,
    );
  const optimizationSize = members.filter((member) => member.partition === 'optimization').length;
  const chosen: typeof due = [];
  let heldBy: 'slice' | 'floor' | 'balance' | undefined;
  for (const entry of due) {
    const shadowNow = shadow.length - chosen.length;
    if (chosen.length >= policy.rotateSlice) heldBy ??= 'slice';
    else if (shadowNow - 1 < minShadow) heldBy ??= 'floor';
    else if (entry.due.by === 'time' && shadowNow <= optimizationSize + chosen.length) heldBy ??= 'balance';
    else chosen.push(entry);
  }
  const waiting = due.length - chosen.length;
  const held =
    waiting > 0
      ? heldBy === 'floor'
        ? `${waiting} due example(s) wait: graduating them would take the shadow below ${minShadow}`
        : heldBy === 'balance'
          ? `${waiting} due example(s) wait: due by time in shadow only, and the shadow (${shadow.length - chosen.length}) is no larger than the optimization partition (${optimizationSize + chosen.length}); time-based graduation does not drain a working shadow`
          : `${waiting} due example(s) wait for a later round (rotateSlice ${policy.rotateSlice} per boundary)`
      : null;
  const dueIds = due.map((entry) => entry.member.exampleId);
  if (chosen.length === 0) return { kind: 'none', due: dueIds, held };
  return {
    kind: 'graduate',
    due: dueIds,
    held,
    moves: chosen.map(({ member, due: { why } }) => ({
      exampleId: member.exampleId,
      kind: 'graduated',
      from: 'shadow',
      to: 'optimization',
      reason: why,
      details: { exposures: member.shadowExposures, shadowSince: member.shadowSince },
    })),
  };
}
