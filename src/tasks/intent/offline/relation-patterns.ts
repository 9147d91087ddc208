/**
 * The pattern readings of the relation reader (./relations.ts), run after
 * the predicates: subtype patterns (Hearst 1992), compounds, possessive
 * pronouns and possessives, and sentence topics (see the module comment of
 * ./relations.ts for the rules). Each adds through the shared
 * {@link RelationReading}.
 *
 * Pure.
 */
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import { nameKey } from './extract.ts';
import { nounCategory } from './noun-senses.ts';
import type { RelationReading } from './relation-reading.ts';
import {
  COORDINATORS,
  addRelation,
  isBreakBetween,
  skipFillersLeft,
  skipFillersRight,
  subjectGroup,
} from './relation-reading.ts';
import { isPossessivePronoun } from './relation-words.ts';

const EXAMPLE_MARKERS = new Set(['eg', 'e.g', 'e.g.']);
const KIND_WORDS = new Set(['kind', 'type', 'sort']);

/** The mention starting right after the fillers from `index`, in the same clause. */
function firstMentionFrom(reading: RelationReading, index: number): EntityMention | undefined {
  const at = skipFillersRight(reading, index);
  const mention = at < reading.words.length ? reading.mentionAt.get(at) : undefined;
  return mention !== undefined && mention.start === at && !isBreakBetween(reading, Math.max(index - 1, 0), at)
    ? mention
    : undefined;
}

/** The nearest mention ending at most 5 words before `index` in its clause. */
function nearestBefore(reading: RelationReading, index: number): EntityMention | undefined {
  for (let at = index - 1; at >= 0 && at >= index - 5; at -= 1) {
    if (isBreakBetween(reading, at, index)) return undefined;
    const mention = reading.mentionAt.get(at);
    if (mention !== undefined) return mention;
  }
  return undefined;
}

/** Subtype patterns (`extraction.subtypePatterns`): every hyponym a pattern lists is related to its hypernym as `is_a`. */
export function subtypeRelations(reading: RelationReading): void {
  reading.words.forEach((word, index) => {
    subtypesAt(reading, word, index);
  });
}

/** The subtype pattern starting at word `index`, if any. */
function subtypesAt(reading: RelationReading, word: AnalyzedWord, index: number): void {
  const { words, mentionEndingAt } = reading;
  const next = words[index + 1];
  // "X such as Y, Z": the list after the marker names kinds of X.
  let hypernym: EntityMention | undefined;
  let listStart = -1;
  if (word.normal === 'such' && next?.normal === 'as' && next.sentence === word.sentence) {
    hypernym = nearestBefore(reading, index);
    listStart = index + 2;
  } else if (EXAMPLE_MARKERS.has(word.normal)) {
    hypernym = nearestBefore(reading, index);
    listStart = index + 1;
  } else if (
    word.normal === 'for' &&
    next !== undefined &&
    /^(example|instance)$/.test(next.normal) &&
    next.sentence === word.sentence
  ) {
    hypernym = nearestBefore(reading, index);
    listStart = index + 2;
  } else if (KIND_WORDS.has(word.lemma) && next?.normal === 'of' && next.sentence === word.sentence) {
    // "kinds of X: Y, Z" (a colon or "are" before the list).
    hypernym = firstMentionFrom(reading, index + 2);
    if (hypernym !== undefined) {
      const last = hypernym.end - 1;
      if (words[last]!.clauseBreakAfter && words[last + 1]?.sentence === word.sentence) listStart = last + 1;
      else if (words[last + 1]?.wordClass === 'copula' && !words[last]!.commaAfter) listStart = last + 2;
    }
  } else if (COORDINATORS.has(word.normal) && next?.normal === 'other' && next.sentence === word.sentence) {
    // "Y, Z and other X": the coordinated nouns before are kinds of X.
    const parent = firstMentionFrom(reading, index + 2);
    const last = mentionEndingAt.get(skipFillersLeft(reading, index - 1) + 1);
    if (parent === undefined || last === undefined || isBreakBetween(reading, last.end - 1, index)) return;
    for (const child of subjectGroup(reading, last)) addRelation(reading, child, parent, undefined, 'is_a', 'subtype');
    return;
  }
  if (hypernym === undefined || listStart < 0 || listStart >= words.length) return;
  const first = firstMentionFrom(reading, listStart);
  if (first === undefined) return;
  for (const child of subtypeList(reading, first, word.sentence))
    addRelation(reading, child, hypernym, undefined, 'is_a', 'subtype');
}

