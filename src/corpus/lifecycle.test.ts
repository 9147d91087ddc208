import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import type { Example, PartitionName } from './example.ts';
import type { CorpusEvent, CorpusMember, CorpusPolicy, FileExample } from './lifecycle.ts';
import {
  MIN_SHADOW_EXAMPLES,
  applyMoves,
  planBoundary,
  planCorpusSync,
  reconstructPartitions,
  resolveCorpus,
} from './lifecycle.ts';

const AT = '2026-01-01T00:00:00.000Z';
const POLICY: CorpusPolicy = { graduateAfterDecisions: 3, rotateSlice: 2, maxShadowExposures: 5 };

function example(id: string, partition: PartitionName): Example {
  return {
    id,
    input: `A goal about ${id}.`,
    text: `A goal about ${id}.`,
    expected: { appType: 'booking', entities: [{ name: id }] },
    tags: [],
    partition,
  };
}

function files(spec: Record<string, PartitionName>): FileExample[] {
  return Object.entries(spec).map(([id, partition]) => ({ example: example(id, partition), file: 'corpus/a.yaml' }));
}

function shadowMembers(exposures: number[]): CorpusMember[] {
  return exposures.map((count, index) => ({
    exampleId: `s${index}`,
    origin: 'file',
    source: 'corpus/a.yaml',
    partition: 'shadow',
    shadowExposures: count,
    shadowSince: AT,
    admittedAt: AT,
    updatedAt: AT,
  }));
}

describe('planCorpusSync', () => {
  it('initialises every member from its file partition on the first run', () => {
    const plan = planCorpusSync(files({ o1: 'optimization', a1: 'anchor', s1: 'shadow' }), [], AT);
    expect(plan.initial).toBe(true);
    expect(plan.members.map((member) => [member.exampleId, member.partition])).toEqual([
      ['o1', 'optimization'],
      ['a1', 'anchor'],
      ['s1', 'shadow'],
    ]);
    expect(plan.moves.map((move) => move.kind)).toEqual(['initial', 'anchored', 'initial']);
    expect(plan.members.find((member) => member.exampleId === 's1')!.shadowSince).toBe(AT);
  });

  it('puts an example added to a file later into shadow first, whatever the file says; anchors stay anchors', () => {
    const first = planCorpusSync(files({ o1: 'optimization', a1: 'anchor' }), [], AT);
    const later = planCorpusSync(
      files({ o1: 'optimization', a1: 'anchor', o2: 'optimization', a2: 'anchor' }),
      first.members,
      AT,
    );
    expect(later.moves.map((move) => [move.exampleId, move.kind, move.to])).toEqual([
      ['o2', 'shadow', 'shadow'],
      ['a2', 'anchored', 'anchor'],
    ]);
  });

  it('keeps the lifecycle partition over the file partition for optimization and shadow', () => {
    const first = planCorpusSync(files({ s1: 'shadow' }), [], AT);
    const graduated = applyMoves(
      first.members,
      [{ exampleId: 's1', kind: 'graduated', from: 'shadow', to: 'optimization', reason: 'test' }],
      AT,
    );
    const again = planCorpusSync(files({ s1: 'shadow' }), graduated, AT);
    expect(again.moves).toEqual([]);
    expect(
      resolveCorpus(files({ s1: 'shadow' }), again.members).partitions.optimization.map((item) => item.id),
    ).toEqual(['s1']);
  });

  it('records examples gone from the files as removed, and refuses an anchor that leaves', () => {
    const first = planCorpusSync(files({ o1: 'optimization', a1: 'anchor' }), [], AT);
    const removed = planCorpusSync(files({ a1: 'anchor' }), first.members, AT);
    expect(removed.moves.map((move) => [move.exampleId, move.kind])).toEqual([['o1', 'removed']]);
    expect(() => planCorpusSync(files({ o1: 'optimization' }), first.members, AT)).toThrow(InputError);
    expect(() => planCorpusSync(files({ o1: 'optimization', a1: 'shadow' }), first.members, AT)).toThrow(
      /anchors never leave/,
    );
    // The error names the record's line, as every corpus error does.
    const moved = files({ o1: 'optimization', a1: 'shadow' }).map((entry, index) => ({
      ...entry,
      line: 1 + 6 * index,
    }));
    expect(() => planCorpusSync(moved, first.members, AT)).toThrow(
      expect.objectContaining({ file: 'corpus/a.yaml', line: 7, field: 'partition' }),
    );
  });
});

