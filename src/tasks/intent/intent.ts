/**
 * The public intent format: what every executor outputs and what gold
 * expectations are written in.
 *
 * ```json
 * {
 *   "appType": "booking",
 *   "entities": [{ "name": "Patient", "role": "party" }],
 *   "relations": [{ "from": "Patient", "to": "Booking", "cardinality": "one_to_many", "kind": "association" }],
 *   "behaviors": ["scheduling", "notification"],
 *   "projections": ["calendar", "list"]
 * }
 * ```
 *
 * All values come from the closed vocabularies in `vocabulary.ts`.
 */
import { z } from 'zod';
import {
  APP_TYPES,
  BEHAVIORS,
  CARDINALITIES,
  ENTITY_ROLES,
  PROJECTIONS,
  RELATION_KINDS,
  vocabularyValues,
} from './vocabulary.ts';

export const appTypeSchema = z.enum(vocabularyValues(APP_TYPES));
export const entityRoleSchema = z.enum(vocabularyValues(ENTITY_ROLES));
export const behaviorSchema = z.enum(vocabularyValues(BEHAVIORS));
export const projectionSchema = z.enum(vocabularyValues(PROJECTIONS));
export const cardinalitySchema = z.enum(vocabularyValues(CARDINALITIES));
export const relationKindSchema = z.enum(vocabularyValues(RELATION_KINDS));

const nameSchema = z.string().trim().min(1).max(80);

/** One relation between two entities, named by entity name. */
export const relationSchema = z.strictObject({
  from: nameSchema,
  to: nameSchema,
  cardinality: cardinalitySchema.optional(),
  kind: relationKindSchema.optional(),
});
export type Relation = z.infer<typeof relationSchema>;

/** An entity as an executor outputs it. */
export const intentEntitySchema = z.strictObject({
  name: nameSchema,
  role: entityRoleSchema,
});
export type IntentEntity = z.infer<typeof intentEntitySchema>;

/** The intent an executor outputs. Every field is required (lists may be empty). */
export const intentSchema = z.strictObject({
  appType: appTypeSchema,
  entities: z.array(intentEntitySchema).max(60),
  relations: z.array(relationSchema).max(120),
  behaviors: z.array(behaviorSchema).max(20),
  projections: z.array(projectionSchema).max(20),
});
export type Intent = z.infer<typeof intentSchema>;

/** A gold entity: `role` may be absent in partial gold; `aliases` are accepted names. */
export const expectedEntitySchema = z.strictObject({
  name: nameSchema,
  role: entityRoleSchema.optional(),
  aliases: z.array(nameSchema).optional(),
});
export type ExpectedEntity = z.infer<typeof expectedEntitySchema>;

/**
 * A gold expectation. Any component may be absent (partial gold, e.g. from
 * external corpora); the scorer then skips it and renormalises the weights.
 * `appType` is one value, or a list whose first value is the primary type and
 * the rest are accepted alternatives.
 */
export const expectedIntentSchema = z.strictObject({
  // The union's own error is a bare "Invalid input": name the values, as the other vocabulary fields do.
  appType: z
    .union([appTypeSchema, z.array(appTypeSchema).min(1)], {
      error: () =>
        `Invalid option: expected one of ${vocabularyValues(APP_TYPES)
          .map((value) => JSON.stringify(value))
          .join('|')}, or a list of them (the first the primary type)`,
    })
    .optional(),
  entities: z.array(expectedEntitySchema).optional(),
  relations: z.array(relationSchema).optional(),
  behaviors: z.array(behaviorSchema).optional(),
  projections: z.array(projectionSchema).optional(),
});
export type ExpectedIntent = z.infer<typeof expectedIntentSchema>;

/** The accepted app types of a gold expectation, primary first (empty when absent). */
export function acceptedAppTypes(expected: ExpectedIntent): string[] {
  if (expected.appType === undefined) return [];
  return Array.isArray(expected.appType) ? expected.appType : [expected.appType];
}
