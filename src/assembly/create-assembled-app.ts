/**
 * Build the assembled app from the chosen patterns: fields per entity,
 * relations (intent first, completed and extended by the patterns) and
 * projections placed on entities.
 */
import type { Intent, IntentEntity } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { Behavior, Cardinality, Projection, RelationKind } from '../tasks/intent/vocabulary.ts';
import {
  ROLE_DEFAULT_FIELDS,
  type AppEntity,
  type AppProjection,
  type AppRelation,
  type AssembledApp,
} from './assembled-app.ts';
import type { EntityMatch, PatternMatch } from './match.ts';
import { timeFieldOf } from './pattern.ts';

/** Inputs of {@link createAssembledApp}, as computed by `assembleIntent`. */
export interface AssembledAppInput {
  intent: Intent;
  /** Deduplicated intent entities. */
  entities: readonly IntentEntity[];
  /** Deduplicated intent behaviours. */
  behaviors: readonly Behavior[];
  /** Chosen pattern matches, in choice order. */
  chosen: readonly PatternMatch[];
  /** Intent entity index → the match that hosts it. */
  assigned: ReadonlyMap<number, { match: EntityMatch; patternId: string }>;
}

/** Default cardinality of a relation that states none: `is_a` → one_to_one, else one_to_many. */
export function defaultCardinality(kind: RelationKind | undefined): Cardinality {
  return kind === 'is_a' ? 'one_to_one' : 'one_to_many';
}

/**
 * The app:
 * - **entities**: every deduplicated intent entity under its own name and role;
 *   fields from the pattern entity hosting it, or {@link ROLE_DEFAULT_FIELDS}
 *   when uncovered;
 * - **relations**: every intent relation (endpoints resolved to app names by
 *   normalised name, kept as written when unknown so the gates can report
 *   them; a missing cardinality or kind is taken from a pattern relation over
 *   the same pair, else {@link defaultCardinality} and `association`), then
 *   every relation of a chosen pattern whose two ends host intent entities,
 *   for pairs the intent does not relate; one relation per unordered pair;
 * - **projections**: for each intent projection kind, the chosen patterns'
 *   projections of that kind on hosted entities; when there are none, one on
 *   the entity that suits the kind best (a commitment with a time field for a
 *   calendar, an entity with a status for a kanban, ...).
 */
export function createAssembledApp(input: AssembledAppInput): AssembledApp {
  const { intent, behaviors } = input;
  const appEntities = input.entities.map((entity, index) => appEntityOf(entity, input.assigned.get(index)));
  const relations = appRelations(input, patternRelationsOf(input));
  const projections = appProjections(input, appEntities);
  return { appType: intent.appType, entities: appEntities, relations, behaviors: [...behaviors], projections };
}

/** An intent entity with the fields of the pattern entity hosting it, or its role's defaults. */
function appEntityOf(entity: IntentEntity, host: { match: EntityMatch; patternId: string } | undefined): AppEntity {
  if (host === undefined) {
    return {
      name: entity.name,
      role: entity.role,
      fields: ROLE_DEFAULT_FIELDS[entity.role].map((field) => ({ ...field })),
      source: { patternId: null },
    };
  }
  return {
    name: entity.name,
    role: entity.role,
    fields: host.match.patternEntity.fields.map((field) => ({
      ...field,
      ...(field.values ? { values: [...field.values] } : {}),
    })),
    source: { patternId: host.patternId, patternEntity: host.match.patternEntity.name, match: host.match.kind },
  };
}

/** Pattern relations translated to app entity names (every match of a chosen pattern, not only the entities it hosts). */
function patternRelationsOf({ entities, chosen }: AssembledAppInput): AppRelation[] {
  const patternRelations: AppRelation[] = [];
  for (const candidate of chosen) {
    const hosts = (patternEntityName: string): string[] =>
      candidate.entities
        .filter((match) => normalizeEntityName(match.patternEntity.name) === normalizeEntityName(patternEntityName))
        .map((match) => entities[match.intentIndex]!.name);
    for (const relation of candidate.pattern.relations) {
      for (const from of hosts(relation.from)) {
        for (const to of hosts(relation.to)) {
          patternRelations.push({
            from,
            to,
            cardinality: relation.cardinality,
            kind: relation.kind,
            source: candidate.pattern.id,
          });
        }
      }
    }
  }
  return patternRelations;
}