/** The listed mentions from `first` on: the list may run past the clause structure objectGroup knows ("Y, Z and W"). */
function subtypeList(reading: RelationReading, first: EntityMention, sentence: number): EntityMention[] {
  const { words, mentionAt } = reading;
  const list = [first];
  for (let current = first; ; ) {
    let at = current.end;
    if (words[current.end - 1]!.clauseBreakAfter) break;
    const comma = words[current.end - 1]!.commaAfter;
    at = skipFillersRight(reading, at);
    if (at < words.length && COORDINATORS.has(words[at]!.normal)) at = skipFillersRight(reading, at + 1);
    else if (!comma && !(at < words.length && mentionAt.get(at)?.start === at)) break;
    const following = at < words.length ? mentionAt.get(at) : undefined;
    if (following === undefined || following.start !== at || words[at]!.sentence !== sentence) break;
    list.push(following);
    current = following;
  }
  return list;
}

/** Compounds (`extraction.compoundRelations`): a compound is a kind of its head's entity and belongs with its modifier's. */
export function compoundRelations(reading: RelationReading): void {
  const byKey = new Map<string, EntityMention>();
  for (const mention of reading.mentions) {
    const key = nameKey(mention.name);
    if (!byKey.has(key)) byKey.set(key, mention);
  }
  for (const [key, compound] of byKey) {
    const parts = key.split(' ');
    for (let index = 1; index < parts.length; index += 1) {
      const head = byKey.get(parts.slice(index).join(' '));
      if (head === undefined) continue;
      addRelation(reading, compound, head, undefined, 'is_a', 'compound');
      break;
    }
    for (let index = parts.length - 1; index >= 1; index -= 1) {
      const modifier = byKey.get(nameKey(parts.slice(0, index).join(' ')));
      if (modifier === undefined) continue;
      addRelation(reading, modifier, compound, 'one_to_many', 'association', 'compound');
      // "sensor devices" with Sensor and Device both entities: a sensor is a kind of device when WordNet files both under one category, else the two are associated.
      const head = byKey.get(parts.slice(index).join(' '));
      if (head !== undefined) {
        const modifierCategory = nounCategory(nameKey(modifier.name));
        const isKind = modifierCategory !== null && modifierCategory === nounCategory(nameKey(head.name));
        addRelation(
          reading,
          modifier,
          head,
          isKind ? undefined : 'one_to_many',
          isKind ? 'is_a' : 'association',
          'compound',
        );
      }
      break;
    }
  }
}

/** "… their orders", "its rooms": a possessive pronoun stands for the sentence's first subject (else the previous sentence's). */
export function possessivePronounRelations(reading: RelationReading): void {
  const { words, firstSubjectOf } = reading;
  for (const mention of reading.mentions) {
    const before = words[skipFillersLeft(reading, mention.start - 1)];
    if (before === undefined || !isPossessivePronoun(before) || !/^(its|their)$/.test(before.normal)) continue;
    const sentence = words[mention.start]!.sentence;
    const owner = (firstSubjectOf.get(sentence) ?? firstSubjectOf.get(sentence - 1))?.[0];
    if (owner !== undefined && owner !== mention)
      addRelation(reading, owner, mention, 'one_to_many', 'association', 'possessive');
  }
}

/** Possessives (`extraction.possessiveRelations`): "the customer's orders" relates Customer → Order, one to many. */
export function possessiveRelations(reading: RelationReading): void {
  const { words, mentionAt } = reading;
  for (const mention of reading.mentions) {
    if (!words[mention.end - 1]!.isPossessive) continue;
    const next = mentionAt.get(skipFillersRight(reading, mention.end));
    if (next !== undefined && !isBreakBetween(reading, mention.end - 1, next.start))
      addRelation(reading, mention, next, 'one_to_many', 'association', 'possessive');
  }
}

/** Sentence topics (`extraction.sentenceRelations`): a mention nothing relates in its sentence is related to the sentence's topic. */
export function sentenceRelations(reading: RelationReading): void {
  const { words, mentions, predicates, subjectsOf } = reading;
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
  for (const relation of reading.found) {
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
    addRelation(reading, topic, mention, 'one_to_many', 'association', 'sentence');
    relatedIn.add(`${sentence}\u0000${nameKey(mention.name)}`);
  }
}
