/**
 * Entity mentions: every noun run of a goal resolved against the playbook.
 *
 * English structure only; every domain word comes from the playbook:
 *
 * - A noun run ("gas station", "purchase order lines") is read at its head
 *   (last noun). The longest playbook phrase (`entityTerms`, `entityAliases`,
 *   `stopList`, `attributeTerms`) ending at the head wins; it may extend left
 *   of the run, which repairs mis-tagged modifiers.
 * - A stop-listed head with modifiers gives the run to its modifiers ("order
 *   list" → order); a stop-listed head alone is dropped.
 * - An unknown run is named by `unknownNounPolicy.compounds`: its head, its
 *   full compound (the last `extraction.maxCompoundWords` nouns, leading
 *   proper nouns, acronyms and stop words left out), or `auto` — the compound
 *   when the text repeats it or never uses the head alone, else the head.
 * - Attributes: an `attributeTerms` head is a property, not an entity; with
 *   `extraction.structuralAttributes`, so is an unknown noun every mention of
 *   which is possessed by another noun ("the customer's name", "the name of
 *   the customer").
 */
import type { EntityRole } from '../vocabulary.ts';
import type { AnalyzedWord, GoalAnalysis } from './goal-analysis.ts';
import type { CompiledPlaybook } from './extract.ts';
import { entityNameOf, nameKey, phraseEndingAt } from './extract.ts';
import { excludeCategories, excludeUncountable } from './noun-filters.ts';

export { isCountableAt } from './noun-filters.ts';
import {
  compoundStartOf,
  isCompoundModifier,
  isWordLike,
  modifierForm,
  repeatedAdjectiveCompounds,
  repeatedNounPairs,
  resolveAutoCompounds,
} from './compound-mentions.ts';

/** Where an entity mention came from. */
export type MentionSource = 'term' | 'alias' | 'unknown' | 'stop' | 'excluded' | 'attribute';

/** One noun mention and what the playbook made of it. */
export interface EntityMention {
  /** The playbook phrase or the unknown noun (lemmas, lower case). */
  text: string;
  /** Output entity name (PascalCase singular); empty for `stop`/`excluded`/`attribute`. */
  name: string;
  role: EntityRole | null;
  source: MentionSource;
  /** Word span [start, end). */
  start: number;
  end: number;
  /** For an unknown mention: its head noun's lemma (the text when `compounds` keeps only heads); for a term compound: the term. */
  head?: string;
  /** For a term compound ("purchase order"): where its term starts. */
  headStart?: number;
}

/** Every noun mention of a goal, in text order, resolved against the playbook. */
export function findMentions(compiled: CompiledPlaybook, analysis: GoalAnalysis): EntityMention[] {
  const { words, nounRuns } = analysis;
  const { playbook } = compiled;
  const mentions: EntityMention[] = [];
  const repeated = playbook.extraction.adjectiveCompounds
    ? repeatedAdjectiveCompounds(compiled, words, nounRuns)
    : new Set<string>();
  const repeatedPairs = repeatedNounPairs(words, nounRuns);
  for (const [runStart, runEnd] of nounRuns) {
    let start = runStart;
    const adjective = words[runStart - 1];
    if (
      adjective !== undefined &&
      repeated.has(`${adjective.lemma} ${words[runEnd - 1]!.lemma}`) &&
      adjective.sentence === words[runStart]!.sentence
    )
      start -= 1;
    mentions.push(...mentionsOfRun(compiled, words, start, runEnd, repeatedPairs));
  }
  const autoUnknown = playbook.unknownNounPolicy.compounds === 'auto';
  const autoTerms = playbook.extraction.termCompounds === 'auto';
  if (autoUnknown || autoTerms) resolveAutoCompounds(mentions, autoUnknown, autoTerms);
  if (playbook.extraction.structuralAttributes) markPossessedAttributes(words, mentions);
  if (playbook.unknownNounPolicy.countableOnly) excludeUncountable(compiled, words, mentions);
  if (playbook.unknownNounPolicy.excludeCategories.length > 0)
    excludeCategories(new Set(playbook.unknownNounPolicy.excludeCategories), mentions);
  return mentions;
}

