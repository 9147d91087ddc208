/**
 * The candidate keywords of a support message: its content words, their
 * prefix forms (`lock*`) and two-word phrases within a clause, stop words
 * left out. What routing-rule edits (./edit-candidates.ts) are built from.
 */
import { termWords } from '../../executors/routing-rules/route-text.ts';

/** Words never proposed as a keyword on their own (they say nothing about a queue). */
const STOP_WORDS = new Set(
  (
    'the and for you your yours are was were has have had not but with this that these those from they them their there here ' +
    'what when where which who whom why how all any can could would should will just also very too its into out our ours ' +
    'about again after before then than been being did does doing done get got getting some such only own same other more most ' +
    'each few over under off once him her his hers she he we us i me my mine it a an of to in on at by or is be do so if no ' +
    'yes hi hello hey dear thanks thank please pls regards cheers sorry still now today yesterday since because while ' +
    'one two three again ever never even really much many lot lots thing things way anyone someone something anything ' +
    'help need want know like let make made see said say says tell told asked ask am im ive dont didnt cant wont isnt its ' +
    // What is left of a contraction once the apostrophe splits it ("didn't" → "didn t").
    'don didn doesn isn wasn weren aren haven hasn hadn couldn wouldn shouldn won ll ve re ' +
    'four five six seven eight nine ten first second third ' +
    // The field names of a ticket written as fields (`subject: …\nbody: …`, see textOfInput).
    'subject body ' +
    // Indefinite pronouns and adverbs of degree, time and manner: they occur in tickets of every queue.
    'everything everyone everybody nothing nobody anybody somebody somewhere anywhere everywhere nowhere whatever ' +
    'already exactly always almost actually maybe perhaps probably anymore else instead quite rather enough yet ' +
    'soon later either neither both every another whole ' +
    // Modal verbs and verbs of opinion or attempt: they carry no topic.
    'must might may shall think thought seem seems seemed look looks looked feel guess wonder try tried trying going'
  ).split(' '),
);

/**
 * Words a phrase may not end with (a conjunction, an article or determiner,
 * a copula or auxiliary, a pronoun, a preposition that is not a verb's
 * particle): "back and", "order is", "card on" say no more than their first
 * word. Particles stay ("log in", "locked out", "send it back").
 */
const PHRASE_END_STOP = new Set(
  (
    'and or but nor so yet the a an this that these those some any every each my your our their his her its ' +
    'is are was were be been am has have had do does did will would can could should to of for from with at by as than ' +
    'i me you he she we they it them us if when because since while'
  ).split(' '),
);

/** Words a phrase may not start with (a conjunction, an article or a copula): "an order", "and the", "is broken". */
const PHRASE_START_STOP = new Set('and or but nor so the a an is are was were be been am'.split(' '));

/** True when two consecutive words make a candidate phrase (see {@link candidateTerms}). */
function isCandidatePhrase(word: string, next: string): boolean {
  if (!(isContentWord(word) || isContentWord(next))) return false;
  if (/^\p{N}+$/u.test(word) || /^\p{N}+$/u.test(next) || word.length < 2 || next.length < 2) return false;
  return !PHRASE_END_STOP.has(next) && !PHRASE_START_STOP.has(word);
}

/** True when a word may stand in a candidate term. */
function isContentWord(word: string): boolean {
  return word.length >= 3 && !STOP_WORDS.has(word) && !/^\p{N}+$/u.test(word);
}

/** Inflection endings a prefix term leaves off (`charged` → `charg*`), longest first. */
const ENDINGS = ['ing', 'ed', 'es', 's'] as const;

/**
 * The prefix form of a content word: its stem without an inflection ending
 * (`refunded` → `refund*`, `charges` → `charg*`), or the word itself when
 * it has none and is long enough (`parcel` → `parcel*`); the stem keeps at
 * least 4 letters, so short words get none (`card`).
 */
export function prefixTerm(word: string): string | undefined {
  for (const ending of ENDINGS) {
    if (word.endsWith(ending) && word.length - ending.length >= 4) return `${word.slice(0, -ending.length)}*`;
  }
  return word.length >= 5 ? `${word}*` : undefined;
}

/** Punctuation that ends a clause: a bigram never spans it ("locked out. How" gives no "out how"). */
const CLAUSE_BREAK = /[.!?;:,()[\]{}"\n]+/u;

/**
 * The candidate terms of a text: content words, their prefix forms (see
 * {@link prefixTerm}; none whose stem is a stop word), and bigrams within a clause with at least one content
 * word and no number, that neither end with a function word other than a
 * verb's particle (`log in` yes, `back and` no) nor start with an article,
 * a conjunction or a copula (`an order` no); in text order, each once.
 */
export function candidateTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const clause of text.split(CLAUSE_BREAK)) {
    const words = termWords(clause);
    words.forEach((word, index) => {
      if (isContentWord(word)) {
        terms.add(word);
        const prefix = prefixTerm(word);
        // `wanted` is a content word but `want*` would match the stop word `want`.
        if (prefix !== undefined && !STOP_WORDS.has(prefix.slice(0, -1))) terms.add(prefix);
      }
      const next = words[index + 1];
      if (next === undefined) return;
      if (isCandidatePhrase(word, next)) terms.add(`${word} ${next}`);
    });
  }
  return [...terms];
}
