/**
 * The output contract text of a task whose executor answers one JSON value:
 * the fixed text an LLM executor appends to the prompt under optimization,
 * in the same form as the intent task's (`intent/llm/output-contract.ts`).
 *
 * @module
 */
import { z } from 'zod';

/**
 * JSON Schema (draft 2020-12 keywords, `$schema` removed) of a zod schema,
 * as the output contract and structured output show it.
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

/**
 * The contract text: a `---` rule, a heading saying the text is kloop's and
 * not the artifact's, the rule `lines` (one sentence each), then the JSON
 * Schema on one line.
 *
 * @param jsonSchema the answer's JSON Schema
 * @param lines what the answer must be, in words (after "Answer with exactly one JSON …")
 */
export function jsonOutputContract(jsonSchema: Record<string, unknown>, lines: readonly string[]): string {
  return [
    '---',
    'Output format (fixed by kloop, not part of the prompt above):',
    'Answer with exactly one JSON value and nothing else: no prose, no code fence.',
    ...lines,
    JSON.stringify(jsonSchema),
  ].join('\n');
}