/** The intent relations (completed from the patterns), then the pattern relations over pairs not yet related. */
function appRelations(
  { intent, entities }: AssembledAppInput,
  patternRelations: readonly AppRelation[],
): AppRelation[] {
  const nameByKey = new Map(entities.map((entity) => [normalizeEntityName(entity.name), entity.name]));
  const resolveName = (name: string): string => nameByKey.get(normalizeEntityName(name)) ?? name;
  const relations: AppRelation[] = [];
  const pairs = new Set<string>();
  for (const relation of intent.relations) {
    const from = resolveName(relation.from);
    const to = resolveName(relation.to);
    const key = pairKey(from, to);
    if (pairs.has(key)) continue;
    pairs.add(key);
    const template = patternRelations.find((candidate) => pairKey(candidate.from, candidate.to) === key);
    const oriented = template === undefined ? undefined : orient(template, from, to);
    const kind = relation.kind ?? oriented?.kind ?? 'association';
    const cardinality = relation.cardinality ?? oriented?.cardinality ?? defaultCardinality(kind);
    relations.push({ from, to, cardinality, kind, source: 'intent' });
  }
  for (const relation of patternRelations) {
    const key = pairKey(relation.from, relation.to);
    if (pairs.has(key)) continue;
    pairs.add(key);
    relations.push(relation);
  }
  return relations;
}

/** Each intent projection kind on the hosted entities the patterns place it on, else on the entity suiting it best. */
function appProjections(
  { intent, entities, chosen }: AssembledAppInput,
  appEntities: readonly AppEntity[],
): AppProjection[] {
  const projections: AppProjection[] = [];
  const seenProjections = new Set<string>();
  const addProjection = (kind: Projection, entity: string): void => {
    const key = `${kind}\u0000${normalizeEntityName(entity)}`;
    if (seenProjections.has(key)) return;
    seenProjections.add(key);
    projections.push({ kind, entity });
  };
  for (const kind of new Set(intent.projections)) {
    const before = projections.length;
    for (const candidate of chosen) {
      for (const projection of candidate.pattern.projections) {
        if (projection.kind !== kind) continue;
        for (const match of candidate.entities) {
          if (normalizeEntityName(match.patternEntity.name) === normalizeEntityName(projection.entity)) {
            addProjection(kind, entities[match.intentIndex]!.name);
          }
        }
      }
    }
    if (projections.length === before && appEntities.length > 0)
      addProjection(kind, defaultProjectionEntity(kind, appEntities).name);
  }
  return projections;
}

const ROLE_PREFERENCE: Record<Projection, readonly string[]> = {
  list: ['commitment', 'document', 'transaction', 'resource', 'party', 'reference'],
  detail: ['commitment', 'document', 'transaction', 'resource', 'party', 'reference'],
  form: ['commitment', 'document', 'transaction', 'resource', 'party', 'reference'],
  calendar: ['commitment', 'resource', 'document', 'transaction'],
  kanban: ['document', 'commitment', 'transaction'],
  dashboard: ['transaction', 'commitment', 'document'],
  timeline: ['commitment', 'transaction', 'document'],
  map: ['reference', 'resource', 'party'],
  gallery: ['resource', 'party', 'document'],
};

/** The entity a projection kind suits best when no pattern places it (ties: intent order). */
function defaultProjectionEntity(kind: Projection, entities: readonly AppEntity[]): AppEntity {
  const preference = ROLE_PREFERENCE[kind];
  let best = entities[0]!;
  let bestScore = -Infinity;
  for (const entity of entities) {
    const rank = preference.indexOf(entity.role);
    let score = rank < 0 ? 0 : preference.length - rank;
    const fieldNames = new Set(entity.fields.map((field) => field.name));
    if (kind === 'calendar' && timeFieldOf(entity) !== undefined) score += 10;
    if (kind === 'kanban' && fieldNames.has('status')) score += 10;
    if (kind === 'map' && fieldNames.has('latitude')) score += 10;
    if (kind === 'gallery' && [...fieldNames].some((name) => /(image|photo|picture)Url$/.test(name))) score += 10;
    if (score > bestScore) {
      best = entity;
      bestScore = score;
    }
  }
  return best;
}

function pairKey(from: string, to: string): string {
  const [first, second] = [normalizeEntityName(from), normalizeEntityName(to)].sort();
  return `${first}\u0000${second}`;
}

const FLIPPED: Record<Cardinality, Cardinality> = {
  one_to_one: 'one_to_one',
  one_to_many: 'many_to_one',
  many_to_one: 'one_to_many',
  many_to_many: 'many_to_many',
};

/** A pattern relation read in the direction `from → to`. */
function orient(relation: AppRelation, from: string, to: string): { cardinality: Cardinality; kind: RelationKind } {
  const sameDirection =
    normalizeEntityName(relation.from) === normalizeEntityName(from) &&
    normalizeEntityName(relation.to) === normalizeEntityName(to);
  if (sameDirection) return { cardinality: relation.cardinality, kind: relation.kind };
  // Reversed: the cardinality flips; is_a and composition have a direction, so they do not carry over.
  return { cardinality: FLIPPED[relation.cardinality], kind: 'association' };
}
