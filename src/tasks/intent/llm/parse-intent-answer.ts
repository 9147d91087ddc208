/**
 * Turns a model's answer into an intent, or says why it is invalid.
 *
 * | answer | result |
 * |---|---|
 * | finish reason `content-filter` | `refused` |
 * | finish reason `length` (cut off) | `truncated` |
 * | nothing (or only a reasoning block) | `empty` |
 * | no JSON object (incl. an unclosed fence or `<think>`) | `unparsable` |
 * | JSON that does not fit `intentSchema` | `schema` |
 *
 * An invalid answer is returned with its raw text (capped at
 * {@link MAX_RAW_CHARACTERS}); it is never scored, and nothing is thrown.
 */
import { capRaw, parseJsonAnswer } from '../../../providers/answer-text.ts';
import type { InvalidReason } from '../../../executors/executor.ts';
import type { Intent } from '../intent.ts';
import { intentSchema } from '../intent.ts';

export { capRaw, MAX_RAW_CHARACTERS } from '../../../providers/answer-text.ts';

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
  const raw = capRaw(text);
  if (finishReason === 'content-filter') return { ok: false, reason: 'refused', message: 'the provider filtered or the model refused the answer', raw };
  if (finishReason === 'length') {
    return { ok: false, reason: 'truncated', message: 'the answer was cut off at the output token limit (finish reason length)', raw };
  }
  const json = parseJsonAnswer(text);
  if (!json.ok) return { ok: false, reason: json.problem === 'empty' ? 'empty' : 'unparsable', message: json.message, raw };
  const parsed = intentSchema.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
    return { ok: false, reason: 'schema', message: `the answer does not fit the intent schema: ${issues.join('; ')}${more}`, raw };
  }
  return { ok: true, intent: parsed.data, raw };
}
