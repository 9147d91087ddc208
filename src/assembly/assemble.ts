/**
 * Assembly: map an intent onto the pattern library — directly (one pattern
 * covers everything), decomposed (a greedy set cover of several patterns
 * covers everything) or partially (something stays uncovered) — and build the
 * assembled app.
 *
 * Source: DESIGN.md §1 and §5 (Loop A, Loop D signals).
 */
import type { Intent, IntentEntity } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { Behavior } from '../tasks/intent/vocabulary.ts';
import type { AssembledApp, EntityMatchKind } from './assembled-app.ts';
import type { AssemblyMethod } from './assembly-method.ts';
import { createAssembledApp } from './create-assembled-app.ts';
import { matchPattern, type EntityMatch, type PatternMatch } from './match.ts';
import type { Pattern } from './pattern.ts';
import type { PatternLibrary } from './pattern-library.ts';

/** How an intent was assembled (defined in ./assembly-method.ts). */
export type { AssemblyMethod };

/** What one chosen pattern contributes (lists are disjoint across patterns). */
export interface PatternUse {
  id: string;
  /** Intent entity names this pattern hosts (their fields come from it). */
  coveredEntities: string[];
  /**
   * Intent entities no pattern names, attached to this pattern as extensions:
   * each is related by an intent relation to an entity the pattern hosts (a
   * detail record of it, with its role's default fields).
   */
  extendedEntities: string[];
  /** Intent behaviours first covered by this pattern. */
  coveredBehaviors: Behavior[];
}

/** The result of {@link assembleIntent}. */
export interface Assembly {
  method: AssemblyMethod;
  /** In [0, 1]; see {@link CONFIDENCE_WEIGHTS} for the formula. */
  confidence: number;
  /** Chosen patterns, in the order the greedy cover picked them. */
  patterns: PatternUse[];
  /** What no chosen pattern covers, even as an extension; uncovered entities are still plain tables of the app. */
  uncovered: { entities: string[]; behaviors: Behavior[] };
  /** Entities covered as extensions (see {@link PatternUse.extendedEntities}): the entity, the hosted entity it relates to, the pattern. */
  extensions: Array<{ entity: string; relatedTo: string; patternId: string }>;
  app: AssembledApp;
}

/**
 * The weights of the assembly confidence:
 *
 *     entityShare   = Σ credit(e) / |E|   credit: 1 for a name or alias match,
 *                                         roleMatchCredit for a role-slot match,
 *                                         extensionCredit for an extension, 0 if uncovered
 *     behaviorShare = covered behaviours / |B|
 *     coverage      = entities · entityShare + behaviors · behaviorShare
 *                     (when the intent has no behaviours, coverage = entityShare)
 *     confidence    = coverage · extraPatternFactor^(patterns − 1)
 *
 * With the defaults: one pattern naming everything → 1; two patterns covering
 * everything by name → 0.9; a direct assembly that needed one role slot out of
 * four entities → 0.7 · 0.875 + 0.3 = 0.9125. An intent with no entities has
 * confidence 0. Loop D reads confidence below 0.70 as low (DESIGN.md §5).
 */
export const CONFIDENCE_WEIGHTS = Object.freeze({
  entities: 0.7,
  behaviors: 0.3,
  roleMatchCredit: 0.5,
  extensionCredit: 0.5,
  extraPatternFactor: 0.9,
});

/** Coverage credit of one entity match (see {@link CONFIDENCE_WEIGHTS}). */
export function matchCredit(kind: EntityMatchKind | undefined): number {
  if (kind === undefined) return 0;
  return kind === 'role' ? CONFIDENCE_WEIGHTS.roleMatchCredit : 1;
}

