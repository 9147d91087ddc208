/**
 * Turns a model's answer into an intent, or says why it is invalid: the
 * generic lenient reading of `executors/llm/read-json-answer.ts` with the
 * intent schema.
 *
 * | answer | result |
 * |---|---|
 * | finish reason `content-filter` | `refused` |
 * | finish reason `length` (cut off) | `truncated` |
 * | nothing (or only a reasoning block) | `empty` |
 * | no JSON object (incl. an unclosed fence or `<think>`) | `unparsable` |
 * | JSON that does not fit `intentSchema` | `schema` (`the answer does not fit the intent schema: …`) |
 *
 * An invalid answer is returned with its raw text (capped at
 * {@link MAX_RAW_CHARACTERS}); it is never scored, and nothing is thrown.
 */
import { readJsonAnswer } from '../../../executors/llm/read-json-answer.ts';
import type { InvalidReason } from '../../../executors/executor.ts';
import type { Intent } from '../intent.ts';
import { intentSchema } from '../intent.ts';

export { capRaw, MAX_RAW_CHARACTERS } from '../../../executors/cap-raw.ts';

/** Name of the intent answer schema, in messages and as the structured-output schema's name. */
export const INTENT_SCHEMA_NAME = 'intent';

export type IntentAnswer =
  | { ok: true; intent: Intent; raw: string }
  | { ok: false; reason: InvalidReason; message: string; raw: string };

/**
 * Parses an answer.
 *
 * @param text the answer text
 * @param finishReason the AI SDK finish reason (`stop`, `length`, `content-filter`, ...)
 * @example
 * ```ts
 * parseIntentAnswer('{"appType":"crm","entities":[],"relations":[],"behaviors":[],"projections":[]}', 'stop').ok; // true
 * parseIntentAnswer('{"appType":"crm","ent', 'length'); // { ok: false, reason: 'truncated', ... }
 * ```
 */
export function parseIntentAnswer(text: string, finishReason: string): IntentAnswer {
  const answer = readJsonAnswer(text, finishReason, intentSchema, INTENT_SCHEMA_NAME);
  return answer.ok ? { ok: true, intent: answer.output, raw: answer.raw } : answer;
}
