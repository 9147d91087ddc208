/**
 * The passes over a goal's analysed words that correct the NLP library's
 * tags (./goal-analysis.ts): plural nouns tagged as verbs, nouns after a
 * determiner, particles of phrasal verbs, reciprocal pronouns ("each
 * other"), and capitals that only start a sentence or a numbered item.
 * Each pass mutates the words it is given. Also the word class a term's
 * tags give (`wordClassOf`) and the possessive determiners both read.
 */
import { singularizeWord } from '../names.ts';
import type { AnalyzedWord, WordClass } from './goal-analysis.ts';
import { nounCategory } from './noun-senses.ts';

/** Possessive determiners that compromise tags as possessive nouns ("our team"). */
export const POSSESSIVE_DETERMINERS = new Set(['my', 'our', 'your', 'his', 'her', 'its', 'their', 'whose']);

const OBJECT_STARTS = new Set<WordClass>(['determiner', 'pronoun', 'value', 'adjective', 'noun']);
const NOUN_PREMODIFIERS = new Set<WordClass>(['determiner', 'adjective', 'value', 'preposition']);
/** Prepositions that follow a plural noun far more often than a verb ("discount codes for", "tickets with"). */
const NOUN_FOLLOWERS = new Set(['for', 'of', 'with', 'per']);

/**
 * A capital that only marks the start of a sentence or of a numbered item
 * ("Residents shall report issues", "2. Supporters can donate") says nothing
 * about the word: a noun tagged proper there that WordNet knows as a common
 * noun is marked `positionalCapital`.
 */
export function markPositionalCapitals(words: AnalyzedWord[]): void {
  words.forEach((word, index) => {
    if (!word.isProperNoun) return;
    let at = index - 1;
    while (at >= 0 && words[at]!.sentence === word.sentence && words[at]!.wordClass === 'value') at -= 1;
    if (at >= 0 && words[at]!.sentence === word.sentence) return;
    if (nounCategory(word.lemma) !== null) word.positionalCapital = true;
  });
}

/**
 * Plural nouns the NLP library tagged as verbs ("quotes", "tickets",
 * "volunteers", "stages"): an -s form of a word WordNet knows as a noun is a
 * plural noun when English grammar rules the verb reading out —
 *
 * - it opens its sentence (a finite verb with -s needs a subject before it);
 * - it follows a determiner, an adjective, a number, a preposition or a
 *   possessive ("the quotes", "open requests", "through stages");
 * - it follows a verb or an auxiliary ("buy tickets", "has milestones");
 * - it follows a noun, and what comes next cannot be its object: the clause
 *   ends, a verb or auxiliary follows, or "for"/"of"/"with"/"per"
 *   ("discount codes for", "approved requests shall", "volunteers sign up");
 * - it follows "and"/"or" after a noun and no object follows ("… and invoices and …").
 */
export function retagPluralNouns(words: AnalyzedWord[]): void {
  retagDeterminedNouns(words);
  words.forEach((word, index) => {
    if (word.wordClass !== 'verb' || !/^[a-z]{3,}s$/.test(word.normal) || /ss$/.test(word.normal)) return;
    const singular = singularizeWord(word.normal);
    if (singular === word.normal || nounCategory(singular) === null) return;
    const before = words[index - 1]?.sentence === word.sentence ? words[index - 1] : undefined;
    const after = words[index + 1]?.sentence === word.sentence && !word.clauseBreakAfter ? words[index + 1] : undefined;
    const objectFollows = after !== undefined && !word.commaAfter && OBJECT_STARTS.has(after.wordClass);
    const clauseGoesOn =
      after === undefined ||
      word.commaAfter ||
      after.wordClass === 'verb' ||
      after.wordClass === 'auxiliary' ||
      after.wordClass === 'copula' ||
      NOUN_FOLLOWERS.has(after.normal);
    let plural = false;
    if (before === undefined || before.clauseBreakAfter) plural = true;
    else if (before.commaAfter) plural = !objectFollows;
    else if (
      NOUN_PREMODIFIERS.has(before.wordClass) ||
      before.isPossessive ||
      POSSESSIVE_DETERMINERS.has(before.normal)
    )
      plural = true;
    else if (before.wordClass === 'verb' || before.wordClass === 'auxiliary') plural = true;
    else if (before.wordClass === 'noun') plural = clauseGoesOn;
    else if (before.wordClass === 'conjunction' && /^(and|or)$/.test(before.normal))
      plural = words[index - 2]?.wordClass === 'noun' && !objectFollows;
    if (!plural) return;
    word.isNoun = true;
    word.wordClass = 'noun';
    word.isPlural = true;
    word.isContent = true;
    word.lemma = singular;
    if (!word.keys.includes(singular)) word.keys = [...word.keys, singular];
  });
}

