/**
 * The input of the generic tasks (classification, extraction): a text, or an
 * object of text fields such as a support ticket's
 * `{ subject, body, customer }`, and the one way its text is written.
 *
 * @example
 * ```ts
 * const input = textInputSchema.parse({ subject: 'Refund', body: 'I was charged twice.' });
 * textOfInput(input, ['subject', 'body']); // 'subject: Refund\nbody: I was charged twice.'
 * ```
 *
 * @module
 */
import { z } from 'zod';

/** A text, or an object of named text fields. */
export type TextInput = string | Readonly<Record<string, string>>;

/**
 * Schema of a {@link TextInput}: a non-empty string, or an object with at
 * least one field whose keys are non-empty and whose values are strings
 * (possibly empty). Any other value type (a number, a nested object, null)
 * is refused: a field the model reads is text.
 */
export const textInputSchema: z.ZodType<TextInput> = z.union([
  z.string().min(1, 'the input text is empty'),
  z
    .record(z.string().min(1, 'a field name is empty'), z.string())
    .refine((fields) => Object.keys(fields).length > 0, 'the input object has no field'),
]);

/**
 * The text of an input, as near-duplicate checks, leak checks and a
 * language model's user message read it.
 *
 * - A string: the string, unchanged.
 * - An object: one line per field, `name: value`, joined with `\n` (a value
 *   that spans lines keeps its line breaks). Fields named in `fieldOrder`
 *   come first, in that order; the others follow sorted by name (code-unit
 *   order, as `Array.prototype.sort`), so the same fields give the same text
 *   whatever order a corpus file lists them in or a database hands them back
 *   (PostgreSQL's `jsonb` reorders keys): the text is part of cache keys and
 *   near-duplicate checks.
 *
 * @param fieldOrder field names to write first (default none: every field sorted by name)
 */
export function textOfInput(input: TextInput, fieldOrder: readonly string[] = []): string {
  if (typeof input === 'string') return input;
  const names = Object.keys(input);
  const first = fieldOrder.filter((name) => Object.hasOwn(input, name));
  const rest = names.filter((name) => !fieldOrder.includes(name)).sort();
  return [...first, ...rest].map((name) => `${name}: ${input[name] ?? ''}`).join('\n');
}

/** True when the input has some non-blank text (a blank input cannot be labelled from its text). */
export function hasText(input: TextInput): boolean {
  return typeof input === 'string' ? input.trim() !== '' : Object.values(input).some((value) => value.trim() !== '');
}
