/**
 * Word-level readings the relation reader (./relations.ts) uses: the
 * quantity of a noun phrase ("one" or "many"), a cardinality from two
 * quantities, whether two mentions of one noun are contrasted by their
 * modifiers and read as one clause, and possessive pronouns.
 *
 * Pure.
 */
import type { Cardinality } from '../vocabulary.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import type { CompiledQuantifier } from './relation-reading.ts';

const ONE_DETERMINERS = new Set(['a', 'an', 'one', 'each', 'every', 'the', 'this', 'that', 'its', 'single', 'exactly']);
/** Words that join two clauses: a same-noun object after one belongs to another clause. */
const CLAUSE_LINKS = new Set(['and', 'or', 'but', 'nor', 'while', 'whereas', 'whilst']);
/** Verbs of a change of state: "a draft invoice becomes a final invoice" relates no two instances. */
const CHANGE_OF_STATE = new Set(['become', 'turn', 'convert']);

/**
 * "junior employees … a senior employee": two mentions of one noun, each
 * right after its own modifier (an adjective, or a noun outside every
 * mention), and the modifiers differ.
 */
export function contrasted(
  words: readonly AnalyzedWord[],
  mentionAt: ReadonlyMap<number, EntityMention>,
  left: EntityMention,
  right: EntityMention,
): boolean {
  const modifier = (mention: EntityMention): AnalyzedWord | undefined => {
    const word = words[mention.start - 1];
    return word !== undefined &&
      !mentionAt.has(mention.start - 1) &&
      (word.wordClass === 'adjective' || word.wordClass === 'noun') &&
      word.sentence === words[mention.start]!.sentence
      ? word
      : undefined;
  };
  const a = modifier(left);
  const b = modifier(right);
  return a !== undefined && b !== undefined && a.lemma !== b.lemma;
}

/**
 * A subject, its predicate and its object read as one clause, so that two
 * mentions of a noun under different modifiers are two instances related to
 * each other: no comparison ("small rooms cost less than large rooms"), no
 * comma or conjunction from the subject to the object ("old invoices are
 * archived and new invoices are emailed"; "premium plans get priority
 * support, basic plans get standard support"), no change of state ("draft
 * articles become published articles"), and the object is not the subject
 * of a verb of its own.
 */
export function oneClause(words: readonly AnalyzedWord[], subject: EntityMention, object: EntityMention): boolean {
  if (subject.end > object.start) return false;
  for (let index = subject.end - 1; index < object.start; index += 1) {
    const word = words[index]!;
    if (
      word.commaAfter ||
      word.normal === 'than' ||
      CHANGE_OF_STATE.has(word.lemma) ||
      (index >= subject.end && CLAUSE_LINKS.has(word.normal))
    )
      return false;
  }
  const next = words[object.end];
  return (
    next === undefined ||
    next.sentence !== words[object.start]!.sentence ||
    !['verb', 'copula', 'auxiliary'].includes(next.wordClass)
  );
}

export function isPossessivePronoun(word: AnalyzedWord): boolean {
  return word.wordClass === 'pronoun' && /^(my|our|your|his|her|its|their)$/.test(word.normal);
}

/** "one" or "many" for the noun phrase of a mention (see the module comment). */
export function quantityBefore(
  words: readonly AnalyzedWord[],
  mention: EntityMention,
  quantifiers: readonly CompiledQuantifier[],
  isSubject: boolean,
): 'one' | 'many' {
  let end = mention.start;
  while (
    end > 0 &&
    words[end - 1]!.wordClass === 'adjective' &&
    words[end - 1]!.sentence === words[mention.start]!.sentence
  )
    end -= 1;
  for (const quantifier of quantifiers) {
    const length = quantifier.words.length;
    const start = end - length;
    if (start < 0) continue;
    let ok = true;
    for (let offset = 0; offset < length && ok; offset += 1) {
      const word = words[start + offset]!;
      ok =
        word.sentence === words[mention.start]!.sentence &&
        quantifier.words[offset]!.some((form) => word.keys.includes(form));
    }
    if (ok) return quantifier.quantity;
  }
  if (isSubject) return 'one';
  const before = words[end - 1];
  if (before !== undefined && before.sentence === words[mention.start]!.sentence) {
    if (before.wordClass === 'value') return /^(1|one)$/.test(before.normal) ? 'one' : 'many';
    if (ONE_DETERMINERS.has(before.normal)) return 'one';
  }
  return words[mention.end - 1]!.isPlural ? 'many' : 'one';
}

export function cardinalityOf(from: 'one' | 'many', to: 'one' | 'many'): Cardinality {
  return `${from}_to_${to}` as Cardinality;
}