describe('planBoundary', () => {
  it('graduates at most rotateSlice due examples, most exposed first', () => {
    const plan = planBoundary(shadowMembers([3, 4, 3, 0, 0, 0, 0, 0]), POLICY, new Date(AT));
    expect(plan.kind).toBe('graduate');
    if (plan.kind !== 'graduate') return;
    expect(plan.moves.map((move) => move.exampleId)).toEqual(['s1', 's0']);
    expect(plan.due).toEqual(['s1', 's0', 's2']);
    expect(plan.held).toMatch(/later round/);
  });

  it('never graduates the shadow below the minimum', () => {
    const plan = planBoundary(shadowMembers([3, 3, 3, 3, 3, 3]), POLICY, new Date(AT));
    expect(plan.kind).toBe('graduate');
    if (plan.kind === 'graduate') expect(plan.moves).toHaveLength(6 - MIN_SHADOW_EXAMPLES);
    const held = planBoundary(shadowMembers([3, 3, 3, 3, 3]), POLICY, new Date(AT));
    expect(held).toMatchObject({ kind: 'none', due: ['s0', 's1', 's2', 's3', 's4'] });
  });

  it('graduates by rounds only while the shadow is larger than the optimization partition; exposure-due examples are not held by it', () => {
    const optimization = (count: number): CorpusMember[] =>
      shadowMembers(Array.from({ length: count }, () => 0)).map((member, index) => ({
        ...member,
        exampleId: `o${index}`,
        partition: 'optimization' as const,
      }));
    const byRounds = (count: number): CorpusMember[] =>
      shadowMembers(Array.from({ length: count }, () => 0)).map((member) => ({ ...member, shadowRounds: 2 }));
    const policy: CorpusPolicy = { ...POLICY, graduateAfterRounds: 2, rotateSlice: 3 };
    // 9 in shadow, 6 in optimization: 9 > 6 moves one, 8 > 7 another, then 7 ≤ 8 holds the rest.
    const plan = planBoundary([...byRounds(9), ...optimization(6)], policy, new Date(AT));
    expect(plan.kind).toBe('graduate');
    if (plan.kind !== 'graduate') return;
    expect(plan.moves.map((move) => move.exampleId)).toEqual(['s0', 's1']);
    expect(plan.held).toMatch(
      /7 due example\(s\) wait: due by time in shadow only, and the shadow \(7\) is no larger than the optimization partition \(8\)/,
    );
    // A shadow already no larger than optimization keeps every example due by rounds.
    expect(planBoundary([...byRounds(22), ...optimization(40)], policy, new Date(AT))).toMatchObject({ kind: 'none' });
    // Examples whose novelty is spent by exposures graduate whatever the sizes (down to the minimum).
    const exposed = planBoundary([...shadowMembers([3, 3, 3, 3, 3, 3, 3]), ...optimization(40)], policy, new Date(AT));
    expect(exposed.kind).toBe('graduate');
    if (exposed.kind === 'graduate') expect(exposed.moves).toHaveLength(2);
  });

  it('graduates by days in shadow when graduateAfterDays is set', () => {
    const plan = planBoundary(
      shadowMembers([0, 0, 0, 0, 0, 0, 0]),
      { ...POLICY, graduateAfterDays: 10 },
      new Date('2026-01-12T00:00:00.000Z'),
    );
    expect(plan.kind).toBe('graduate');
  });

  it('rotates the most exposed slice out of a spent shadow', () => {
    const plan = planBoundary(shadowMembers([5, 1, 6, 1, 1, 1, 1, 1]), POLICY, new Date(AT));
    expect(plan.kind).toBe('rotate');
    if (plan.kind === 'rotate') {
      expect(plan.moves.map((move) => [move.exampleId, move.kind, move.to])).toEqual([
        ['s2', 'rotated_out', 'optimization'],
        ['s0', 'rotated_out', 'optimization'],
      ]);
      expect(plan.spent).toEqual(['s2', 's0']);
    }
  });

  it('refuses to rotate when the shadow would shrink below the minimum, saying why', () => {
    const plan = planBoundary(shadowMembers([5, 5, 5, 5, 5, 5]), POLICY, new Date(AT));
    expect(plan.kind).toBe('spent');
    if (plan.kind === 'spent') expect(plan.reason).toMatch(/would leave 4 \(< the minimum of 5\).*kloop corpus add/);
    expect(
      planBoundary(shadowMembers([5, 5, 5, 5, 5, 5, 5, 5]), { ...POLICY, rotateSlice: 0 }, new Date(AT)).kind,
    ).toBe('spent');
  });

  it('never moves anchors', () => {
    const anchors = shadowMembers([9, 9]).map((member) => ({ ...member, partition: 'anchor' as const }));
    expect(planBoundary(anchors, POLICY, new Date(AT))).toMatchObject({ kind: 'none', due: [] });
  });
});

