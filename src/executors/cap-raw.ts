/**
 * Capping the raw text of an output for storage: an invalid output keeps its
 * raw text (the model's answer, a program's stdout) so a user can see what
 * came back, but never more than {@link MAX_RAW_CHARACTERS} of it.
 *
 * @module
 */
import { capWithCount } from '../text/characters.ts';

/** Raw texts are kept up to this many characters (code points; the cut falls between whole characters, src/text/characters.ts). */
export const MAX_RAW_CHARACTERS = 4000;

/**
 * The text, or its first {@link MAX_RAW_CHARACTERS} characters followed by
 * `… [N more characters]`.
 *
 * @example
 * ```ts
 * capRaw('short'); // 'short'
 * capRaw('x'.repeat(4005)); // 'xxxx…x… [5 more characters]'
 * ```
 */
export function capRaw(text: string): string {
  return capWithCount(text, MAX_RAW_CHARACTERS);
}