function mentionsOfRun(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  runStart: number,
  runEnd: number,
  repeatedPairs: ReadonlySet<string>,
): EntityMention[] {
  const { playbook } = compiled;
  const found: EntityMention[] = [];
  const sentenceStart = firstWordOfSentence(words, runStart);
  const known = phraseEndingAt(compiled, words, runEnd, sentenceStart);
  let modifierEnd: number;
  const namedKind =
    known !== null &&
    known.start === runEnd - 1 &&
    known.start > runStart &&
    compiled.stop.has(known.phrase.text) &&
    isCompoundModifier(compiled, words[runEnd - 2]!) &&
    repeatedPairs.has(`${words[runEnd - 2]!.lemma} ${words[runEnd - 1]!.lemma}`);
  if (known !== null && known.start > runStart && isNotEntityPhrase(compiled, known.phrase.text) && !namedKind) {
    // "order list", "customer name": a stop-listed or attribute head gives the run to its modifiers.
    const head = resolveKnown(compiled, known.phrase.text, known.start, runEnd, words);
    return [...mentionsOfRun(compiled, words, runStart, known.start, repeatedPairs), head];
  }
  if (namedKind) {
    // "event type", "room type" used twice or more: a stop-listed head with a noun modifier the text repeats names a kind of record.
    const start = runEnd - 2;
    const text = `${modifierForm(words[start]!)} ${words[runEnd - 1]!.lemma}`;
    const role = unknownRole(compiled, words[runEnd - 1]!.lemma, false);
    return [
      ...(start > runStart ? mentionsOfRun(compiled, words, runStart, start, repeatedPairs) : []),
      { text, name: entityNameOf(text), role, source: 'unknown', start, end: runEnd, head: text },
    ];
  }
  if (known !== null) {
    const mention = resolveKnown(compiled, known.phrase.text, known.start, runEnd, words);
    modifierEnd = termCompound(compiled, words, runStart, runEnd, known, mention);
    found.push(mention);
  } else {
    found.push(unknownRunMention(compiled, words, runStart, runEnd));
    modifierEnd = runEnd - 1;
  }
  if (playbook.extraction.knownModifiers) addKnownModifiers(compiled, words, runStart, modifierEnd, found);
  return found;
}

/**
 * "purchase order": with `extraction.termCompounds` other than `head`, the
 * term's unknown noun modifiers (up to `maxCompoundWords` words in all) make
 * one compound with it; `mention` is rewritten in place. Returns where the
 * modifiers left for {@link addKnownModifiers} end.
 */
function termCompound(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  runStart: number,
  runEnd: number,
  known: NonNullable<ReturnType<typeof phraseEndingAt>>,
  mention: EntityMention,
): number {
  const { playbook } = compiled;
  let modifierEnd = Math.max(runStart, known.start);
  if (mention.source === 'term' && playbook.extraction.termCompounds !== 'head' && known.start > runStart) {
    // "purchase order": the term's unknown noun modifiers make one compound with it.
    const room = playbook.extraction.maxCompoundWords - (runEnd - known.start);
    let start = Math.max(runStart, known.start - Math.max(0, room));
    while (start < known.start && !isCompoundModifier(compiled, words[start]!)) start += 1;
    if (
      start < known.start &&
      !words
        .slice(start, known.start)
        .some((word) => compiled.terms.has(word.lemma) || compiled.aliases.has(word.lemma))
    ) {
      const text = [...words.slice(start, known.start).map(modifierForm), known.phrase.text].join(' ');
      Object.assign(mention, {
        text,
        name: entityNameOf(text),
        start,
        head: known.phrase.text,
        headStart: known.start,
      });
      modifierEnd = start;
    }
  }
  return modifierEnd;
}

/** The mention of a noun run the playbook does not know: its compound (or head, by `unknownNounPolicy.compounds`), stopped, excluded or unknown. */
function unknownRunMention(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  runStart: number,
  runEnd: number,
): EntityMention {
  const policy = compiled.playbook.unknownNounPolicy;
  const headWord = words[runEnd - 1]!;
  const compoundStart = compoundStartOf(compiled, words, runStart, runEnd);
  // Modifiers keep their surface form: a plural modifier is part of the name ("sales rep", "goods receipt").
  const compound = words
    .slice(compoundStart, runEnd)
    .map((word, index, run) => (index === run.length - 1 ? word.lemma : modifierForm(word)))
    .join(' ');
  const useCompound = policy.compounds !== 'head';
  const text = useCompound ? compound : headWord.lemma;
  const start = useCompound ? compoundStart : runEnd - 1;
  let source: MentionSource = 'unknown';
  if (compiled.stop.has(text) || compiled.stop.has(headWord.lemma)) source = 'stop';
  else if (!policy.include || (headWord.isProperNoun && !policy.properNouns) || !isWordLike(headWord))
    source = 'excluded';
  const role = source === 'unknown' ? unknownRole(compiled, headWord.lemma, headWord.isActor) : null;
  return {
    text,
    name: source === 'unknown' ? entityNameOf(text) : '',
    role,
    source,
    start,
    end: runEnd,
    head: headWord.lemma,
  };
}

