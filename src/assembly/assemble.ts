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
  const state: CoverState = {
    intent,
    entities,
    behaviors,
    matches: patterns.map((pattern) => matchPattern(entities, behaviors, pattern)),
    assigned: new Map(),
    coveredBehaviors: new Set(),
    uses: [],
    chosen: [],
    extensions: [],
    extended: new Set(),
  };
  if (entities.length > 0) chooseCover(state);
  extendAlongRelations(state);

  const uncoveredEntities = entities
    .filter((_, index) => !state.assigned.has(index) && !state.extended.has(index))
    .map((entity) => entity.name);
  const uncoveredBehaviors = behaviors.filter((behavior) => !state.coveredBehaviors.has(behavior));
  const everythingCovered = entities.length > 0 && uncoveredEntities.length === 0 && uncoveredBehaviors.length === 0;
  const method: AssemblyMethod = !everythingCovered ? 'partial' : state.uses.length === 1 ? 'direct' : 'decomposed';
  const confidence = assemblyConfidence(state);
  const app = createAssembledApp({ intent, entities, behaviors, chosen: state.chosen, assigned: state.assigned });
  return {
    method,
    confidence,
    patterns: state.uses,
    uncovered: { entities: uncoveredEntities, behaviors: uncoveredBehaviors },
    extensions: state.extensions,
    app,
  };
}

/** The state of one assembly: the deduplicated intent, the pattern matches, and what is covered so far. */
interface CoverState {
  intent: Intent;
  entities: IntentEntity[];
  behaviors: Behavior[];
  matches: PatternMatch[];
  /** Intent entity index → the match hosting it and its pattern. */
  assigned: Map<number, { match: EntityMatch; patternId: string }>;
  coveredBehaviors: Set<Behavior>;
  uses: PatternUse[];
  chosen: PatternMatch[];
  extensions: Assembly['extensions'];
  /** Intent entity indexes covered as extensions. */
  extended: Set<number>;
}

/** Take a pattern: it hosts the entities and covers the behaviours not yet taken. */
function takePattern(state: CoverState, candidate: PatternMatch): void {
  const use: PatternUse = {
    id: candidate.pattern.id,
    coveredEntities: [],
    extendedEntities: [],
    coveredBehaviors: [],
  };
  for (const match of candidate.entities) {
    if (state.assigned.has(match.intentIndex)) continue;
    state.assigned.set(match.intentIndex, { match, patternId: candidate.pattern.id });
    use.coveredEntities.push(state.entities[match.intentIndex]!.name);
  }
  for (const behavior of candidate.behaviors) {
    if (state.coveredBehaviors.has(behavior)) continue;
    state.coveredBehaviors.add(behavior);
    use.coveredBehaviors.push(behavior);
  }
  state.uses.push(use);
  state.chosen.push(candidate);
}

/** Step 1 and 2: one complete pattern if any, else the greedy set cover. */
function chooseCover(state: CoverState): void {
  const { intent, entities, behaviors, matches } = state;
  const complete = matches.filter(
    (match) => match.entities.length === entities.length && match.behaviors.length === behaviors.length,
  );
  const best = pickBest(
    complete,
    (match) => coverageOf(entityCredit(match.entities), match.behaviors.length, entities.length, behaviors.length),
    intent,
  );
  if (best !== undefined) {
    takePattern(state, best);
    return;
  }
  for (;;) {
    const remaining = matches.filter((match) => match.entities.length > 0 && !state.chosen.includes(match));
    const gainOf = (match: PatternMatch): number =>
      coverageOf(
        entityCredit(match.entities.filter((entity) => !state.assigned.has(entity.intentIndex))),
        match.behaviors.filter((behavior) => !state.coveredBehaviors.has(behavior)).length,
        entities.length,
        behaviors.length,
      );
    const next = pickBest(
      remaining.filter((match) => gainOf(match) > 0),
      gainOf,
      intent,
    );
    if (next === undefined) break;
    takePattern(state, next);
  }
}

/** The pattern hosting an entity, directly or as an extension. */
function hostOf(state: CoverState, index: number): { patternId: string } | undefined {
  const hosted = state.assigned.get(index);
  if (hosted !== undefined) return hosted;
  const extension = state.extended.has(index)
    ? state.extensions.find((entry) => entry.entity === state.entities[index]!.name)
    : undefined;
  return extension === undefined ? undefined : { patternId: extension.patternId };
}

/** Step 3: extensions along the intent's relations from a hosted entity (and from extensions, hop by hop). */
function extendAlongRelations(state: CoverState): void {
  const { entities } = state;
  const indexByKey = new Map(entities.map((entity, index) => [normalizeEntityName(entity.name), index]));
  for (let grew = true; grew; ) {
    grew = false;
    for (const relation of state.intent.relations) {
      const ends = [
        indexByKey.get(normalizeEntityName(relation.from)),
        indexByKey.get(normalizeEntityName(relation.to)),
      ];
      for (const [self, other] of [
        [ends[0], ends[1]],
        [ends[1], ends[0]],
      ] as const) {
        if (self === undefined || other === undefined || state.assigned.has(self) || state.extended.has(self)) continue;
        const host = hostOf(state, other);
        if (host === undefined) continue;
        state.extended.add(self);
        grew = true;
        state.extensions.push({
          entity: entities[self]!.name,
          relatedTo: entities[other]!.name,
          patternId: host.patternId,
        });
        state.uses.find((use) => use.id === host.patternId)?.extendedEntities.push(entities[self]!.name);
      }
    }
  }
}

/** The confidence of {@link CONFIDENCE_WEIGHTS} for what the state covers. */
function assemblyConfidence(state: CoverState): number {
  const { entities, behaviors } = state;
  const credits = [...state.assigned.values()].map(({ match }) => match);
  const extensionCredit = state.extended.size * CONFIDENCE_WEIGHTS.extensionCredit;
  const coverage =
    entities.length === 0
      ? 0
      : coverageOf(
          entityCredit(credits) + extensionCredit,
          state.coveredBehaviors.size,
          entities.length,
          behaviors.length,
        );
  return clampUnit(coverage * CONFIDENCE_WEIGHTS.extraPatternFactor ** Math.max(0, state.uses.length - 1));
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