/** Words the NLP library tags as verbs after a verb that are its particle ("sign up", "check in", "take part", "take place"). */
const PARTICLES = new Set([
  'up',
  'down',
  'in',
  'out',
  'off',
  'on',
  'over',
  'back',
  'away',
  'through',
  'along',
  'around',
  'part',
  'place',
]);

/**
 * Phrasal verbs: a particle the NLP library tagged as a verb right after a
 * verb (no punctuation between) is its particle, not a second predicate
 * ("volunteers sign up for shifts": one predicate "sign up").
 */
export function markParticles(words: AnalyzedWord[]): void {
  words.forEach((word, index) => {
    const before = words[index - 1];
    if (before === undefined || before.sentence !== word.sentence || before.commaAfter || before.clauseBreakAfter)
      return;
    if (word.wordClass !== 'verb' || !PARTICLES.has(word.normal)) return;
    if (before.wordClass !== 'verb' && !before.isParticle) return;
    word.wordClass = 'adverb';
    word.isParticle = true;
    word.isContent = false;
  });
}

/** "each other", "one another": a reciprocal pronoun, never a noun. */
export function markReciprocals(words: AnalyzedWord[]): void {
  words.forEach((word, index) => {
    const before = words[index - 1];
    if (
      before === undefined ||
      before.sentence !== word.sentence ||
      !/^(other|another)$/.test(word.normal) ||
      !/^(each|one)$/.test(before.normal)
    )
      return;
    for (const part of [before, word]) {
      part.isNoun = false;
      part.isContent = false;
      part.wordClass = 'pronoun';
    }
  });
}

/** Determiners after which a word is the head of a noun phrase, not a finite verb ("on each visit", "the report"). */
const NOUN_DETERMINERS = new Set([
  'a',
  'an',
  'the',
  'each',
  'every',
  'this',
  'these',
  'those',
  'another',
  'my',
  'our',
  'your',
  'his',
  'her',
  'its',
  'their',
]);

/**
 * Singular nouns the NLP library tagged as verbs right after a determiner
 * or a possessive ("on each visit", "their order"): a word WordNet knows as a
 * noun, with no -ing or -ed ending, directly after such a word is a noun.
 */
function retagDeterminedNouns(words: AnalyzedWord[]): void {
  words.forEach((word, index) => {
    if (word.wordClass !== 'verb' || !/^[a-z]{3,}$/.test(word.normal) || /(ing|ed|s)$/.test(word.normal)) return;
    const before = words[index - 1];
    if (
      before === undefined ||
      before.sentence !== word.sentence ||
      before.commaAfter ||
      !NOUN_DETERMINERS.has(before.normal)
    )
      return;
    if (nounCategory(word.normal) === null) return;
    word.isNoun = true;
    word.wordClass = 'noun';
    word.isContent = true;
    word.lemma = word.normal;
    if (!word.keys.includes(word.normal)) word.keys = [...word.keys, word.normal];
  });
}

/** Relative pronouns and subordinators the NLP library tags inconsistently. */
const RELATIVE_WORDS = new Set(['who', 'which', 'that', 'whom', 'whose', 'where']);

/** The word class of a term from its NLP tags and normal form. */
export function wordClassOf(tags: ReadonlySet<string>, normal: string): WordClass {
  if (RELATIVE_WORDS.has(normal)) return 'pronoun';
  if (tags.has('Copula')) return 'copula';
  if (tags.has('Modal') || tags.has('Auxiliary')) return 'auxiliary';
  if (tags.has('Verb')) return 'verb';
  if (tags.has('Value')) return 'value';
  if (tags.has('Pronoun') || POSSESSIVE_DETERMINERS.has(normal)) return 'pronoun';
  if (tags.has('Determiner')) return 'determiner';
  if (tags.has('Preposition')) return 'preposition';
  if (tags.has('Conjunction')) return 'conjunction';
  if (tags.has('Adjective')) return 'adjective';
  if (tags.has('Adverb')) return 'adverb';
  if (tags.has('Noun')) return 'noun';
  return 'other';
}
