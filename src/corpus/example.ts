/**
 * Examples: one labelled record of a corpus, task-agnostic.
 *
 * The engine (loop, evaluator, gate, storage, reports) sees every example as
 * an {@link Example}: `{ id, input, expected, tags, partition, text }`, where
 * `input` and `expected` follow the study's task schemas
 * (`src/tasks/task.ts`) and `text` is the task's text of the input
 * (`inputText(task, input)`), used for near-duplicate checks, grounding,
 * leak checks and an LLM's user message.
 *
 * Corpus records (files, `kloop corpus add`) are read per task by an
 * `ExampleFormat` (`example-format.ts`): intent records keep their
 * public field `goal` (the input), `{ id, goal, expected, tags, partition }`
 * (`exampleSchema`, in `intent-example.ts`); every other task writes
 * `{ id, input, expected, tags, partition }`.
 *
 * This module names no task (src/import-boundaries.test.ts): the intent
 * record format lives in `intent-example.ts`.
 */
import { z } from 'zod';

/** The three named partitions of a corpus. */
export const PARTITIONS = ['optimization', 'anchor', 'shadow'] as const;
export type PartitionName = (typeof PARTITIONS)[number];
export const partitionSchema = z.enum(PARTITIONS);

export const exampleIdSchema = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'ids use letters, digits, ".", "_", ":" and "-"');

/** Schema of an example's tags: at most 60 characters each. Default none. */
export const tagsSchema = z.array(z.string().min(1).max(60)).default([]);

/**
 * One labelled example, as the engine reads it.
 *
 * @example
 * ```ts
 * const example: Example = { id: 'ticket-1', input: { subject: 'Refund', body: 'Charged twice' }, expected: { label: 'billing' },
 *   tags: [], partition: 'optimization', text: 'subject: Refund\nbody: Charged twice' };
 * ```
 */
export interface Example<Input = unknown, Expected = unknown> {
  id: string;
  /** The input, as the task's input schema has it (a text, or an object of fields). */
  input: Input;
  /** The gold, as the task's expected schema has it. */
  expected: Expected;
  tags: string[];
  partition: PartitionName;
  /** The task's text of the input (`inputText(task, input)`). */
  text: string;
}
