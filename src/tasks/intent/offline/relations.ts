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
import type { Cardinality, RelationKind } from '../vocabulary.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import { nameKey } from './extract.ts';
import { nounCategory } from './noun-senses.ts';
import { cardinalityOf, contrasted, isPossessivePronoun, oneClause, quantityBefore } from './relation-words.ts';

/** A relation phrase found in the goal (from the playbook's `relationCues`). */
export interface RelationCueMatch {
  text: string;
  start: number;
  end: number;
  cardinality: Cardinality | undefined;
  kind: RelationKind;
  reverse: boolean;
}

/** A quantifier phrase of the playbook (`cardinalityCues`), as accepted word forms. */
export interface CompiledQuantifier {
  words: ReadonlyArray<readonly string[]>;
  quantity: 'one' | 'many';
}

/** One relation between two entity mentions, before the entity cap. */
export interface FoundRelation {
  from: EntityMention;
  to: EntityMention;
  cardinality: Cardinality | undefined;
  kind: RelationKind;
  /** What produced it: the cue text, `verb:<lemma>` or `possessive`. */
  source: string;
}

export interface RelationOptions {
  verbRelations: boolean;
  possessiveRelations: boolean;
  /** Relate a mention no reading relates to another noun of its sentence to the sentence's first subject (source `sentence`). */
  sentenceRelations: boolean;
  /**
   * Relate a compound to the entities its words name (source `compound`): "temperature
   * sensor" is a kind of Sensor (`is_a`), "invoice line" belongs with Invoice
   * (one to many association).
   */
  compoundRelations: boolean;
  /**
   * Read subtypes from the classic lexico-syntactic patterns of hyponymy
   * (Hearst 1992, "Automatic acquisition of hyponyms from large text
   * corpora"): "X such as Y", "X, e.g. Y" / "for example" / "for instance",
   * "Y and other X" / "or other X", "kinds (types, sorts) of X: Y, Z". Each
   * hyponym Y is related to X as `is_a` (source `subtype`).
   */
  subtypePatterns: boolean;
  /**
   * A personal pronoun subject ("it", "they", "he", "she") stands for the
   * first subject of the previous sentence ("A member books courts. They pay
   * a fee." → Member → Fee).
   */
  pronounSubjects: boolean;
  quantifiers: readonly CompiledQuantifier[];
}

