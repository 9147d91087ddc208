/**
 * Compounds among a goal's entity mentions (./entity-mentions.ts): the noun
 * pairs and adjective compounds a text repeats, where a compound starts, its
 * modifiers' forms, and the `auto` policy that reads a compound at its head
 * unless the text keeps it whole.
 */
import type { AnalyzedWord } from './goal-analysis.ts';
import type { CompiledPlaybook } from './extract.ts';
import { entityNameOf } from './extract.ts';
import type { EntityMention } from './entity-mentions.ts';

/** "noun noun" pairs ending a noun run, as lemmas, that the text uses at least twice. */
export function repeatedNounPairs(
  words: readonly AnalyzedWord[],
  nounRuns: ReadonlyArray<readonly [number, number]>,
): Set<string> {
  const counts = new Map<string, number>();
  for (const [runStart, runEnd] of nounRuns) {
    if (runEnd - runStart < 2) continue;
    const key = `${words[runEnd - 2]!.lemma} ${words[runEnd - 1]!.lemma}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count >= 2).map(([key]) => key));
}

/**
 * "adjective head" pairs ("guided tour", "smart home") the text uses at least
 * twice: a named kind of thing, kept whole (the adjective must be a plain,
 * lower-case word that is not stop-listed).
 */
export function repeatedAdjectiveCompounds(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  nounRuns: ReadonlyArray<readonly [number, number]>,
): Set<string> {
  const counts = new Map<string, number>();
  for (const [runStart, runEnd] of nounRuns) {
    const adjective = words[runStart - 1];
    if (
      adjective === undefined ||
      adjective.wordClass !== 'adjective' ||
      adjective.sentence !== words[runStart]!.sentence
    )
      continue;
    if (
      adjective.commaAfter ||
      compiled.stop.has(adjective.lemma) ||
      IDENTIFYING_ADJECTIVES.has(adjective.lemma) ||
      !/^[a-z][a-z-]{2,}$/.test(adjective.lemma)
    )
      continue;
    const key = `${adjective.lemma} ${words[runEnd - 1]!.lemma}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count >= 2).map(([key]) => key));
}

/**
 * Adjectives that pick out or count things rather than name a kind of thing
 * ("the same game", "another entry", "different centres"): English
 * postdeterminers and identifying adjectives, never the first word of a compound.
 */
export const IDENTIFYING_ADJECTIVES = new Set([
  'same',
  'other',
  'another',
  'different',
  'various',
  'several',
  'certain',
  'particular',
  'specific',
  'additional',
  'further',
  'respective',
  'corresponding',
  'following',
  'given',
  'such',
  'own',
  'whole',
  'entire',
  'next',
  'previous',
  'last',
  'first',
  'second',
  'third',
  'former',
  'latter',
  'many',
  'few',
  'more',
  'most',
  'less',
  'least',
  'only',
  'extra',
]);

/** A noun that may modify a compound's head: a plain, lower-case word, not stop-listed, not an attribute. */
export function isCompoundModifier(compiled: CompiledPlaybook, word: AnalyzedWord): boolean {
  return (
    !word.isProperNoun && isWordLike(word) && !compiled.stop.has(word.lemma) && !compiled.attributes.has(word.lemma)
  );
}

/** First word of the compound kept for an unknown run: at most `maxCompoundWords` nouns, no leading proper noun, acronym or stop word. */
export function compoundStartOf(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  runStart: number,
  runEnd: number,
): number {
  let start = Math.max(runStart, runEnd - compiled.playbook.extraction.maxCompoundWords);
  while (start < runEnd - 1) {
    const word = words[start]!;
    if (word.isProperNoun || !isWordLike(word) || compiled.stop.has(word.lemma) || compiled.attributes.has(word.lemma))
      start += 1;
    else break;
  }
  return start;
}

/** A compound modifier as written (without a possessive ending): "sales" in "sales rep", "data" in "data entry". */
export function modifierForm(word: AnalyzedWord): string {
  return word.normal.replace(/['’]s?$/, '');
}

/** A real word: three or more characters with a vowel, or a short all-letter word; never an abbreviation. */
export function isWordLike(word: AnalyzedWord): boolean {
  if (word.isAcronym) return false;
  return /^[\p{L}][\p{L}'-]*$/u.test(word.lemma) && (word.lemma.length >= 3 || /[aeiouy]/.test(word.lemma));
}

/**
 * `auto` compounds: an unknown compound stays whole when the text mentions it
 * at least twice or never uses its head noun alone; otherwise every mention of
 * it is read at its head ("a physio clinic … the clinic" → Clinic).
 */
export function resolveAutoCompounds(mentions: EntityMention[], unknown: boolean, terms: boolean): void {
  const compoundCounts = new Map<string, number>();
  const headAlone = new Set<string>();
  for (const mention of mentions) {
    if (mention.source !== 'unknown' && mention.source !== 'term') continue;
    const head = mention.head ?? mention.text;
    if (mention.text === head) headAlone.add(head);
    else compoundCounts.set(mention.text, (compoundCounts.get(mention.text) ?? 0) + 1);
  }
  for (const mention of mentions) {
    const applies = mention.source === 'unknown' ? unknown : mention.source === 'term' && terms;
    if (!applies || mention.head === undefined || mention.text === mention.head) continue;
    if ((compoundCounts.get(mention.text) ?? 0) >= 2 || !headAlone.has(mention.head)) continue;
    mention.text = mention.head;
    mention.name = entityNameOf(mention.head);
    mention.start = mention.headStart ?? mention.end - 1;
  }
}
