/**
 * Reading a language model's answer as the task's output, leniently, or
 * saying why it is invalid.
 *
 * | answer | result |
 * |---|---|
 * | finish reason `content-filter` | `refused` |
 * | finish reason `length` (cut off) | `truncated` |
 * | nothing (or only a reasoning block) | `empty` |
 * | no JSON value (incl. an unclosed fence or `<think>`) | `unparsable` |
 * | JSON that does not fit the output schema | `schema` |
 *
 * Lenient reading (`providers/answer-text.ts`): complete `<think>` /
 * `<thinking>` / `<reasoning>` blocks are removed, the first fenced code
 * block is unwrapped, and otherwise the whole visible text, then its
 * outermost `{…}` (so prose around one JSON object is ignored), is parsed.
 * A JSON value other than an object (a list, a string) must be the whole
 * visible text or a fenced block.
 *
 * The output returned is the schema's parsed value (unknown keys of a
 * `z.object` stripped). An invalid answer keeps its raw text, capped at
 * 4000 characters; nothing is thrown.
 *
 * @module
 */
import type { ZodType } from 'zod';
import { parseJsonAnswer } from '../../providers/answer-text.ts';
import { capRaw } from '../cap-raw.ts';
import type { InvalidReason } from '../executor.ts';

export type JsonAnswerReading<Output> =
  | { ok: true; output: Output; raw: string }
  | { ok: false; reason: InvalidReason; message: string; raw: string };

/** Most schema issues named in a `schema` message. */
const ISSUES_SHOWN = 3;

/**
 * Reads an answer.
 *
 * @param text the answer text
 * @param finishReason the AI SDK finish reason (`stop`, `length`, `content-filter`, ...)
 * @param schema the task's output schema
 * @param schemaName names the schema in messages: `the answer does not fit the <schemaName> schema: …`
 * @example
 * ```ts
 * const output = z.object({ label: z.enum(['billing', 'technical']) });
 * readJsonAnswer('<think>a charge</think>\n```json\n{"label":"billing"}\n```', 'stop', output, 'output'); // { ok: true, output: { label: 'billing' }, raw: … }
 * readJsonAnswer('{"label":"sales"}', 'stop', output, 'output').ok; // false, reason 'schema'
 * ```
 */
export function readJsonAnswer<Output>(
  text: string,
  finishReason: string,
  schema: ZodType<Output>,
  schemaName: string,
): JsonAnswerReading<Output> {
  const raw = capRaw(text);
  if (finishReason === 'content-filter')
    return { ok: false, reason: 'refused', message: 'the provider filtered or the model refused the answer', raw };
  if (finishReason === 'length') {
    return {
      ok: false,
      reason: 'truncated',
      message: 'the answer was cut off at the output token limit (finish reason length)',
      raw,
    };
  }
  const json = parseJsonAnswer(text);
  if (!json.ok)
    return { ok: false, reason: json.problem === 'empty' ? 'empty' : 'unparsable', message: json.message, raw };
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, ISSUES_SHOWN)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    const more =
      parsed.error.issues.length > ISSUES_SHOWN ? ` (and ${parsed.error.issues.length - ISSUES_SHOWN} more)` : '';
    return {
      ok: false,
      reason: 'schema',
      message: `the answer does not fit the ${schemaName} schema: ${issues.join('; ')}${more}`,
      raw,
    };
  }
  return { ok: true, output: parsed.data, raw };
}
