/**
 * The pattern format: one documented application shape that intents are
 * assembled onto. Patterns are YAML data files (one pattern per file) in
 * `src/assembly/patterns/` or in a user folder; see `pattern-library.ts`.
 *
 * ```yaml
 * id: booking
 * title: Appointment booking
 * description: Customers book time slots with a provider.
 * appTypes: [booking]
 * entities:
 *   - name: Customer
 *     role: party
 *     aliases: [client, patient]
 *     fields:
 *       - { name: name, type: TEXT, required: true }
 *   - name: Booking
 *     role: commitment
 *     aliases: [appointment, reservation]
 *     fields:
 *       - { name: startsAt, type: DATETIME, required: true }
 *       - { name: status, type: TEXT, values: [requested, confirmed, cancelled] }
 * relations:
 *   - { from: Customer, to: Booking, cardinality: one_to_many, kind: association }
 * behaviors: [scheduling, notification]
 * projections:
 *   - { kind: calendar, entity: Booking }
 * ```
 *
 * Rules beyond the field types (each reported with its field path):
 * - entity names and aliases are compared with `normalizeEntityName` and must
 *   be unique within a pattern;
 * - relations and projections name declared entities;
 * - a `commitment` entity has a time field (type `DATE` or `DATETIME`), and so
 *   does the entity of a `calendar` projection;
 * - field names are lowerCamelCase, unique per entity once snake_cased, not
 *   `id`/`createdAt` (generated), not ending in `Id` (declare a relation), and
 *   not an SQL reserved word once snake_cased.
 */
import { z } from 'zod';
import {
  appTypeSchema,
  behaviorSchema,
  cardinalitySchema,
  entityRoleSchema,
  projectionSchema,
  relationKindSchema,
} from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import { isReservedWord, snakeCase } from './sql-names.ts';

/**
 * Column types a pattern field may declare (SQLite type names; `BOOLEAN`,
 * `DATE` and `DATETIME` use SQLite's NUMERIC affinity).
 */
