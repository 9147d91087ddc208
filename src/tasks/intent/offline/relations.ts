/**
 * Relations read from the text's own structure, over the entity mentions of
 * one goal. English clause structure only; the phrases and quantifiers come
 * from the playbook:
 *
 * - **Predicates**: every `relationCues` phrase ("has", "consists of",
 *   "belongs to", "is a kind of"), and with `extraction.verbRelations` every
 *   other verb. A predicate relates its subject group (the nearest entity
 *   mention before it in the clause — through a relative pronoun, and past a
 *   prepositional phrase to the noun it modifies: "the holder of the card
 *   receives" → holder — plus nouns coordinated with it by "and", "or" or a
 *   comma; a verb coordinated with an earlier one shares its subject) to its
 *   object group (the first entity mention after it in the clause, past
 *   determiners, adjectives, quantities, prepositions and non-entity nouns
 *   such as "a number of", plus coordinated nouns). A one-word preposition cue
 *   ("with") relates only the nouns right beside it.
 *   With `verbRelations`, a copula with adjectives and a preposition ("is
 *   responsible for", "are available to") is a predicate too.
 * - **Sentence topic** (`extraction.sentenceRelations`): an entity mention no
 *   reading relates to another noun of its sentence is related to the
 *   sentence's first subject (else its first entity mention), one to many;
 *   when it is that topic itself, to the previous sentence's topic. A
 *   relation of a noun to itself does not count as relating it to another
 *   noun of its sentence.
 * - **Reflexive**: a noun related by a predicate to "other" (or "another")
 *   nouns of its own kind, to "each other", or to a mention of itself under
 *   a different modifier in the same clause ("junior employees are assigned
 *   a senior employee"; not a comparison, "small rooms cost less than large
 *   rooms", two clauses, "old invoices are archived and new invoices are
 *   emailed", or a change of state, "draft articles become published
 *   articles"), is related to itself; through a reverse phrase too
 *   ("child categories belong to a parent category").
 * - **Compounds** (`extraction.compoundRelations`): a compound entity is a
 *   kind of the entity its head words name ("temperature sensor" is_a
 *   Sensor) and belongs with the entity its modifier words name ("invoice
 *   line": Invoice → InvoiceLine, one to many).
 * - **Possessives** (`extraction.possessiveRelations`): "the customer's
 *   orders" relates Customer → Order, one to many.
 * - **Kind**: the cue's (`association`, `composition`, `is_a`); verbs give
 *   `association`. A `reverse` cue ("belongs to", "is part of") makes the
 *   noun after it the `from` end.
 * - **Cardinality**: the cue's when it sets one; else from the quantifiers:
 *   the subject end is "one" (a plural subject is read generically, "customers
 *   place orders" = each customer) unless a `cardinalityCues` phrase says
 *   many; the object end is the `cardinalityCues` phrase before it ("one or
 *   more", "each"), else a number, else its grammatical number (plural =
 *   many). `is_a` relations have no cardinality.
 *
 * Each unordered pair of entities is related once (the first reading wins).
 */
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import {
  compoundRelations,
  possessivePronounRelations,
  possessiveRelations,
  sentenceRelations,
  subtypeRelations,
} from './relation-patterns.ts';
import { findPredicates, readPredicate } from './relation-predicates.ts';
import type { FoundRelation, RelationCueMatch, RelationOptions } from './relation-reading.ts';
import { createRelationReading } from './relation-reading.ts';

export type {
  CompiledQuantifier,
  FoundRelation,
  RelationCueMatch,
  RelationOptions,
} from './relation-reading.ts';

/**
 * Reads the relations of one goal.
 *
 * @param words the analysed words of the goal
 * @param mentions the entity-candidate mentions (with names), in text order
 * @param cues relation-cue matches of the goal
 */
export function findRelations(
  words: readonly AnalyzedWord[],
  mentions: readonly EntityMention[],
  cues: readonly RelationCueMatch[],
  options: RelationOptions,
): { relations: FoundRelation[]; arguments: Map<EntityMention, number> } {
  const reading = createRelationReading(words, mentions, options);
  reading.predicates.push(...findPredicates(words, reading.mentionAt, cues, options.verbRelations));
  reading.predicates.forEach((predicate, predicateIndex) => {
    readPredicate(reading, predicate, predicateIndex);
  });
  if (options.subtypePatterns) subtypeRelations(reading);
  if (options.compoundRelations) compoundRelations(reading);
  if (options.pronounSubjects) possessivePronounRelations(reading);
  if (options.possessiveRelations) possessiveRelations(reading);
  if (options.sentenceRelations) sentenceRelations(reading);
  return { relations: reading.found, arguments: reading.argumentCounts };
}
