/**
 * The unknown-noun filters of the entity mentions (./entity-mentions.ts):
 * excluded WordNet categories (`unknownNounPolicy.excludeCategories`) and
 * nouns never read as countable things (`unknownNounPolicy.countableOnly`).
 * Each marks the mentions it excludes in place.
 */
import type { AnalyzedWord } from './goal-analysis.ts';
import type { CompiledPlaybook } from './extract.ts';
import { nameKey } from './extract.ts';
import type { EntityMention } from './entity-mentions.ts';
import type { NounCategory } from './noun-senses.ts';
import { nounCategory } from './noun-senses.ts';

/**
 * `unknownNounPolicy.excludeCategories`: an unknown noun whose most frequent
 * WordNet sense (the compound's, else its head's) is in one of the categories is excluded.
 */
export function excludeCategories(categories: ReadonlySet<NounCategory>, mentions: EntityMention[]): void {
  for (const mention of mentions) {
    if (mention.source !== 'unknown') continue;
    const category =
      nounCategory(mention.text) ??
      (mention.head !== undefined && mention.head !== mention.text ? nounCategory(mention.head) : null);
    if (category === null || !categories.has(category)) continue;
    mention.source = 'excluded';
    mention.name = '';
    mention.role = null;
  }
}

/** The WordNet category of an unknown mention: its text's, else its head's. */
function headCategory(mention: EntityMention): NounCategory | null {
  return (
    nounCategory(mention.text) ??
    (mention.head !== undefined && mention.head !== mention.text ? nounCategory(mention.head) : null)
  );
}

/**
 * `unknownNounPolicy.countableOnly`: an unknown noun none of whose mentions
 * reads as a countable thing is excluded (see {@link isCountableAt}).
 */
export function excludeUncountable(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  mentions: EntityMention[],
): void {
  const countable = new Set<string>();
  for (const mention of mentions) {
    if (mention.source !== 'unknown') continue;
    // A person noun ("teacher", "site manager") is a count noun by nature: telegraphic text drops its determiners ("teacher corrects it").
    if (isCountableAt(compiled, words, mention.start, mention.end) || headCategory(mention) === 'person')
      countable.add(nameKey(mention.text));
  }
  for (const mention of mentions) {
    if (mention.source !== 'unknown' || countable.has(nameKey(mention.text))) continue;
    mention.source = 'excluded';
    mention.name = '';
    mention.role = null;
  }
}

/**
 * Whether the noun phrase ending at word `end - 1` reads as a countable thing:
 * its head is plural, or the phrase (past its adjectives and noun modifiers)
 * follows a determiner, a number, a possessive pronoun or noun, or a
 * quantifier phrase of the playbook.
 */
export function isCountableAt(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  start: number,
  end: number,
): boolean {
  const head = words[end - 1]!;
  if (head.isPlural) return true;
  let at = start - 1;
  while (
    at >= 0 &&
    words[at]!.sentence === head.sentence &&
    (words[at]!.wordClass === 'adjective' || (words[at]!.wordClass === 'noun' && !words[at]!.endsPhrase))
  )
    at -= 1;
  const before = words[at];
  if (before === undefined || before.sentence !== head.sentence) return false;
  if (before.wordClass === 'determiner' || before.wordClass === 'value') return true;
  if (before.isPossessive || POSSESSIVE_PRONOUNS.has(before.normal)) return true;
  for (const quantifier of compiled.quantifiers) {
    const length = quantifier.words.length;
    const first = at - length + 1;
    if (first < 0) continue;
    let ok = true;
    for (let offset = 0; offset < length && ok; offset += 1) {
      const word = words[first + offset]!;
      ok = word.sentence === head.sentence && quantifier.words[offset]!.some((form) => word.keys.includes(form));
    }
    if (ok) return true;
  }
  return false;
}

const POSSESSIVE_PRONOUNS = new Set(['my', 'our', 'your', 'his', 'her', 'its', 'their', 'whose']);
