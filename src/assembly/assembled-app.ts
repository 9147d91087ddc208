/**
 * The assembled app: an intent mapped onto patterns, with every entity carrying
 * concrete fields, every relation a cardinality and kind, and every projection
 * an entity. It is the input of `compileApp` and is plain JSON.
 */
import type {
  AppType,
  Behavior,
  Cardinality,
  EntityRole,
  Projection,
  RelationKind,
} from '../tasks/intent/vocabulary.ts';
import type { PatternField } from './pattern.ts';

/** A column-to-be of an app entity (same shape as a pattern field). */
export type AppField = PatternField;

/** How an intent entity was matched to a pattern entity. */
export type EntityMatchKind = 'name' | 'alias' | 'role';

/** Where an app entity's fields came from: a pattern entity, or the role defaults (uncovered). */
export type AppEntitySource =
  | { patternId: string; patternEntity: string; match: EntityMatchKind }
  | { patternId: null };

/** One entity of the app; `name` is the intent's own name for it. */
export interface AppEntity {
  name: string;
  role: EntityRole;
  fields: AppField[];
  source: AppEntitySource;
}

/** One relation of the app, read from `from` to `to` (entity names of the app). */
export interface AppRelation {
  from: string;
  to: string;
  cardinality: Cardinality;
  kind: RelationKind;
  /** `'intent'` when the intent stated it (possibly completed from a pattern), else the pattern id. */
  source: string;
}

/** One view or workflow of the app over one entity. */
export interface AppProjection {
  kind: Projection;
  entity: string;
}

/** The assembled app. */
export interface AssembledApp {
  appType: AppType;
  entities: AppEntity[];
  relations: AppRelation[];
  behaviors: Behavior[];
  projections: AppProjection[];
}

/**
 * Fields given to an entity that no pattern covers (a plain table): a label
 * for parties, resources and references (`name`), a title for documents, an
 * amount and a time for transactions, a start and end time for commitments (a
 * commitment is time-bound by definition).
 */
export const ROLE_DEFAULT_FIELDS: Readonly<Record<EntityRole, readonly AppField[]>> = Object.freeze({
  party: [{ name: 'name', type: 'TEXT', required: true, unique: false }],
  resource: [{ name: 'name', type: 'TEXT', required: true, unique: false }],
  reference: [{ name: 'name', type: 'TEXT', required: true, unique: false }],
  document: [{ name: 'title', type: 'TEXT', required: true, unique: false }],
  transaction: [
    { name: 'amount', type: 'NUMERIC', required: false, unique: false },
    { name: 'occurredAt', type: 'DATETIME', required: true, unique: false },
  ],
  commitment: [
    { name: 'startsAt', type: 'DATETIME', required: true, unique: false },
    { name: 'endsAt', type: 'DATETIME', required: false, unique: false },
  ],
});
