/**
 * The predicate readings of the relation reader (./relations.ts): finding
 * the predicates of a goal (relation cues, and with `verbRelations` free
 * verbs and "be <adjective> <preposition>"), and relating each predicate's
 * subject group to its object group (see the module comment of
 * ./relations.ts for the rules).
 *
 * Pure.
 */
import type { RelationKind } from '../vocabulary.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import { nameKey } from './extract.ts';
import type { Predicate, RelationCueMatch, RelationReading } from './relation-reading.ts';
import {
  COORDINATORS,
  NOUN_PHRASE_FILLERS,
  SKIP_BEFORE_PREDICATE,
  addRelation,
  isBreakBetween,
  isPredicateWord,
  objectGroup,
  skipFillersLeft,
  subjectGroup,
} from './relation-reading.ts';
import { cardinalityOf, contrasted, isPossessivePronoun, oneClause, quantityBefore } from './relation-words.ts';

const OBJECT_SKIPPABLE = new Set(['determiner', 'adjective', 'adverb', 'value', 'preposition']);
const RELATIVE = new Set(['who', 'which', 'that', 'whom', 'whose', 'where']);
const OBJECT_WINDOW = 10;
const PERSONAL_PRONOUNS = new Set(['it', 'they', 'he', 'she']);

/** Predicates in text order: non-overlapping cues (longest first at a position), then free verbs. */
export function findPredicates(
  words: readonly AnalyzedWord[],
  mentionAt: ReadonlyMap<number, EntityMention>,
  cues: readonly RelationCueMatch[],
  verbRelations: boolean,
): Predicate[] {
  const predicates: Predicate[] = [];
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
  if (verbRelations) {
    words.forEach((_, index) => {
      const verb = verbPredicateAt(words, mentionAt, covered, index);
      if (verb !== undefined) predicates.push(verb);
      const copula = copulaPredicateAt(words, mentionAt, covered, index);
      if (copula !== undefined) predicates.push(copula);
    });
  }
  predicates.sort((a, b) => a.start - b.start);
  return predicates;
}

/** A free verb at `index` with its particles ("sign up", "check in", "take part" are one predicate). */
function verbPredicateAt(
  words: readonly AnalyzedWord[],
  mentionAt: ReadonlyMap<number, EntityMention>,
  covered: ReadonlySet<number>,
  index: number,
): Predicate | undefined {
  const word = words[index]!;
  if (word.wordClass !== 'verb' || covered.has(index) || mentionAt.has(index)) return undefined;
  let end = index + 1;
  while (end < words.length && words[end]!.isParticle && !covered.has(end) && !mentionAt.has(end)) end += 1;
  const lemma = [word.lemma, ...words.slice(index + 1, end).map((entry) => entry.normal)].join(' ');
  return { start: index, end, cue: null, lemma };
}

/** "is responsible for", "are available to": a copula at `index`, adjectives and a preposition read as one predicate. */
function copulaPredicateAt(
  words: readonly AnalyzedWord[],
  mentionAt: ReadonlyMap<number, EntityMention>,
  covered: ReadonlySet<number>,
  index: number,
): Predicate | undefined {
  const word = words[index]!;
  if (word.wordClass !== 'copula' || covered.has(index) || mentionAt.has(index)) return undefined;
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
    return undefined;
  if (words[at - 1]!.clauseBreakAfter || words[at - 1]!.commaAfter) return undefined;
  const lemma = ['be', ...words.slice(firstAdjective, at + 1).map((entry) => entry.lemma)].join(' ');
  return { start: index, end: at + 1, cue: null, lemma };
}

/** Relates the subject group of predicate `predicateIndex` to its object group (or to itself: "each other"). */
export function readPredicate(reading: RelationReading, predicate: Predicate, predicateIndex: number): void {
  const { words } = reading;
  const isPreposition =
    predicate.cue !== null &&
    predicate.end - predicate.start === 1 &&
    words[predicate.start]!.wordClass === 'preposition';
  const subjects = predicateSubjects(reading, predicate, predicateIndex, isPreposition);
  reading.subjectsOf.set(predicateIndex, subjects);
  if (subjects.length === 0) return;
  const sentenceOfPredicate = words[predicate.start]!.sentence;
  if (!reading.firstSubjectOf.has(sentenceOfPredicate)) reading.firstSubjectOf.set(sentenceOfPredicate, subjects);
  const objects = predicateObjects(reading, predicate, isPreposition);
  if (objects.length === 0 && !isPreposition) eachOtherRelations(reading, predicate, subjects);
  if (objects.length === 0) return;
  relateSubjectsToObjects(reading, predicate, subjects, objects);
}

