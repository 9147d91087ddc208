/**
 * The state of reading the relations of one goal (./relations.ts): the
 * words, the entity mentions indexed by word, the predicates, the relations
 * found so far (each unordered pair once) and the subjects each predicate
 * took; and the readings over it that every part of the reader shares
 * (clause breaks, noun-phrase fillers, subject and object groups, adding a
 * relation).
 *
 * Pure.
 */
import type { Cardinality, RelationKind } from '../vocabulary.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import { nameKey } from './extract.ts';
import { isPossessivePronoun } from './relation-words.ts';

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

export const SKIP_BEFORE_PREDICATE = new Set(['adverb', 'auxiliary', 'copula']);
export const NOUN_PHRASE_FILLERS = new Set(['determiner', 'adjective', 'value']);
export const COORDINATORS = new Set(['and', 'or']);

/** A predicate of the goal: a relation cue, or (with `verbRelations`) a free verb or "be <adjective> <preposition>". */
export interface Predicate {
  start: number;
  end: number;
  cue: RelationCueMatch | null;
  lemma: string;
}

/** The state of reading one goal's relations (see the module comment). */
export interface RelationReading {
  readonly words: readonly AnalyzedWord[];
  readonly mentions: readonly EntityMention[];
  readonly options: RelationOptions;
  /** The mention covering each word index. */
  readonly mentionAt: Map<number, EntityMention>;
  /** The mention ending (exclusive) at each word index. */
  readonly mentionEndingAt: Map<number, EntityMention>;
  /** Predicates in text order. */
  readonly predicates: Predicate[];
  readonly found: FoundRelation[];
  /** Unordered name-key pairs already related. */
  readonly pairs: Set<string>;
  /** How often each mention is an argument of a reading (sentence-topic relations left out). */
  readonly argumentCounts: Map<EntityMention, number>;
  /** The subject group of each predicate, by its index. */
  readonly subjectsOf: Map<number, EntityMention[]>;
  /** The first subject group of each sentence (for pronoun subjects of the next). */
  readonly firstSubjectOf: Map<number, EntityMention[]>;
}

/** A reading with the mentions indexed and nothing found yet (predicates are filled by the caller). */
export function createRelationReading(
  words: readonly AnalyzedWord[],
  mentions: readonly EntityMention[],
  options: RelationOptions,
): RelationReading {
  const mentionAt = new Map<number, EntityMention>();
  for (const mention of mentions)
    for (let index = mention.start; index < mention.end; index += 1) mentionAt.set(index, mention);
  const mentionEndingAt = new Map<number, EntityMention>();
  for (const mention of mentions) mentionEndingAt.set(mention.end, mention);
  return {
    words,
    mentions,
    options,
    mentionAt,
    mentionEndingAt,
    predicates: [],
    found: [],
    pairs: new Set(),
    argumentCounts: new Map(),
    subjectsOf: new Map(),
    firstSubjectOf: new Map(),
  };
}

/** Whether a clause break or a sentence boundary lies between word `left` and word `right`. */
export function isBreakBetween(reading: RelationReading, left: number, right: number): boolean {
  const { words } = reading;
  for (let index = left; index < right; index += 1) if (words[index]!.clauseBreakAfter) return true;
  return words[left]!.sentence !== words[right]!.sentence;
}

/** Whether word `index` is a verb or copula outside every mention. */
export function isPredicateWord(reading: RelationReading, index: number): boolean {
  const word = reading.words[index]!;
  return (word.wordClass === 'verb' || word.wordClass === 'copula') && !reading.mentionAt.has(index);
}

/** Skips noun-phrase fillers leftwards from `index`; returns the first other index. */
export function skipFillersLeft(reading: RelationReading, index: number): number {
  const { words, mentionAt } = reading;
  let at = index;
  while (at >= 0 && NOUN_PHRASE_FILLERS.has(words[at]!.wordClass) && !mentionAt.has(at)) at -= 1;
  return at;
}

/** Skips noun-phrase fillers and possessive pronouns rightwards from `index`; returns the first other index. */
export function skipFillersRight(reading: RelationReading, index: number): number {
  const { words, mentionAt } = reading;
  let at = index;
  while (
    at < words.length &&
    (NOUN_PHRASE_FILLERS.has(words[at]!.wordClass) || isPossessivePronoun(words[at]!)) &&
    !mentionAt.has(at)
  )
    at += 1;
  return at;
}

/** The noun a mention's prepositional phrase modifies, and the nouns coordinated before it. */
export function subjectGroup(reading: RelationReading, first: EntityMention): EntityMention[] {
  const { words, mentionEndingAt } = reading;
  let head = first;
  for (let hop = 0; hop < 3; hop += 1) {
    const before = skipFillersLeft(reading, head.start - 1);
    if (before < 1 || words[before]!.wordClass !== 'preposition' || isBreakBetween(reading, before - 1, head.start))
      break;
    const owner = mentionEndingAt.get(before);
    if (owner === undefined) break;
    head = owner;
  }
  const group = [head];
  let current = head;
  for (;;) {
    const at = skipFillersLeft(reading, current.start - 1);
    if (at < 0) break;
    let ownerEnd: number;
    if (COORDINATORS.has(words[at]!.normal)) ownerEnd = skipFillersLeft(reading, at - 1) + 1;
    else if (words[at]!.commaAfter && mentionEndingAt.has(at + 1)) ownerEnd = at + 1;
    else break;
    const previous = mentionEndingAt.get(ownerEnd);
    if (previous === undefined || isBreakBetween(reading, ownerEnd - 1, current.start)) break;
    group.unshift(previous);
    current = previous;
  }
  return group;
}

/** A mention and the nouns coordinated after it in its clause. */
export function objectGroup(reading: RelationReading, first: EntityMention): EntityMention[] {
  const { words, mentionAt } = reading;
  const group = [first];
  let current = first;
  for (;;) {
    if (words[current.end - 1]!.clauseBreakAfter) break;
    let at = current.end;
    const comma = words[current.end - 1]!.commaAfter;
    at = skipFillersRight(reading, at);
    if (at < words.length && COORDINATORS.has(words[at]!.normal)) at = skipFillersRight(reading, at + 1);
    else if (!comma) break;
    const next = at < words.length ? mentionAt.get(at) : undefined;
    if (next === undefined || next.start !== at || isBreakBetween(reading, current.end - 1, at)) break;
    // "…, and staff approve it": a noun followed by its own verb starts a new clause.
    let after = next.end;
    while (after < words.length && SKIP_BEFORE_PREDICATE.has(words[after]!.wordClass)) after += 1;
    if (
      after < words.length &&
      !isBreakBetween(reading, next.end - 1, after) &&
      isPredicateWord(reading, after) &&
      !words[next.end - 1]!.commaAfter
    )
      break;
    group.push(next);
    current = next;
  }
  return group;
}

/**
 * Records a relation: counts both ends as arguments (but for sentence-topic
 * relations), then keeps it unless its pair of names is already related (the
 * first reading wins) or it relates a name to itself without `reflexive`.
 * `is_a` relations carry no cardinality.
 */
export function addRelation(
  reading: RelationReading,
  from: EntityMention,
  to: EntityMention,
  cardinality: Cardinality | undefined,
  kind: RelationKind,
  source: string,
  reflexive = false,
): void {
  const { argumentCounts, pairs } = reading;
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
  reading.found.push({ from, to, cardinality: kind === 'is_a' ? undefined : cardinality, kind, source });
}