/**
 * Assemble an intent onto a pattern library.
 *
 * Intent entities are deduplicated by normalised name (first wins) and
 * behaviours by value. Then:
 * 1. **direct** — if some pattern covers every entity and behaviour, the best
 *    such pattern is used (highest confidence, then one listing the intent's
 *    app type, then the fewest pattern entities, then library order);
 * 2. otherwise a **greedy set cover**: repeatedly take the pattern with the
 *    largest coverage gain (the coverage term of the confidence formula for
 *    the entities and behaviours it newly covers; ties as above), among
 *    patterns that host at least one intent entity, until no pattern adds
 *    anything;
 * 3. **extensions**: an entity still uncovered that an intent relation links
 *    to an entity a chosen pattern hosts (or to an extension of it) is
 *    attached to that pattern as an extension, hop by hop along the
 *    relations; an entity connected to no hosted entity stays uncovered.
 * **direct** when one pattern (with its extensions) covers every entity and
 * behaviour, **decomposed** when several do, else **partial**.
 *
 * Never throws for a valid intent; an intent with no entities is `partial`
 * with confidence 0 and an empty app.
 */
export function assembleIntent(intent: Intent, library: PatternLibrary | readonly Pattern[]): Assembly {
  const patterns: readonly Pattern[] = 'patterns' in library ? library.patterns : library;
  const entities = uniqueEntities(intent.entities);
  const behaviors = [...new Set(intent.behaviors)];
  const matches = patterns.map((pattern) => matchPattern(entities, behaviors, pattern));

  const assigned = new Map<number, { match: EntityMatch; patternId: string }>();
  const coveredBehaviors = new Set<Behavior>();
  const uses: PatternUse[] = [];
  const chosen: PatternMatch[] = [];
  const take = (candidate: PatternMatch): void => {
    const use: PatternUse = {
      id: candidate.pattern.id,
      coveredEntities: [],
      extendedEntities: [],
      coveredBehaviors: [],
    };
    for (const match of candidate.entities) {
      if (assigned.has(match.intentIndex)) continue;
      assigned.set(match.intentIndex, { match, patternId: candidate.pattern.id });
      use.coveredEntities.push(entities[match.intentIndex]!.name);
    }
    for (const behavior of candidate.behaviors) {
      if (coveredBehaviors.has(behavior)) continue;
      coveredBehaviors.add(behavior);
      use.coveredBehaviors.push(behavior);
    }
    uses.push(use);
    chosen.push(candidate);
  };

  if (entities.length > 0) {
    const complete = matches.filter(
      (match) => match.entities.length === entities.length && match.behaviors.length === behaviors.length,
    );
    const best = pickBest(
      complete,
      (match) => coverageOf(entityCredit(match.entities), match.behaviors.length, entities.length, behaviors.length),
      intent,
    );
    if (best !== undefined) take(best);
    else {
      for (;;) {
        const remaining = matches.filter((match) => match.entities.length > 0 && !chosen.includes(match));
        const gainOf = (match: PatternMatch): number =>
          coverageOf(
            entityCredit(match.entities.filter((entity) => !assigned.has(entity.intentIndex))),
            match.behaviors.filter((behavior) => !coveredBehaviors.has(behavior)).length,
            entities.length,
            behaviors.length,
          );
        const next = pickBest(
          remaining.filter((match) => gainOf(match) > 0),
          gainOf,
          intent,
        );
        if (next === undefined) break;
        take(next);
      }
    }
  }

  // Extensions: along the intent's relations from a hosted entity (and from extensions, hop by hop).
  const indexByKey = new Map(entities.map((entity, index) => [normalizeEntityName(entity.name), index]));
  const extensions: Assembly['extensions'] = [];
  const extended = new Set<number>();
  const hostOf = (index: number): { patternId: string } | undefined => {
    const hosted = assigned.get(index);
    if (hosted !== undefined) return hosted;
    const extension = extended.has(index)
      ? extensions.find((entry) => entry.entity === entities[index]!.name)
      : undefined;
    return extension === undefined ? undefined : { patternId: extension.patternId };
  };
  for (let grew = true; grew; ) {
    grew = false;
    for (const relation of intent.relations) {
      const ends = [
        indexByKey.get(normalizeEntityName(relation.from)),
        indexByKey.get(normalizeEntityName(relation.to)),
      ];
      for (const [self, other] of [
        [ends[0], ends[1]],
        [ends[1], ends[0]],
      ] as const) {
        if (self === undefined || other === undefined || assigned.has(self) || extended.has(self)) continue;
        const host = hostOf(other);
        if (host === undefined) continue;
        extended.add(self);
        grew = true;
        extensions.push({ entity: entities[self]!.name, relatedTo: entities[other]!.name, patternId: host.patternId });
        uses.find((use) => use.id === host.patternId)?.extendedEntities.push(entities[self]!.name);
      }
    }
  }

  const uncoveredEntities = entities
    .filter((_, index) => !assigned.has(index) && !extended.has(index))
    .map((entity) => entity.name);
  const uncoveredBehaviors = behaviors.filter((behavior) => !coveredBehaviors.has(behavior));
  const everythingCovered = entities.length > 0 && uncoveredEntities.length === 0 && uncoveredBehaviors.length === 0;
  const method: AssemblyMethod = !everythingCovered ? 'partial' : uses.length === 1 ? 'direct' : 'decomposed';

  const credits = [...assigned.values()].map(({ match }) => match);
  const extensionCredit = extended.size * CONFIDENCE_WEIGHTS.extensionCredit;
  const coverage =
    entities.length === 0
      ? 0
      : coverageOf(entityCredit(credits) + extensionCredit, coveredBehaviors.size, entities.length, behaviors.length);
  const confidence = clampUnit(coverage * CONFIDENCE_WEIGHTS.extraPatternFactor ** Math.max(0, uses.length - 1));

  const app = createAssembledApp({ intent, entities, behaviors, chosen, assigned });
  return {
    method,
    confidence,
    patterns: uses,
    uncovered: { entities: uncoveredEntities, behaviors: uncoveredBehaviors },
    extensions,
    app,
  };
}