/** The subject group of a predicate: beside a preposition cue, shared with a coordinated verb, a pronoun's antecedent, or the nearest mention before it in the clause. */
function predicateSubjects(
  reading: RelationReading,
  predicate: Predicate,
  predicateIndex: number,
  isPreposition: boolean,
): EntityMention[] {
  const { words, mentionAt, mentionEndingAt, predicates } = reading;
  let subjects: EntityMention[] = [];
  let at = predicate.start - 1;
  while (at >= 0 && SKIP_BEFORE_PREDICATE.has(words[at]!.wordClass) && !mentionAt.has(at)) at -= 1;
  if (isPreposition) {
    const owner = mentionEndingAt.get(skipFillersLeft(reading, predicate.start - 1) + 1);
    if (owner !== undefined && !isBreakBetween(reading, owner.end - 1, predicate.start)) subjects = [owner];
  } else if (at >= 0 && (COORDINATORS.has(words[at]!.normal) || words[at]!.commaAfter) && predicateIndex > 0) {
    const previous = predicates[predicateIndex - 1]!;
    if (!isBreakBetween(reading, previous.start, predicate.start))
      subjects = reading.subjectsOf.get(predicateIndex - 1) ?? [];
  }
  if (
    subjects.length === 0 &&
    !isPreposition &&
    at >= 0 &&
    reading.options.pronounSubjects &&
    PERSONAL_PRONOUNS.has(words[at]!.normal)
  ) {
    const sentence = words[at]!.sentence;
    subjects = reading.firstSubjectOf.get(sentence - 1) ?? [];
  }
  if (subjects.length === 0 && !isPreposition && at >= 0) {
    for (let index = at; index >= 0; index -= 1) {
      if (index < predicate.start - 1 && isBreakBetween(reading, index, index + 1)) break;
      const mention = mentionAt.get(index);
      if (mention !== undefined) {
        subjects = subjectGroup(reading, mention);
        break;
      }
      if (isPredicateWord(reading, index) && !RELATIVE.has(words[index]!.normal)) break;
    }
  }
  return subjects;
}

/** The object group of a predicate: the first mention after it in the clause, past determiners, quantities and non-entity nouns. */
function predicateObjects(reading: RelationReading, predicate: Predicate, isPreposition: boolean): EntityMention[] {
  const { words, mentionAt } = reading;
  for (let index = predicate.end, steps = 0; index < words.length && steps < OBJECT_WINDOW; index += 1, steps += 1) {
    if (isBreakBetween(reading, index - 1, index)) break;
    const mention = mentionAt.get(index);
    if (mention !== undefined) return objectGroup(reading, mention);
    const word = words[index]!;
    if (isPreposition && !NOUN_PHRASE_FILLERS.has(word.wordClass) && !isPossessivePronoun(word)) break;
    if (RELATIVE.has(word.normal) || isPredicateWord(reading, index) || word.wordClass === 'auxiliary') break;
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
  return [];
}

/** "… are related to each other", "… to one another": the subject relates to itself. */
function eachOtherRelations(reading: RelationReading, predicate: Predicate, subjects: readonly EntityMention[]): void {
  const { words } = reading;
  for (let index = predicate.end; index + 1 < words.length && index < predicate.end + 3; index += 1) {
    if (isBreakBetween(reading, index, index + 1)) break;
    if (/^(each|one)$/.test(words[index]!.normal) && /^(other|another)$/.test(words[index + 1]!.normal)) {
      for (const subject of subjects)
        addRelation(reading, subject, subject, 'many_to_many', predicate.cue?.kind ?? 'association', 'reflexive', true);
      break;
    }
  }
}

/** Relates every subject to every object, with the cue's kind and cardinality (else the quantities') and direction. */
function relateSubjectsToObjects(
  reading: RelationReading,
  predicate: Predicate,
  subjects: readonly EntityMention[],
  objects: readonly EntityMention[],
): void {
  const { words, mentionAt, options } = reading;
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
        addRelation(reading, object, subject, cue.cardinality ?? 'one_to_many', kind, tagged, reflexive);
      } else {
        const subjectQuantity = quantityBefore(words, subject, options.quantifiers, true);
        const objectQuantity = quantityBefore(words, object, options.quantifiers, false);
        addRelation(
          reading,
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
}
