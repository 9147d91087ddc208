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
 * {@link ExampleFormat} (`example-format.ts`): intent records keep their
 * public field `goal` (the input), `{ id, goal, expected, tags, partition }`
 * ({@link exampleSchema}); every other task writes
 * `{ id, input, expected, tags, partition }`.
 */
import { z } from 'zod';
import { type ExpectedIntent, expectedIntentSchema } from '../tasks/intent/intent.ts';

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

/** Upper bound on a goal text, in characters. */
export const MAX_GOAL_CHARACTERS = 20_000;

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

/**
 * The public record format of an intent corpus: exactly `id`, `goal` (the
 * user's text, trimmed, 1 to {@link MAX_GOAL_CHARACTERS} characters),
 * `expected` (a gold intent, see `src/tasks/intent/intent.ts`), `tags`,
 * `partition`. The intent study's {@link ExampleFormat} reads these records
 * with the intent task's schemas (which also refuse a gold with nothing to
 * score).
 */
export const exampleSchema = z.strictObject({
  id: exampleIdSchema,
  goal: z.string().trim().min(1).max(MAX_GOAL_CHARACTERS),
  expected: expectedIntentSchema,
  tags: tagsSchema,
  partition: partitionSchema,
});

/** An intent corpus record (`exampleSchema`), as intent importers write them. */
export type IntentExampleRecord = z.infer<typeof exampleSchema>;

/** An example of an intent study: the goal text in, a gold intent expected. */
export type IntentExample = Example<string, ExpectedIntent>;

/**
 * The examples of an intent study, typed as such. For the intent-only parts
 * (the playbook proposer, Loops A, C and D), which run only on intent studies
 * (`src/study/compose.ts` refuses the others).
 */
export function asIntentExamples(examples: readonly Example[]): readonly IntentExample[] {
  return examples as readonly IntentExample[];
}

/**
 * The example of an intent record: its goal is the input and its text (the
 * intent task's text of a goal is the goal itself).
 */
export function intentExample(record: IntentExampleRecord): IntentExample {
  return {
    id: record.id,
    input: record.goal,
    expected: record.expected,
    tags: record.tags,
    partition: record.partition,
    text: record.goal,
  };
}

/** The intent record of an intent example (its input is the goal), as corpus files and review items hold it. */
export function intentRecord(example: IntentExample): IntentExampleRecord {
  return {
    id: example.id,
    goal: example.input,
    expected: example.expected as IntentExampleRecord['expected'],
    tags: example.tags,
    partition: example.partition,
  };
}