const SKIP_BEFORE_PREDICATE = new Set(['adverb', 'auxiliary', 'copula']);
const NOUN_PHRASE_FILLERS = new Set(['determiner', 'adjective', 'value']);
const OBJECT_SKIPPABLE = new Set(['determiner', 'adjective', 'adverb', 'value', 'preposition']);
const RELATIVE = new Set(['who', 'which', 'that', 'whom', 'whose', 'where']);
const COORDINATORS = new Set(['and', 'or']);
const OBJECT_WINDOW = 10;
const PERSONAL_PRONOUNS = new Set(['it', 'they', 'he', 'she']);
const EXAMPLE_MARKERS = new Set(['eg', 'e.g', 'e.g.']);
const KIND_WORDS = new Set(['kind', 'type', 'sort']);

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
  const argumentCounts = new Map<EntityMention, number>();
  const mentionAt = new Map<number, EntityMention>();
  for (const mention of mentions)
    for (let index = mention.start; index < mention.end; index += 1) mentionAt.set(index, mention);
  const mentionEndingAt = new Map<number, EntityMention>();
  for (const mention of mentions) mentionEndingAt.set(mention.end, mention);

  // Predicates in text order: non-overlapping cues (longest first at a position), then free verbs.
  const predicates: Array<{ start: number; end: number; cue: RelationCueMatch | null; lemma: string }> = [];
  const covered = new Set<number>();
  const sortedCues = [...cues].sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start));
  for (const cue of sortedCues) {
    let free = true;
    for (let index = cue.start; index < cue.end && free; index += 1)
      free = !covered.has(index) && !mentionAt.has(index);
    if (!free) continue;
    for (let index = cue.start; index < cue.end; index += 1) covered.add(index);
    predicates.push({ start: cue.start, end: cue.end, cue, lemma: cue.text });
  }
  if (options.verbRelations) {
    words.forEach((word, index) => {
      if (word.wordClass === 'verb' && !covered.has(index) && !mentionAt.has(index)) {
        // A phrasal verb ("sign up", "check in", "take part") is one predicate with its particles.
        let end = index + 1;
        while (end < words.length && words[end]!.isParticle && !covered.has(end) && !mentionAt.has(end)) end += 1;
        const lemma = [word.lemma, ...words.slice(index + 1, end).map((entry) => entry.normal)].join(' ');
        predicates.push({ start: index, end, cue: null, lemma });
      }
      // "is responsible for", "are available to": a copula, adjectives and a preposition read as one predicate.
      if (word.wordClass !== 'copula' || covered.has(index) || mentionAt.has(index)) return;
      let at = index + 1;
      while (at < words.length && words[at]!.wordClass === 'adverb' && words[at]!.sentence === word.sentence) at += 1;
      const firstAdjective = at;
      while (
        at < words.length &&
        words[at]!.wordClass === 'adjective' &&
        words[at]!.sentence === word.sentence &&
        !words[at - 1]!.clauseBreakAfter
      )
        at += 1;
      const preposition = words[at];
      if (
        at === firstAdjective ||
        preposition === undefined ||
        preposition.wordClass !== 'preposition' ||
        preposition.sentence !== word.sentence ||
        covered.has(at)
      )
        return;
      if (words[at - 1]!.clauseBreakAfter || words[at - 1]!.commaAfter) return;
      const lemma = ['be', ...words.slice(firstAdjective, at + 1).map((entry) => entry.lemma)].join(' ');
      predicates.push({ start: index, end: at + 1, cue: null, lemma });
    });
  }
  predicates.sort((a, b) => a.start - b.start);

  const isBreakBetween = (left: number, right: number): boolean => {
    for (let index = left; index < right; index += 1) if (words[index]!.clauseBreakAfter) return true;
    return words[left]!.sentence !== words[right]!.sentence;
  };
  const isPredicateWord = (index: number): boolean => {
    const word = words[index]!;
    return (word.wordClass === 'verb' || word.wordClass === 'copula') && !mentionAt.has(index);
  };
  /** Skips noun-phrase fillers leftwards from `index`; returns the first other index. */
  const skipFillersLeft = (index: number): number => {
    let at = index;
    while (at >= 0 && NOUN_PHRASE_FILLERS.has(words[at]!.wordClass) && !mentionAt.has(at)) at -= 1;
    return at;
  };
  const skipFillersRight = (index: number): number => {
    let at = index;
    while (
      at < words.length &&
      (NOUN_PHRASE_FILLERS.has(words[at]!.wordClass) || isPossessivePronoun(words[at]!)) &&
      !mentionAt.has(at)
    )
      at += 1;
    return at;
  };

  /** The noun a mention's prepositional phrase modifies, and the nouns coordinated before it. */
  const subjectGroup = (first: EntityMention): EntityMention[] => {
    let head = first;
    for (let hop = 0; hop < 3; hop += 1) {
      const before = skipFillersLeft(head.start - 1);
      if (before < 1 || words[before]!.wordClass !== 'preposition' || isBreakBetween(before - 1, head.start)) break;
      const owner = mentionEndingAt.get(before);
      if (owner === undefined) break;
      head = owner;
    }
    const group = [head];
    let current = head;
    for (;;) {
      const at = skipFillersLeft(current.start - 1);
      if (at < 0) break;
      let ownerEnd: number;
      if (COORDINATORS.has(words[at]!.normal)) ownerEnd = skipFillersLeft(at - 1) + 1;
      else if (words[at]!.commaAfter && mentionEndingAt.has(at + 1)) ownerEnd = at + 1;
      else break;
      const previous = mentionEndingAt.get(ownerEnd);
      if (previous === undefined || isBreakBetween(ownerEnd - 1, current.start)) break;
      group.unshift(previous);
      current = previous;
    }
    return group;
  };

  const objectGroup = (first: EntityMention): EntityMention[] => {
    const group = [first];
    let current = first;
    for (;;) {
      if (words[current.end - 1]!.clauseBreakAfter) break;
      let at = current.end;
      const comma = words[current.end - 1]!.commaAfter;
      at = skipFillersRight(at);
      if (at < words.length && COORDINATORS.has(words[at]!.normal)) at = skipFillersRight(at + 1);
      else if (!comma) break;
      const next = at < words.length ? mentionAt.get(at) : undefined;
      if (next === undefined || next.start !== at || isBreakBetween(current.end - 1, at)) break;
      // "…, and staff approve it": a noun followed by its own verb starts a new clause.
      let after = next.end;
      while (after < words.length && SKIP_BEFORE_PREDICATE.has(words[after]!.wordClass)) after += 1;
      if (
        after < words.length &&
        !isBreakBetween(next.end - 1, after) &&
        isPredicateWord(after) &&
        !words[next.end - 1]!.commaAfter
      )
        break;
      group.push(next);
      current = next;
    }
    return group;
  };

  const found: FoundRelation[] = [];
  const pairs = new Set<string>();
  const subjectsOf = new Map<number, EntityMention[]>();
  /** The first subject group of each sentence (for pronoun subjects of the next). */
  const firstSubjectOf = new Map<number, EntityMention[]>();
  const add = (
    from: EntityMention,
    to: EntityMention,
    cardinality: Cardinality | undefined,
    kind: RelationKind,
    source: string,
    reflexive = false,
  ): void => {
    const fromKey = nameKey(from.name);
    const toKey = nameKey(to.name);
    if (fromKey === toKey && !reflexive) return;
    if (source !== 'sentence') {
      argumentCounts.set(from, (argumentCounts.get(from) ?? 0) + 1);
      argumentCounts.set(to, (argumentCounts.get(to) ?? 0) + 1);
    }
    const pair = fromKey < toKey ? `${fromKey}\u0000${toKey}` : `${toKey}\u0000${fromKey}`;
    if (pairs.has(pair)) return;
    pairs.add(pair);
    found.push({ from, to, cardinality: kind === 'is_a' ? undefined : cardinality, kind, source });
  };

  predicates.forEach((predicate, predicateIndex) => {
    const isPreposition =
      predicate.cue !== null &&
      predicate.end - predicate.start === 1 &&
      words[predicate.start]!.wordClass === 'preposition';
    // Subjects.
    let subjects: EntityMention[] = [];
    let at = predicate.start - 1;
    while (at >= 0 && SKIP_BEFORE_PREDICATE.has(words[at]!.wordClass) && !mentionAt.has(at)) at -= 1;
    if (isPreposition) {
      const owner = mentionEndingAt.get(skipFillersLeft(predicate.start - 1) + 1);
      if (owner !== undefined && !isBreakBetween(owner.end - 1, predicate.start)) subjects = [owner];
    } else if (at >= 0 && (COORDINATORS.has(words[at]!.normal) || words[at]!.commaAfter) && predicateIndex > 0) {
      const previous = predicates[predicateIndex - 1]!;
      if (!isBreakBetween(previous.start, predicate.start)) subjects = subjectsOf.get(predicateIndex - 1) ?? [];
    }
    if (
      subjects.length === 0 &&
      !isPreposition &&
      at >= 0 &&
      options.pronounSubjects &&
      PERSONAL_PRONOUNS.has(words[at]!.normal)
    ) {
      const sentence = words[at]!.sentence;
      subjects = firstSubjectOf.get(sentence - 1) ?? [];
    }
    if (subjects.length === 0 && !isPreposition && at >= 0) {
      for (let index = at; index >= 0; index -= 1) {
        if (index < predicate.start - 1 && isBreakBetween(index, index + 1)) break;
        const mention = mentionAt.get(index);
        if (mention !== undefined) {
          subjects = subjectGroup(mention);
          break;
        }
        if (isPredicateWord(index) && !RELATIVE.has(words[index]!.normal)) break;
      }
    }
    subjectsOf.set(predicateIndex, subjects);
    if (subjects.length === 0) return;
    const sentenceOfPredicate = words[predicate.start]!.sentence;
    if (!firstSubjectOf.has(sentenceOfPredicate)) firstSubjectOf.set(sentenceOfPredicate, subjects);
    // Objects.
    let objects: EntityMention[] = [];
    for (let index = predicate.end, steps = 0; index < words.length && steps < OBJECT_WINDOW; index += 1, steps += 1) {
      if (isBreakBetween(index - 1, index)) break;
      const mention = mentionAt.get(index);
      if (mention !== undefined) {
        objects = objectGroup(mention);
        break;
      }
      const word = words[index]!;
      if (isPreposition && !NOUN_PHRASE_FILLERS.has(word.wordClass) && !isPossessivePronoun(word)) break;
      if (RELATIVE.has(word.normal) || isPredicateWord(index) || word.wordClass === 'auxiliary') break;
      // "one or more": a conjunction inside a quantifier does not end the object search.
      if (word.wordClass === 'conjunction' && index > predicate.end && words[index - 1]!.wordClass !== 'value') break;
      if (
        !OBJECT_SKIPPABLE.has(word.wordClass) &&
        word.wordClass !== 'noun' &&
        !isPossessivePronoun(word) &&
        word.wordClass !== 'conjunction'
      )
        break;
    }
    // "… are related to each other", "… to one another": the subject relates to itself.
    if (objects.length === 0 && !isPreposition) {
      for (let index = predicate.end; index + 1 < words.length && index < predicate.end + 3; index += 1) {
        if (isBreakBetween(index, index + 1)) break;
        if (/^(each|one)$/.test(words[index]!.normal) && /^(other|another)$/.test(words[index + 1]!.normal)) {
          for (const subject of subjects)
            add(subject, subject, 'many_to_many', predicate.cue?.kind ?? 'association', 'reflexive', true);
          break;
        }
      }
    }
    if (objects.length === 0) return;
    const cue = predicate.cue;
    const kind: RelationKind = cue?.kind ?? 'association';
    const source = cue === null ? `verb:${predicate.lemma}` : cue.text;
    for (const subject of subjects) {
      for (const object of objects) {
        // "shapes are connected to other shapes", "junior engineers are assigned a senior engineer",
        // "subcategories belong to other categories": a noun related to its own kind relates to itself.
        const reflexive =
          nameKey(subject.name) === nameKey(object.name) &&
          (words
            .slice(Math.max(predicate.end, object.start - 4), object.start)
            .some((word) => /^(other|another)$/.test(word.normal)) ||
            (contrasted(words, mentionAt, subject, object) && oneClause(words, subject, object)));
        const tagged = reflexive ? `${source} (reflexive)` : source;
        if (cue?.reverse === true) {
          add(object, subject, cue.cardinality ?? 'one_to_many', kind, tagged, reflexive);
        } else {
          const subjectQuantity = quantityBefore(words, subject, options.quantifiers, true);
          const objectQuantity = quantityBefore(words, object, options.quantifiers, false);
          add(
            subject,
            object,
            cue?.cardinality ?? cardinalityOf(subjectQuantity, objectQuantity),
            kind,
            tagged,
            reflexive,
          );
        }
      }
    }
  });

  if (options.subtypePatterns) {
    const firstMentionFrom = (index: number): EntityMention | undefined => {
      const at = skipFillersRight(index);
      const mention = at < words.length ? mentionAt.get(at) : undefined;
      return mention !== undefined && mention.start === at && !isBreakBetween(Math.max(index - 1, 0), at)
        ? mention
        : undefined;
    };
    /** The nearest mention ending at most 5 words before `index` in its clause. */
    const nearestBefore = (index: number): EntityMention | undefined => {
      for (let at = index - 1; at >= 0 && at >= index - 5; at -= 1) {
        if (isBreakBetween(at, index)) return undefined;
        const mention = mentionAt.get(at);
        if (mention !== undefined) return mention;
      }
      return undefined;
    };
    words.forEach((word, index) => {
      const next = words[index + 1];
      // "X such as Y, Z": the list after the marker names kinds of X.
      let hypernym: EntityMention | undefined;
      let listStart = -1;
      if (word.normal === 'such' && next?.normal === 'as' && next.sentence === word.sentence) {
        hypernym = nearestBefore(index);
        listStart = index + 2;
      } else if (EXAMPLE_MARKERS.has(word.normal)) {
        hypernym = nearestBefore(index);
        listStart = index + 1;
      } else if (
        word.normal === 'for' &&
        next !== undefined &&
        /^(example|instance)$/.test(next.normal) &&
        next.sentence === word.sentence
      ) {
        hypernym = nearestBefore(index);
        listStart = index + 2;
      } else if (KIND_WORDS.has(word.lemma) && next?.normal === 'of' && next.sentence === word.sentence) {
        // "kinds of X: Y, Z" (a colon or "are" before the list).
        hypernym = firstMentionFrom(index + 2);
        if (hypernym !== undefined) {
          const last = hypernym.end - 1;
          if (words[last]!.clauseBreakAfter && words[last + 1]?.sentence === word.sentence) listStart = last + 1;
          else if (words[last + 1]?.wordClass === 'copula' && !words[last]!.commaAfter) listStart = last + 2;
        }
      } else if (COORDINATORS.has(word.normal) && next?.normal === 'other' && next.sentence === word.sentence) {
        // "Y, Z and other X": the coordinated nouns before are kinds of X.
        const parent = firstMentionFrom(index + 2);
        const last = mentionEndingAt.get(skipFillersLeft(index - 1) + 1);
        if (parent === undefined || last === undefined || isBreakBetween(last.end - 1, index)) return;
        for (const child of subjectGroup(last)) add(child, parent, undefined, 'is_a', 'subtype');
        return;
      }
      if (hypernym === undefined || listStart < 0 || listStart >= words.length) return;
      const first = firstMentionFrom(listStart);
      if (first === undefined) return;
      const list = [first];
      // The list may run past the clause structure objectGroup knows: "Y, Z and W".
      for (let current = first; ; ) {
        let at = current.end;
        if (words[current.end - 1]!.clauseBreakAfter) break;
        const comma = words[current.end - 1]!.commaAfter;
        at = skipFillersRight(at);
        if (at < words.length && COORDINATORS.has(words[at]!.normal)) at = skipFillersRight(at + 1);
        else if (!comma && !(at < words.length && mentionAt.get(at)?.start === at)) break;
        const following = at < words.length ? mentionAt.get(at) : undefined;
        if (following === undefined || following.start !== at || words[at]!.sentence !== word.sentence) break;
        list.push(following);
        current = following;
      }
      for (const child of list) add(child, hypernym, undefined, 'is_a', 'subtype');
    });
  }
  if (options.compoundRelations) {
    const byKey = new Map<string, EntityMention>();
    for (const mention of mentions) {
      const key = nameKey(mention.name);
      if (!byKey.has(key)) byKey.set(key, mention);
    }
    for (const [key, compound] of byKey) {
      const parts = key.split(' ');
      for (let index = 1; index < parts.length; index += 1) {
        const head = byKey.get(parts.slice(index).join(' '));
        if (head === undefined) continue;
        add(compound, head, undefined, 'is_a', 'compound');
        break;
      }
      for (let index = parts.length - 1; index >= 1; index -= 1) {
        const modifier = byKey.get(nameKey(parts.slice(0, index).join(' ')));
        if (modifier === undefined) continue;
        add(modifier, compound, 'one_to_many', 'association', 'compound');
        // "sensor devices" with Sensor and Device both entities: a sensor is a kind of device when WordNet files both under one category, else the two are associated.
        const head = byKey.get(parts.slice(index).join(' '));
        if (head !== undefined) {
          const modifierCategory = nounCategory(nameKey(modifier.name));
          const isKind = modifierCategory !== null && modifierCategory === nounCategory(nameKey(head.name));
          add(modifier, head, isKind ? undefined : 'one_to_many', isKind ? 'is_a' : 'association', 'compound');
        }
        break;
      }
    }
  }
  if (options.pronounSubjects) {
    // "… their orders", "its rooms": a possessive pronoun stands for the sentence's first subject (else the previous sentence's).
    for (const mention of mentions) {
      const before = words[skipFillersLeft(mention.start - 1)];
      if (before === undefined || !isPossessivePronoun(before) || !/^(its|their)$/.test(before.normal)) continue;
      const sentence = words[mention.start]!.sentence;
      const owner = (firstSubjectOf.get(sentence) ?? firstSubjectOf.get(sentence - 1))?.[0];
      if (owner !== undefined && owner !== mention) add(owner, mention, 'one_to_many', 'association', 'possessive');
    }
  }
  if (options.possessiveRelations) {
    for (const mention of mentions) {
      if (!words[mention.end - 1]!.isPossessive) continue;
      const next = mentionAt.get(skipFillersRight(mention.end));
      if (next !== undefined && !isBreakBetween(mention.end - 1, next.start))
        add(mention, next, 'one_to_many', 'association', 'possessive');
    }
  }
  if (options.sentenceRelations) {
    const topicOf = new Map<number, EntityMention>();
    predicates.forEach((_, index) => {
      const subject = subjectsOf.get(index)?.[0];
      const sentence = words[predicates[index]!.start]!.sentence;
      if (subject !== undefined && !topicOf.has(sentence)) topicOf.set(sentence, subject);
    });
    for (const mention of mentions) {
      const sentence = words[mention.start]!.sentence;
      if (!topicOf.has(sentence)) topicOf.set(sentence, mention);
    }
    const relatedIn = new Set<string>();
    for (const relation of found) {
      if (nameKey(relation.from.name) === nameKey(relation.to.name)) continue;
      relatedIn.add(`${words[relation.from.start]!.sentence}\u0000${nameKey(relation.from.name)}`);
      relatedIn.add(`${words[relation.to.start]!.sentence}\u0000${nameKey(relation.to.name)}`);
    }
    for (const mention of mentions) {
      const sentence = words[mention.start]!.sentence;
      if (relatedIn.has(`${sentence}\u0000${nameKey(mention.name)}`)) continue;
      let topic = topicOf.get(sentence);
      // The topic of a sentence that relates nothing else is related to the previous sentence's topic.
      if (
        topic !== undefined &&
        nameKey(topic.name) === nameKey(mention.name) &&
        !relatedIn.has(`${sentence}\u0000${nameKey(mention.name)}`)
      )
        topic = topicOf.get(sentence - 1);
      if (topic === undefined || nameKey(topic.name) === nameKey(mention.name)) continue;
      add(topic, mention, 'one_to_many', 'association', 'sentence');
      relatedIn.add(`${sentence}\u0000${nameKey(mention.name)}`);
    }
  }
  return { relations: found, arguments: argumentCounts };
}
