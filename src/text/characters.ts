/**
 * Counting and cutting text the way a reader sees it.
 *
 * JavaScript strings are UTF-16: `text.length` counts code units, so an emoji
 * such as 😀 (U+1F600) has length 2, and `text.slice(0, n)` may cut between
 * the two halves of a surrogate pair, leaving a lone surrogate that is not
 * valid Unicode (a provider's JSON encoder or a UTF-8 writer then replaces
 * or rejects it). kloop therefore:
 *
 * - **counts** lengths in characters = Unicode code points
 *   ({@link characterCount}): what every "N characters" in kloop's limits and
 *   messages means (the artifact length ceiling, the corpus schema's limits,
 *   "[N more characters]");
 * - **cuts** on whole grapheme clusters ({@link truncateText}), the
 *   user-perceived characters of Unicode Standard Annex #29 (through the
 *   built-in `Intl.Segmenter`), so neither a surrogate pair nor an emoji
 *   sequence (👩‍💻, a flag) nor a letter and its combining accent is split.
 *   A cut text holds at most the number of code points asked for, marker
 *   included.
 *
 * @module
 */

/** Grapheme segmentation is the same in every locale (UAX #29 default rules): one shared segmenter. */
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Length of a text in characters (Unicode code points): 😀 counts 1, `é`
 * written as `e` + U+0301 counts 2 (two code points).
 *
 * @example
 * ```ts
 * characterCount('ab😀'); // 3 ('ab😀'.length is 4)
 * ```
 */
export function characterCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    // A high surrogate followed by a low one is one code point; a lone surrogate counts as one.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
    count += 1;
  }
  return count;
}

/**
 * The longest prefix of `text` made of whole grapheme clusters and holding at
 * most `maxCharacters` code points (its length in UTF-16 units may be more).
 */
function graphemePrefix(text: string, maxCharacters: number): string {
  if (maxCharacters <= 0) return '';
  let used = 0;
  let end = 0;
  for (const { segment, index } of GRAPHEMES.segment(text)) {
    const size = characterCount(segment);
    if (used + size > maxCharacters) break;
    used += size;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/**
 * The text cut to at most `maxCharacters` characters (code points), the
 * marker included, on a grapheme-cluster boundary; unchanged when it fits.
 *
 * @param maxCharacters the most characters of the result, marker included (a whole number ≥ 0)
 * @param marker appended when the text was cut; default `…`
 * @example
 * ```ts
 * truncateText('ab😀😀', 4); // 'ab😀…'
 * truncateText('ab👩‍💻cd', 5); // 'ab…' (the 3 code points of 👩‍💻 stay together)
 * ```
 */
export function truncateText(text: string, maxCharacters: number, marker = '…'): string {
  if (text.length <= maxCharacters || characterCount(text) <= maxCharacters) return text;
  const room = maxCharacters - characterCount(marker);
  if (room < 0) return graphemePrefix(marker, maxCharacters);
  return `${graphemePrefix(text, room)}${marker}`;
}

/**
 * The text, or its first `maxCharacters` characters (whole grapheme clusters)
 * followed by `… [N more characters]`, N counted in code points: how kloop
 * keeps raw model answers and program output.
 *
 * @example
 * ```ts
 * capWithCount('😀'.repeat(5), 3); // '😀😀😀… [2 more characters]'
 * ```
 */
export function capWithCount(text: string, maxCharacters: number): string {
  if (text.length <= maxCharacters) return text;
  const total = characterCount(text);
  if (total <= maxCharacters) return text;
  const head = graphemePrefix(text, maxCharacters);
  return `${head}… [${total - characterCount(head)} more characters]`;
}

/**
 * The end of the text, at most `maxCharacters` characters (code points) with
 * the marker in front, starting on a grapheme-cluster boundary; unchanged when
 * it fits. For the tail of a program's error output.
 *
 * @example
 * ```ts
 * truncateTextStart('😀😀ab', 3); // '…ab'
 * ```
 */
export function truncateTextStart(text: string, maxCharacters: number, marker = '…'): string {
  if (text.length <= maxCharacters || characterCount(text) <= maxCharacters) return text;
  const room = maxCharacters - characterCount(marker);
  if (room <= 0) return graphemePrefix(marker, maxCharacters);
  // Only the end is read: a window of twice the room in UTF-16 units holds more than `room` code points.
  const window = text.slice(Math.max(0, text.length - 2 * room - 16));
  const segments = Array.from(GRAPHEMES.segment(window), (entry) => entry.segment);
  let used = 0;
  let start = window.length;
  for (let index = segments.length - 1; index > 0; index -= 1) {
    const size = characterCount(segments[index]!);
    if (used + size > room) break;
    used += size;
    start -= segments[index]!.length;
  }
  return `${marker}${window.slice(start)}`;
}
