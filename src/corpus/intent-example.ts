/**
 * The intent corpus record format and intent examples: the public record
 * `{ id, goal, expected, tags, partition }` of an intent corpus, and the
 * conversions between a record and an {@link IntentExample}. The
 * task-agnostic example shape is `example.ts`.
 *
 * @module
 */
import { z } from 'zod';
import { type ExpectedIntent, expectedIntentSchema } from '../tasks/intent/intent.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import type { Example } from './example.ts';
import { exampleIdSchema, partitionSchema, tagsSchema } from './example.ts';
import { type ExampleFormat, createExampleFormat } from './example-format.ts';

/** Upper bound on a goal text, in characters. */
export const MAX_GOAL_CHARACTERS = 20_000;

/**
 * The public record format of an intent corpus: exactly `id`, `goal` (the
 * user's text, trimmed, 1 to {@link MAX_GOAL_CHARACTERS} characters),
 * `expected` (a gold intent, see `src/tasks/intent/intent.ts`), `tags`,
 * `partition`. The intent study's `ExampleFormat` (example-format.ts) reads these records
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

/** The intent corpus format: `goal` records read with the intent task's schemas (the default of the corpus readers). */
export const INTENT_EXAMPLE_FORMAT: ExampleFormat = createExampleFormat(intentTask, 'goal');
