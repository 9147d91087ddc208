/**
 * Test helpers for intent examples (not part of the build: excluded in
 * tsconfig.build.json). Tests write intent examples as corpus records do —
 * `{ id, goal, expected, partition }` — and get the engine's examples
 * (`{ id, input, expected, tags, partition, text }`, the goal as input and text).
 *
 * @module
 */
import type { PartitionName } from '../corpus/example.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import { asIntentExamples } from '../corpus/intent-example.ts';
import { readCorpusFile } from '../corpus/importers/public-format.ts';
import type { ExpectedIntent } from '../tasks/intent/intent.ts';

/** An intent example from the fields of a corpus record (tags default none). */
export function intentExample(record: {
  id: string;
  goal: string;
  expected: ExpectedIntent | Record<string, unknown>;
  partition: PartitionName;
  tags?: string[];
}): IntentExample {
  return {
    id: record.id,
    input: record.goal,
    text: record.goal,
    expected: record.expected as ExpectedIntent,
    tags: record.tags ?? [],
    partition: record.partition,
  };
}

/** Reads an intent corpus file (the public format); throws on its first problem. */
export function readIntentCorpus(file: string): IntentExample[] {
  const result = readCorpusFile(file);
  if (!result.ok)
    throw new Error(`${result.errors[0]?.file}:${result.errors[0]?.line ?? ''}: ${result.errors[0]?.message}`);
  return [...asIntentExamples(result.examples)];
}
