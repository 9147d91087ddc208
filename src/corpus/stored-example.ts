/**
 * An admitted example as the study database keeps it
 * (`corpus_members.example`, JSON): `{ id, input, expected, tags,
 * partition, text }`, task-agnostic, so storage needs no task to read or
 * write it. The example was checked by the study's task when it was
 * admitted.
 *
 * Rows written before examples were task-agnostic hold an intent record
 * `{ id, goal, expected, tags, partition }`: they are read with the goal as
 * the input and as the text (the intent task's text of a goal is the goal).
 *
 * @module
 */
import { StorageError } from '../errors.ts';
import { stableJson } from '../tasks/task.ts';
import type { Example } from './example.ts';
import { PARTITIONS } from './example.ts';

/** The JSON kept for an admitted example. */
export function storedExampleJson(example: Example): string {
  return JSON.stringify({
    id: example.id,
    input: example.input,
    expected: example.expected,
    tags: example.tags,
    partition: example.partition,
    text: example.text,
  });
}

/**
 * Reads a stored example (either layout, see the module comment).
 *
 * @param json the stored JSON
 * @param exampleId the member's id, for the error message
 * @throws StorageError when the JSON is not an example (corrupted row)
 */
export function readStoredExample(json: string, exampleId: string): Example {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new StorageError(`the stored example "${exampleId}" is not JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const record = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<
    string,
    unknown
  >;
  const { id, expected, partition } = record;
  const input = Object.hasOwn(record, 'input') ? record.input : record.goal;
  const tags = Array.isArray(record.tags)
    ? (record.tags as unknown[]).filter((tag): tag is string => typeof tag === 'string')
    : [];
  if (
    typeof id !== 'string' ||
    input === undefined ||
    expected === undefined ||
    !(PARTITIONS as readonly unknown[]).includes(partition)
  ) {
    throw new StorageError(
      `the stored example "${exampleId}" is not an example (it needs id, input or goal, expected and partition)`,
    );
  }
  const text = typeof record.text === 'string' ? record.text : typeof input === 'string' ? input : stableJson(input);
  return { id, input, expected, tags, partition: partition as Example['partition'], text };
}