describe('reconstructPartitions', () => {
  const event = (
    id: number,
    exampleId: string,
    kind: CorpusEvent['kind'],
    to: CorpusEvent['to'],
    experimentId: number | null,
  ): CorpusEvent => ({
    id,
    exampleId,
    kind,
    from: null,
    to,
    reason: kind,
    experimentId,
    createdAt: AT,
  });
  const events = [
    event(1, 'a', 'anchored', 'anchor', null),
    event(2, 'o', 'initial', 'optimization', null),
    event(3, 's1', 'initial', 'shadow', null),
    event(4, 's2', 'initial', 'shadow', null),
    event(5, 's1', 'graduated', 'optimization', 3),
    event(6, 'n', 'admitted', 'shadow', 4),
  ];
  const decisions = [1, 2, 3, 4, 5, 6].map((id) => ({ id, shadowConsulted: id % 2 === 1 }));

  it('folds the moves recorded before a decision, and counts exposures from earlier decisions', () => {
    expect(reconstructPartitions(events, decisions, 1)).toMatchObject({
      partitions: { optimization: ['o'], anchor: ['a'], shadow: ['s1', 's2'] },
      exposures: {},
      beforeLifecycle: false,
    });
    expect(reconstructPartitions(events, decisions, 3).partitions.shadow).toEqual(['s1', 's2']);
    const at4 = reconstructPartitions(events, decisions, 4);
    expect(at4.partitions).toEqual({ optimization: ['o', 's1'], anchor: ['a'], shadow: ['s2'] });
    expect(at4.exposures).toEqual({ s1: 2, s2: 2 });
    const at6 = reconstructPartitions(events, decisions, 6);
    expect(at6.partitions.shadow).toEqual(['n', 's2']);
    expect(at6.exposures).toEqual({ s1: 2, s2: 3, n: 1 });
  });

  it('after a reset that kept the corpus history, counts exposures from the ones the reset recorded', () => {
    const kept = [
      event(1, 'a', 'anchored', 'anchor', null),
      event(2, 'o', 'initial', 'optimization', null),
      event(3, 's1', 'initial', 'shadow', null),
      {
        ...event(4, null as unknown as string, 'reset', null, null),
        exampleId: null,
        details: { exposures: { s1: 7 } },
      },
    ];
    expect(reconstructPartitions(kept, decisions, 1).exposures).toEqual({ s1: 7 });
    expect(reconstructPartitions(kept, decisions, 3).exposures).toEqual({ s1: 8 }); // decision 1 consulted shadow
  });

  it('says when a decision predates the recorded lifecycle', () => {
    const late = events.map((item) => ({ ...item, experimentId: (item.experimentId ?? 0) + 10 }));
    expect(reconstructPartitions(late, decisions, 5).beforeLifecycle).toBe(true);
  });
});

describe('promotions and rounds', () => {
  const member = (
    id: string,
    partition: CorpusMember['partition'],
    extra: Partial<CorpusMember> = {},
  ): CorpusMember => ({
    exampleId: id,
    origin: 'file',
    source: 'corpus/a.yaml',
    partition,
    shadowExposures: 0,
    shadowSince: partition === 'shadow' ? AT : null,
    admittedAt: AT,
    updatedAt: AT,
    ...extra,
  });

  it('lets a promoted placement stand against the file label, and keeps the rule for the rest', () => {
    const promotedAnchor = member('o1', 'anchor', { promotedBy: 'Ada' });
    const demotedAnchor = member('a1', 'optimization', { promotedBy: 'Ada' });
    const plan = planCorpusSync(files({ o1: 'optimization', a1: 'anchor' }), [promotedAnchor, demotedAnchor], AT);
    expect(plan.moves).toEqual([]);
    expect(() => planCorpusSync(files({ o1: 'optimization' }), [member('o1', 'anchor')], AT)).toThrow(InputError);
  });

  it('makes a shadow member due after graduateAfterRounds rounds in shadow', () => {
    const policy = { ...POLICY, graduateAfterRounds: 4 };
    const members = [
      ...shadowMembers([0, 0, 0, 0, 0, 0, 0]).map((item, index) => ({ ...item, shadowRounds: index < 2 ? 4 : 3 })),
    ];
    const plan = planBoundary(members, policy, new Date(AT));
    expect(plan).toMatchObject({ kind: 'graduate', due: ['s0', 's1'] });
    expect(plan.kind === 'graduate' && plan.moves[0]!.reason).toBe('served 4 rounds in shadow (graduateAfterRounds 4)');
    expect(planBoundary(members, { ...policy, graduateAfterRounds: 5 }, new Date(AT)).kind).toBe('none');
  });
});
