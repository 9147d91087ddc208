/**
 * Matching one intent against one pattern: which intent entities the pattern
 * can host, and which intent behaviours it supports.
 *
 * An intent entity matches a pattern entity when its normalised name
 * (`normalizeEntityName`) equals the pattern entity's normalised name
 * (`'name'`) or one of its aliases (`'alias'`). Only then, each pattern entity
 * documented with `roleFallback: true` that no intent entity matched by name
 * or alias takes the first still-unmatched intent entity of the same role
 * (`'role'`). Several intent entities may match the same pattern entity by
 * name or alias; a role slot is filled at most once.
 */
import type { IntentEntity } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { Behavior } from '../tasks/intent/vocabulary.ts';
import type { EntityMatchKind } from './assembled-app.ts';
import type { Pattern, PatternEntity } from './pattern.ts';

/** One intent entity hosted by one pattern entity. */
export interface EntityMatch {
  /** Index into the entity list given to {@link matchPattern}. */
  intentIndex: number;
  patternEntity: PatternEntity;
  kind: EntityMatchKind;
}

/** What one pattern covers of an intent. */
export interface PatternMatch {
  pattern: Pattern;
  /** In intent order; at most one per intent entity. */
  entities: EntityMatch[];
  /** Intent behaviours the pattern lists, in intent order. */
  behaviors: Behavior[];
}

/** Match a list of intent entities and behaviours against one pattern. */
export function matchPattern(
  entities: readonly IntentEntity[],
  behaviors: readonly Behavior[],
  pattern: Pattern,
): PatternMatch {
  const byKey = new Map<string, { entity: PatternEntity; kind: EntityMatchKind }>();
  for (const entity of pattern.entities) {
    byKey.set(normalizeEntityName(entity.name), { entity, kind: 'name' });
  }
  for (const entity of pattern.entities) {
    for (const alias of entity.aliases) {
      const key = normalizeEntityName(alias);
      if (!byKey.has(key)) byKey.set(key, { entity, kind: 'alias' });
    }
  }

  const found: (EntityMatch | undefined)[] = entities.map((entity, intentIndex) => {
    const hit = byKey.get(normalizeEntityName(entity.name));
    return hit === undefined ? undefined : { intentIndex, patternEntity: hit.entity, kind: hit.kind };
  });

  const namedSlots = new Set(found.flatMap((match) => (match === undefined ? [] : [match.patternEntity])));
  for (const slot of pattern.entities) {
    if (!slot.roleFallback || namedSlots.has(slot)) continue;
    const candidate = entities.findIndex((entity, index) => found[index] === undefined && entity.role === slot.role);
    if (candidate >= 0) found[candidate] = { intentIndex: candidate, patternEntity: slot, kind: 'role' };
  }

  const supported = new Set(pattern.behaviors);
  return {
    pattern,
    entities: found.filter((match): match is EntityMatch => match !== undefined),
    behaviors: behaviors.filter((behavior) => supported.has(behavior)),
  };
}
