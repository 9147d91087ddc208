/**
 * The output contract of the LLM intent executor: the fixed text kloop
 * appends to the prompt under optimization, and the JSON schema of the public
 * intent format (built from the zod `intentSchema`, so the schema the model
 * sees and the schema answers are validated against are one and the same).
 *
 * The contract is not part of the artifact: a proposer cannot edit it, and a
 * change to it changes the executor id (and so the evaluator fingerprint).
 */
import type { JSONSchema7 } from 'ai';
import { z } from 'zod';
import { contentHash } from '../../../artifact/content-hash.ts';
import type { AnswerSchema } from '../../../providers/llm-client.ts';
import { intentSchema } from '../intent.ts';

/** JSON Schema (draft 2020-12 keywords, `$schema` removed) of the public intent format. */
export const INTENT_JSON_SCHEMA: JSONSchema7 = (() => {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(intentSchema) as Record<string, unknown>;
  return schema as JSONSchema7;
})();

/** The schema sent as the structured-output response format. */
export const INTENT_ANSWER_SCHEMA: AnswerSchema = { name: 'intent', jsonSchema: INTENT_JSON_SCHEMA };

/** The text appended to every prompt, after the artifact. */
export const OUTPUT_CONTRACT = [
  '---',
  'Output format (fixed by kloop, not part of the prompt above):',
  'Answer with exactly one JSON object and nothing else: no prose, no code fence.',
  'It must fit this JSON Schema; use only the listed values for appType, role, behaviors, projections, cardinality and kind; lists may be empty.',
  JSON.stringify(INTENT_JSON_SCHEMA),
].join('\n');

/** Short hash of the contract, part of the executor id. */
export const OUTPUT_CONTRACT_HASH = contentHash(OUTPUT_CONTRACT).slice(0, 8);

/** The system message for one execution: the artifact (the prompt under optimization), then the contract. */
export function buildExecutorSystemPrompt(artifact: string): string {
  return `${artifact.trimEnd()}\n\n${OUTPUT_CONTRACT}`;
}
