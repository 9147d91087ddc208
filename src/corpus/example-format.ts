/**
 * How a study's corpus records are read: the record schema built from the
 * task's schemas, and the conversion between a record and an
 * {@link Example}.
 *
 * A record is a strict object with exactly `id`, the input field, `expected`,
 * `tags` (default none) and `partition`. The input field is `goal` for intent
 * studies (the public field their corpora have always used) and `input` for
 * every other task; `input` and `expected` are checked by the task's
 * `schemas.input` and `schemas.expected`, so a record that does not fit is
 * refused with the field at fault (`expected.label`, `input.body`), never
 * scored. The example's `text` is the task's text of the input
 * (`inputText(task, input)`).
 *
 * @example
 * ```ts
 * const format = createExampleFormat(classificationTask);
 * const parsed = format.parse({ id: 't1', input: 'Charged twice', expected: { label: 'billing' }, partition: 'shadow' });
 * if (parsed.success) parsed.example.text; // 'Charged twice'
 * ```
 *
 * The intent format (`INTENT_EXAMPLE_FORMAT`) is in `intent-example.ts`: this
 * module names no task.
 *
 * @module
 */
import { z } from 'zod';
import type { Task } from '../tasks/task.ts';
import { inputText } from '../tasks/task.ts';
import type { Example } from './example.ts';
import { exampleIdSchema, partitionSchema, tagsSchema } from './example.ts';

/** The name of the input field of a corpus record. */
export type RecordInputField = 'goal' | 'input';

/** The outcome of reading one record: the example, or the schema issues (paths inside the record). */
export type ExampleParse =
  | { success: true; example: Example }
  | { success: false; issues: readonly z.core.$ZodIssue[] };

/** Reads and writes a study's corpus records. See the module comment. */
export interface ExampleFormat {
  /** The task whose schemas check a record. */
  readonly task: Task;
  /** `goal` (intent) or `input` (every other task). */
  readonly inputField: RecordInputField;
  /** The strict schema of one record. */
  readonly recordSchema: z.ZodType<Record<string, unknown>>;
  /** Reads one record. Never throws. */
  parse(value: unknown): ExampleParse;
  /** The record of an example, as a corpus file holds it (`{ id, goal | input, expected, tags, partition }`). */
  toRecord(example: Example): Record<string, unknown>;
}

/**
 * Creates the record format of a task.
 *
 * @param task the study's task (its schemas check `input` and `expected`, its `text` gives the example's text)
 * @param inputField the record's input field: `goal` for intent studies, `input` (default) for the others
 */
export function createExampleFormat(task: Task, inputField: RecordInputField = 'input'): ExampleFormat {
  const recordSchema = z.strictObject({
    id: exampleIdSchema,
    [inputField]: task.schemas.input,
    expected: task.schemas.expected,
    tags: tagsSchema,
    partition: partitionSchema,
  }) as unknown as z.ZodType<Record<string, unknown>>;
  return {
    task,
    inputField,
    recordSchema,
    parse(value: unknown): ExampleParse {
      const parsed = recordSchema.safeParse(value);
      if (!parsed.success) return { success: false, issues: parsed.error.issues };
      const record = parsed.data as {
        id: string;
        expected: unknown;
        tags: string[];
        partition: Example['partition'];
      } & Record<string, unknown>;
      const input = record[inputField];
      return {
        success: true,
        example: {
          id: record.id,
          input,
          expected: record.expected,
          tags: record.tags,
          partition: record.partition,
          text: inputText(task, input),
        },
      };
    },
    toRecord(example: Example): Record<string, unknown> {
      return {
        id: example.id,
        [inputField]: example.input,
        expected: example.expected,
        tags: example.tags,
        partition: example.partition,
      };
    },
  };
}