/** `extraction.knownModifiers`: known phrases among the modifiers before `modifierEnd` become mentions of their own, put first in `found` (text order). */
function addKnownModifiers(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  runStart: number,
  modifierEnd: number,
  found: EntityMention[],
): void {
  let end = modifierEnd;
  while (end > runStart) {
    const modifier = phraseEndingAt(compiled, words, end, runStart);
    if (modifier === null) {
      end -= 1;
      continue;
    }
    found.unshift(resolveKnown(compiled, modifier.phrase.text, modifier.start, end, words));
    end = modifier.start;
  }
}

const POSSESSION_PREPOSITIONS = new Set(['of']);
const NOUN_PHRASE_FILLERS = new Set(['determiner', 'adjective', 'value']);

/**
 * Marks as `attribute` every unknown noun all of whose mentions are possessed
 * by another noun: right after a possessive noun ("customer's name"), or
 * followed by "of" and a noun phrase ("name of the customer"). A noun that is
 * itself a possessor somewhere stays an entity.
 */
function markPossessedAttributes(words: readonly AnalyzedWord[], mentions: EntityMention[]): void {
  const possessed = new Map<string, boolean>();
  for (const mention of mentions) {
    if (mention.source !== 'unknown' && mention.source !== 'term' && mention.source !== 'alias') continue;
    const key = nameKey(mention.text);
    const isPossessed = isPossessedAt(words, mention.start, mention.end);
    const isPossessor = words[mention.end - 1]!.isPossessive;
    const previous = possessed.get(key);
    const value = (previous ?? true) && isPossessed && !isPossessor;
    possessed.set(key, mention.source === 'unknown' ? value : false);
  }
  for (const mention of mentions) {
    if (mention.source !== 'unknown' || possessed.get(nameKey(mention.text)) !== true) continue;
    mention.source = 'attribute';
    mention.name = '';
    mention.role = null;
  }
}

function isPossessedAt(words: readonly AnalyzedWord[], start: number, end: number): boolean {
  const before = words[start - 1];
  if (
    before !== undefined &&
    before.sentence === words[start]!.sentence &&
    before.isPossessive &&
    before.wordClass === 'noun'
  )
    return true;
  const after = words[end];
  if (after === undefined || after.sentence !== words[start]!.sentence || !POSSESSION_PREPOSITIONS.has(after.normal))
    return false;
  if (words[end - 1]!.clauseBreakAfter || words[end - 1]!.commaAfter) return false;
  for (let index = end + 1; index < words.length && words[index]!.sentence === after.sentence; index += 1) {
    const word = words[index]!;
    if (word.wordClass === 'noun') return !word.isProperNoun;
    if (!NOUN_PHRASE_FILLERS.has(word.wordClass)) return false;
  }
  return false;
}

/** A stop-listed phrase, or an attribute term that is no entity term or alias. */
function isNotEntityPhrase(compiled: CompiledPlaybook, text: string): boolean {
  if (compiled.stop.has(text)) return true;
  return compiled.attributes.has(text) && !compiled.terms.has(text) && !compiled.aliases.has(text);
}

function firstWordOfSentence(words: readonly AnalyzedWord[], index: number): number {
  let start = index;
  while (start > 0 && words[start - 1]!.sentence === words[index]!.sentence) start -= 1;
  return start;
}

function resolveKnown(
  compiled: CompiledPlaybook,
  text: string,
  start: number,
  end: number,
  words: readonly AnalyzedWord[],
): EntityMention {
  if (compiled.stop.has(text)) return { text, name: '', role: null, source: 'stop', start, end };
  const canonical = compiled.aliases.get(text);
  if (canonical !== undefined) {
    const canonicalKey = nameKey(canonical);
    const role =
      compiled.terms.get(canonicalKey) ??
      compiled.terms.get(text) ??
      unknownRole(compiled, canonicalKey.split(' ').pop() ?? canonicalKey, words[end - 1]?.isActor ?? false);
    return { text, name: entityNameOf(canonical), role, source: 'alias', start, end };
  }
  const role = compiled.terms.get(text);
  if (role === undefined && compiled.attributes.has(text))
    return { text, name: '', role: null, source: 'attribute', start, end };
  return { text, name: entityNameOf(text), role: role ?? 'resource', source: 'term', start, end };
}

/** Role of a noun the playbook does not know: the longest matching suffix rule, then `actorRole` for person nouns, then the policy's role. */
export function unknownRole(compiled: CompiledPlaybook, headLemma: string, isActor: boolean): EntityRole {
  for (const [suffix, role] of compiled.suffixes) {
    if (headLemma.length > suffix.length + 1 && headLemma.endsWith(suffix)) return role;
  }
  const policy = compiled.playbook.unknownNounPolicy;
  if (isActor && policy.actorRole !== undefined) return policy.actorRole;
  return policy.role;
}
