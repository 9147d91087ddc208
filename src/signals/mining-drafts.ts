/**
 * What shape mining (./mining.ts) proposes for review from a mined shape: a
 * candidate pattern drafted from its supporters' roles and behaviours (at most
 * eight entities), and a candidate example from a goal that had that shape.
 */
import { createHash } from 'node:crypto';
import type { IntentExample } from '../corpus/intent-example.ts';
import { exampleSchema, intentExample } from '../corpus/intent-example.ts';
import type { RoleIndex } from './candidate-pattern.ts';
import { draftPattern } from './candidate-pattern.ts';
import type { MinedCandidatePattern, MinedShape, Shape, ShapeState } from './mining.ts';

const MAX_DRAFT_ENTITIES = 8;

export function proposePattern(
  mined: MinedShape,
  supporters: readonly ShapeState[],
  roleIndex: RoleIndex | undefined,
): MinedCandidatePattern | undefined {
  const totals = new Map<string, { name: string; corpus: number; signals: number; roles: Map<string, number> }>();
  for (const supporter of supporters) {
    for (const [key, entry] of supporter.entities) {
      const total = totals.get(key) ?? { name: entry.name, corpus: 0, signals: 0, roles: new Map<string, number>() };
      total.corpus += entry.corpus;
      total.signals += entry.signals;
      for (const [role, count] of entry.roles) total.roles.set(role, (total.roles.get(role) ?? 0) + count);
      totals.set(key, total);
    }
  }
  const goldRole = (roles: Map<string, number>): string | undefined =>
    [...roles.entries()].sort((left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1))[0]?.[0];
  const fromCorpus = [...totals.values()]
    .filter((entry) => mined.corpusExamples > 0 && entry.corpus * 2 >= mined.corpusExamples)
    .map((entry) => ({
      name: entry.name,
      count: entry.corpus,
      source: 'corpus' as const,
      role: goldRole(entry.roles),
    }));
  const fromSignals = [...totals.values()]
    .filter((entry) => mined.signals > 0 && entry.signals * 2 >= mined.signals)
    .map((entry) => ({
      name: entry.name,
      count: entry.signals,
      source: 'signals' as const,
      role: goldRole(entry.roles),
    }));
  const entities = (fromCorpus.length > 0 ? fromCorpus : fromSignals)
    .sort((left, right) => right.count - left.count || (left.name < right.name ? -1 : 1))
    .slice(0, MAX_DRAFT_ENTITIES);
  if (entities.length === 0) return undefined;
  const draft = draftPattern(
    {
      idWords: [mined.appType, ...entities.slice(0, 2).map((entry) => entry.name)],
      title: `${mined.appType}: ${entities
        .slice(0, 3)
        .map((entry) => entry.name)
        .join(', ')}`,
      description:
        `Drafted by Loop C (pattern mining) for the recurring shape ${mined.key}: no pattern of the library covers all its roles ` +
        'and behaviours. Counts and sources are in the review item evidence.',
      appType: mined.appType,
      entities: entities.map((entry) =>
        entry.role !== undefined ? { name: entry.name, role: entry.role } : { name: entry.name },
      ),
      behaviors: mined.behaviors,
    },
    roleIndex,
  );
  const corpusExamples = supporters.flatMap((supporter) => supporter.corpusIds).slice(0, 20);
  return {
    shapeKey: mined.key,
    draft,
    evidence: {
      signals: mined.signals,
      corpusExamples,
      entities: entities.map(({ name, count, source }) => ({ name, count, source })),
    },
  };
}

export function proposeExample(shape: Shape, goal: { id: string; goal: string }): IntentExample | undefined {
  const digest = createHash('sha256').update(goal.goal).digest('hex').slice(0, 12);
  const parsed = exampleSchema.safeParse({
    id: `loop-c-${digest}`,
    goal: goal.goal,
    expected: { appType: shape.appType, behaviors: shape.behaviors },
    tags: ['loop-c', 'needs-gold', `shape:${shape.appType}`],
    partition: 'shadow',
  });
  return parsed.success ? intentExample(parsed.data) : undefined;
}