export const FIELD_TYPES = ['TEXT', 'INTEGER', 'REAL', 'NUMERIC', 'BOOLEAN', 'DATE', 'DATETIME', 'BLOB'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Field types that make a field a *time field* (what calendars and commitments need). */
export const TIME_FIELD_TYPES: ReadonlySet<FieldType> = new Set(['DATE', 'DATETIME']);

const nameSchema = z.string().trim().min(1).max(80);

/** One column of a pattern entity. */
export const patternFieldSchema = z.strictObject({
  /** lowerCamelCase; compiled to snake_case (`startsAt` → `starts_at`). */
  name: z
    .string()
    .regex(/^[a-z][a-zA-Z0-9]*$/, 'field names are lowerCamelCase ASCII, e.g. startsAt')
    .max(60),
  type: z.enum(FIELD_TYPES),
  /** NOT NULL. Default false. */
  required: z.boolean().default(false),
  /** UNIQUE. Default false. */
  unique: z.boolean().default(false),
  /** Allowed values of a TEXT field (a CHECK constraint); the first is the default of a required field. */
  values: z.array(z.string().min(1).max(60)).min(1).optional(),
});
export type PatternField = z.infer<typeof patternFieldSchema>;

/** One entity slot of a pattern. */
export const patternEntitySchema = z.strictObject({
  name: nameSchema,
  role: entityRoleSchema,
  /** Other names an intent may use for this entity (compared normalised). */
  aliases: z.array(nameSchema).default([]),
  /**
   * Documented role fallback: when true, one intent entity of the same role
   * that matched no entity of this pattern by name or alias may fill this
   * slot (a generic "resource" such as a bookable room or a listed item).
   * Default false: matching is by name or alias only.
   */
  roleFallback: z.boolean().default(false),
  description: z.string().max(400).optional(),
  fields: z.array(patternFieldSchema).default([]),
});
export type PatternEntity = z.infer<typeof patternEntitySchema>;

/** A relation between two entities of the pattern, read from `from` to `to`. */
export const patternRelationSchema = z.strictObject({
  from: nameSchema,
  to: nameSchema,
  cardinality: cardinalitySchema,
  kind: relationKindSchema.default('association'),
});
export type PatternRelation = z.infer<typeof patternRelationSchema>;

/** A view or workflow of the pattern over one entity. */
export const patternProjectionSchema = z.strictObject({
  kind: projectionSchema,
  entity: nameSchema,
});
export type PatternProjection = z.infer<typeof patternProjectionSchema>;

/** A whole pattern, as validated from one YAML file. */
export const patternSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9-]*$/, 'pattern ids are lower-case kebab-case, e.g. field-service')
      .max(60),
    title: z.string().trim().min(1).max(120),
    description: z.string().trim().min(1).max(2000),
    appTypes: z.array(appTypeSchema).min(1),
    entities: z.array(patternEntitySchema).min(1),
    relations: z.array(patternRelationSchema).default([]),
    behaviors: z.array(behaviorSchema).default([]),
    projections: z.array(patternProjectionSchema).default([]),
  })
  .superRefine((pattern, context) => {
    const entityIndex = new Map<string, number>();
    pattern.entities.forEach((entity, index) => {
      const names = [entity.name, ...entity.aliases];
      names.forEach((name, nameIndex) => {
        const key = normalizeEntityName(name);
        const path = nameIndex === 0 ? ['entities', index, 'name'] : ['entities', index, 'aliases', nameIndex - 1];
        const previous = entityIndex.get(key);
        if (key === '') {
          context.addIssue({ code: 'custom', path, message: `"${name}" has no letters or digits` });
        } else if (previous !== undefined && previous !== index) {
          context.addIssue({
            code: 'custom',
            path,
            message: `"${name}" is already a name or alias of entity "${pattern.entities[previous]?.name}"`,
          });
        } else if (previous === undefined) {
          entityIndex.set(key, index);
        }
      });
      checkFields(entity, index, context);
    });

    const entityByName = new Map(pattern.entities.map((entity) => [normalizeEntityName(entity.name), entity]));
    pattern.relations.forEach((relation, index) => {
      for (const end of ['from', 'to'] as const) {
        if (!entityByName.has(normalizeEntityName(relation[end]))) {
          context.addIssue({
            code: 'custom',
            path: ['relations', index, end],
            message: `"${relation[end]}" is not an entity of this pattern (use the entity name, not an alias)`,
          });
        }
      }
    });
    pattern.projections.forEach((projection, index) => {
      const entity = entityByName.get(normalizeEntityName(projection.entity));
      if (entity === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['projections', index, 'entity'],
          message: `"${projection.entity}" is not an entity of this pattern`,
        });
      } else if (projection.kind === 'calendar' && timeFieldOf(entity) === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['projections', index, 'entity'],
          message: `a calendar needs a time field (DATE or DATETIME) on "${entity.name}"`,
        });
      }
    });
  });
export type Pattern = z.infer<typeof patternSchema>;
/** A pattern as written in YAML, before defaults are applied. */
export type PatternInput = z.input<typeof patternSchema>;

/** The first time field (`DATE`/`DATETIME`) of an entity, if any. */
export function timeFieldOf(entity: { fields: readonly PatternField[] }): PatternField | undefined {
  return entity.fields.find((field) => TIME_FIELD_TYPES.has(field.type));
}

function checkFields(entity: PatternEntity, entityIndex: number, context: z.RefinementCtx): void {
  const columns = new Set<string>();
  entity.fields.forEach((field, fieldIndex) => {
    const path = ['entities', entityIndex, 'fields', fieldIndex, 'name'];
    const column = snakeCase(field.name);
    let problem: string | undefined;
    if (column === 'id' || column === 'created_at') problem = `"${field.name}" is generated for every table`;
    else if (/Id$/.test(field.name)) problem = `"${field.name}" looks like a foreign key: declare a relation instead`;
    else if (isReservedWord(column)) problem = `"${field.name}" compiles to the reserved SQL word "${column}"`;
    else if (columns.has(column)) problem = `"${field.name}" duplicates column "${column}"`;
    if (problem !== undefined) context.addIssue({ code: 'custom', path, message: problem });
    columns.add(column);
    if (field.values !== undefined && field.type !== 'TEXT') {
      context.addIssue({
        code: 'custom',
        path: ['entities', entityIndex, 'fields', fieldIndex, 'values'],
        message: 'values are allowed on TEXT fields only',
      });
    }
  });
  if (entity.role === 'commitment' && timeFieldOf(entity) === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['entities', entityIndex, 'fields'],
      message: `commitment "${entity.name}" needs a time field (type DATE or DATETIME), e.g. startsAt`,
    });
  }
}
