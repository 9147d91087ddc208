/**
 * The public example format: one labelled record of a corpus.
 *
 * Exactly these fields: `id`, `goal` (the user's text), `expected` (a gold
 * intent, see `src/tasks/intent/intent.ts`), `tags`, `partition`.
 */
import { z } from 'zod';
import { expectedIntentSchema } from '../tasks/intent/intent.ts';

/** The three named partitions of a corpus. */
export const PARTITIONS = ['optimization', 'anchor', 'shadow'] as const;
export type PartitionName = (typeof PARTITIONS)[number];
export const partitionSchema = z.enum(PARTITIONS);

export const exampleIdSchema = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'ids use letters, digits, ".", "_", ":" and "-"');

/** Upper bound on a goal text, in characters. */
export const MAX_GOAL_CHARACTERS = 20_000;

export const exampleSchema = z.strictObject({
  id: exampleIdSchema,
  goal: z.string().trim().min(1).max(MAX_GOAL_CHARACTERS),
  expected: expectedIntentSchema,
  tags: z.array(z.string().min(1).max(60)).default([]),
  partition: partitionSchema,
});
export type Example = z.infer<typeof exampleSchema>;