/** The coverage term of the confidence formula. */
function coverageOf(
  entityCreditSum: number,
  behaviorCount: number,
  entityTotal: number,
  behaviorTotal: number,
): number {
  if (entityTotal === 0) return 0;
  const entityShare = entityCreditSum / entityTotal;
  if (behaviorTotal === 0) return entityShare;
  return CONFIDENCE_WEIGHTS.entities * entityShare + CONFIDENCE_WEIGHTS.behaviors * (behaviorCount / behaviorTotal);
}

function entityCredit(matches: readonly EntityMatch[]): number {
  return matches.reduce((sum, match) => sum + matchCredit(match.kind), 0);
}

/** Highest score; ties: lists the intent's app type, then fewer pattern entities, then library order. */
function pickBest(
  candidates: readonly PatternMatch[],
  score: (match: PatternMatch) => number,
  intent: Intent,
): PatternMatch | undefined {
  let best: PatternMatch | undefined;
  let bestKey: [number, number, number] | undefined;
  for (const candidate of candidates) {
    const key: [number, number, number] = [
      score(candidate),
      candidate.pattern.appTypes.includes(intent.appType) ? 1 : 0,
      -candidate.pattern.entities.length,
    ];
    if (bestKey === undefined || compareKeys(key, bestKey) > 0) {
      best = candidate;
      bestKey = key;
    }
  }
  return best;
}

function compareKeys(left: readonly number[], right: readonly number[]): number {
  for (let index = 0; index < left.length; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (Math.abs(difference) > 1e-12) return difference;
  }
  return 0;
}

function uniqueEntities(entities: readonly IntentEntity[]): IntentEntity[] {
  const seen = new Set<string>();
  return entities.filter((entity) => {
    const key = normalizeEntityName(entity.name);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function clampUnit(value: number): number {
  return Math.min(1, Math.max(0, value));
}
