/**
 * The offline extractor: a validated playbook applied to an analysed goal.
 *
 * Everything domain-specific comes from the playbook; this file only knows
 * English word structure (lemmas, noun runs, heads of compounds):
 *
 * - App type: every cue of `appTypeCues` found in the goal adds its weight
 *   (each distinct cue once) to its type; the highest total wins, ties go to
 *   the type listed first; no cue → `defaultAppType`.
 * - Entities: each noun run ("physio clinic", "time slots") is read at its
 *   head (last noun). The longest playbook phrase (`entityTerms`,
 *   `entityAliases`, `stopList`) ending at the head wins (it may extend left of
 *   the run, which repairs mis-tagged modifiers); stop-listed phrases are
 *   dropped; aliases map to their canonical name. An unknown head follows
 *   `unknownNounPolicy`, its role from `roleSuffixes`, then `actorRole` for
 *   person nouns, then the policy's `role`. Entities come in first-mention
 *   order; beyond `extraction.maxEntities`, known ones are kept before unknown
 *   nouns.
 * - Behaviours and projections: any cue found adds its value; plus
 *   `appTypeDefaults` of the chosen type and `defaultProjections`.
 * - Relations: a `relationCues` phrase between two entity mentions of one
 *   sentence relates the nearest mention before it to the nearest after it.
 */
import type { AppType, Behavior, Cardinality, EntityRole, Projection, RelationKind } from '../vocabulary.ts';
import { BEHAVIORS, PROJECTIONS } from '../vocabulary.ts';
import type { Intent, IntentEntity, Relation } from '../intent.ts';
import { normalizeEntityName, singularizeWord } from '../names.ts';
import type { AnalyzedWord, GoalAnalysis } from './goal-analysis.ts';
import type { Playbook } from './playbook.ts';
import { normalizeTerm } from './playbook.ts';

type CueTarget =
  | { kind: 'appType'; value: AppType }
  | { kind: 'behavior'; value: Behavior }
  | { kind: 'projection'; value: Projection }
  | { kind: 'relation'; cardinality: Cardinality | undefined; relationKind: RelationKind };

interface CompiledCue {
  text: string;
  /** Accepted forms of each word of the phrase. */
  words: ReadonlyArray<readonly string[]>;
  weight: number;
  target: CueTarget;
}

interface CompiledPhrase {
  text: string;
  words: ReadonlyArray<readonly string[]>;
}

/** A playbook with its lookup indexes built (see {@link compilePlaybook}). */
export interface CompiledPlaybook {
  readonly playbook: Playbook;
  readonly appTypeOrder: readonly AppType[];
  /** Cues indexed by every accepted form of their first word. */
  readonly cuesByFirstWord: ReadonlyMap<string, readonly CompiledCue[]>;
  /** Entity phrases indexed by every accepted form of their last word, longest first. */
  readonly phrasesByLastWord: ReadonlyMap<string, readonly CompiledPhrase[]>;
  readonly terms: ReadonlyMap<string, EntityRole>;
  readonly aliases: ReadonlyMap<string, string>;
  readonly stop: ReadonlySet<string>;
  readonly suffixes: ReadonlyArray<readonly [string, EntityRole]>;
}

/** Where an entity mention came from. */
export type MentionSource = 'term' | 'alias' | 'unknown' | 'stop' | 'excluded';

/** One noun mention and what the playbook made of it. */
export interface EntityMention {
  /** The playbook phrase or the unknown noun (lemmas, lower case). */
  text: string;
  /** Output entity name (PascalCase singular); empty for `stop`/`excluded`. */
  name: string;
  role: EntityRole | null;
  source: MentionSource;
  /** Word span [start, end). */
  start: number;
  end: number;
}

/** Why the extractor answered what it did; read by the error-driven proposer. */
export interface ExtractionTrace {
  /** App types with at least one matched cue, in playbook order, with the distinct cues matched. */
  appTypeScores: Array<{ appType: AppType; score: number; cues: string[] }>;
  behaviorCues: Array<{ behavior: Behavior; cues: string[] }>;
  projectionCues: Array<{ projection: Projection; cues: string[] }>;
  mentions: EntityMention[];
}

/**
 * Builds the lookup indexes of a playbook. Pure; cache the result per playbook text.
 */
export function compilePlaybook(playbook: Playbook): CompiledPlaybook {
  const cuesByFirstWord = new Map<string, CompiledCue[]>();
  const addCue = (text: string, weight: number, target: CueTarget): void => {
    const words = phraseWords(text);
    const cue: CompiledCue = { text, words, weight, target };
    for (const form of words[0] ?? []) {
      const list = cuesByFirstWord.get(form) ?? [];
      list.push(cue);
      cuesByFirstWord.set(form, list);
    }
  };
  const appTypeOrder = Object.keys(playbook.appTypeCues) as AppType[];
  for (const appType of appTypeOrder) {
    for (const cue of playbook.appTypeCues[appType] ?? []) addCue(cue.cue, cue.weight, { kind: 'appType', value: appType });
  }
  for (const [behavior, cues] of Object.entries(playbook.behaviorCues) as Array<[Behavior, Array<{ cue: string }>]>) {
    for (const cue of cues) addCue(cue.cue, 1, { kind: 'behavior', value: behavior });
  }
  for (const [projection, cues] of Object.entries(playbook.projectionCues) as Array<[Projection, Array<{ cue: string }>]>) {
    for (const cue of cues) addCue(cue.cue, 1, { kind: 'projection', value: projection });
  }
  for (const [text, rule] of Object.entries(playbook.relationCues)) {
    addCue(normalizeTerm(text), 1, { kind: 'relation', cardinality: rule.cardinality, relationKind: rule.kind });
  }

  const terms = new Map<string, EntityRole>();
  for (const [text, role] of Object.entries(playbook.entityTerms)) terms.set(termKey(text), role);
  const aliases = new Map<string, string>();
  for (const [text, canonical] of Object.entries(playbook.entityAliases)) aliases.set(termKey(text), canonical);
  const stop = new Set(playbook.stopList.map(termKey));

  const phrasesByLastWord = new Map<string, CompiledPhrase[]>();
  for (const text of new Set([...terms.keys(), ...aliases.keys(), ...stop])) {
    const words = phraseWords(text);
    const phrase: CompiledPhrase = { text, words };
    for (const form of words[words.length - 1] ?? []) {
      const list = phrasesByLastWord.get(form) ?? [];
      list.push(phrase);
      phrasesByLastWord.set(form, list);
    }
  }
  for (const list of phrasesByLastWord.values()) list.sort((a, b) => b.words.length - a.words.length);

  const suffixes = Object.entries(playbook.roleSuffixes)
    .map(([suffix, role]) => [suffix.toLowerCase(), role] as const)
    .sort((a, b) => b[0].length - a[0].length);
  return { playbook, appTypeOrder, cuesByFirstWord, phrasesByLastWord, terms, aliases, stop, suffixes };
}

/** The lookup key of a playbook term: normalised, last word singular. */
export function termKey(text: string): string {
  const words = normalizeTerm(text).split(' ');
  const last = words.length - 1;
  words[last] = singularizeForm(words[last]!);
  return words.join(' ');
}

function singularizeForm(word: string): string {
  const parts = word.split('-');
  const last = parts.length - 1;
  parts[last] = singularizeWord(parts[last]!);
  return parts.join('-');
}

function phraseWords(text: string): string[][] {
  return normalizeTerm(text)
    .split(' ')
    .map((word) => [...new Set([word, singularizeForm(word)])]);
}

function wordMatches(word: AnalyzedWord, forms: readonly string[]): boolean {
  for (const form of forms) if (word.keys.includes(form)) return true;
  return false;
}

const nameKeyCache = new Map<string, string>();
const entityNameCache = new Map<string, string>();

/** {@link normalizeEntityName}, memoised (names repeat across examples and candidate playbooks). */
export function nameKey(name: string): string {
  let key = nameKeyCache.get(name);
  if (key === undefined) {
    key = normalizeEntityName(name);
    if (nameKeyCache.size > 100_000) nameKeyCache.clear();
    nameKeyCache.set(name, key);
  }
  return key;
}

/** PascalCase singular entity name of a term or canonical name ("time slot" → "TimeSlot"). */
export function entityNameOf(text: string): string {
  let name = entityNameCache.get(text);
  if (name === undefined) {
    name = nameKey(text)
      .split(' ')
      .filter((word) => word !== '')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join('');
    if (entityNameCache.size > 100_000) entityNameCache.clear();
    entityNameCache.set(text, name);
  }
  return name;
}

interface CueMatch {
  cue: CompiledCue;
  start: number;
  end: number;
}

function findCues(compiled: CompiledPlaybook, words: readonly AnalyzedWord[]): CueMatch[] {
  const matches: CueMatch[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    let seen: Set<CompiledCue> | null = null;
    for (const key of word.keys) {
      const cues = compiled.cuesByFirstWord.get(key);
      if (cues === undefined) continue;
      for (const cue of cues) {
        if (seen?.has(cue)) continue;
        (seen ??= new Set()).add(cue);
        const length = cue.words.length;
        if (index + length > words.length) continue;
        let ok = true;
        for (let offset = 1; offset < length && ok; offset += 1) {
          const next = words[index + offset]!;
          ok = next.sentence === word.sentence && wordMatches(next, cue.words[offset]!);
        }
        if (ok) matches.push({ cue, start: index, end: index + length });
      }
    }
  }
  return matches;
}

/** The longest known phrase ending at word `end - 1`, starting at or after `floor`. */
function phraseEndingAt(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  end: number,
  floor: number,
): { phrase: CompiledPhrase; start: number } | null {
  const head = words[end - 1]!;
  let best: { phrase: CompiledPhrase; start: number } | null = null;
  for (const key of head.keys) {
    for (const phrase of compiled.phrasesByLastWord.get(key) ?? []) {
      const length = phrase.words.length;
      const start = end - length;
      if (start < floor || (best !== null && length <= best.phrase.words.length)) continue;
      let ok = true;
      for (let offset = 0; offset < length - 1 && ok; offset += 1) {
        const word = words[start + offset]!;
        ok = word.sentence === head.sentence && wordMatches(word, phrase.words[offset]!);
      }
      if (ok) best = { phrase, start };
    }
  }
  return best;
}

/**
 * Applies a compiled playbook to an analysed goal.
 *
 * @returns the intent (already within the schema's caps) and the trace of why
 */
export function extractIntent(compiled: CompiledPlaybook, analysis: GoalAnalysis): { intent: Intent; trace: ExtractionTrace } {
  const { playbook } = compiled;
  const { words } = analysis;
  const cueMatches = findCues(compiled, words);

  // App type.
  const appTypeCues = new Map<AppType, Map<string, number>>();
  const behaviorCues = new Map<Behavior, Set<string>>();
  const projectionCues = new Map<Projection, Set<string>>();
  for (const { cue } of cueMatches) {
    const target = cue.target;
    if (target.kind === 'appType') {
      const cues = appTypeCues.get(target.value) ?? new Map<string, number>();
      cues.set(cue.text, Math.max(cues.get(cue.text) ?? 0, cue.weight));
      appTypeCues.set(target.value, cues);
    } else if (target.kind === 'behavior') {
      behaviorCues.set(target.value, (behaviorCues.get(target.value) ?? new Set()).add(cue.text));
    } else if (target.kind === 'projection') {
      projectionCues.set(target.value, (projectionCues.get(target.value) ?? new Set()).add(cue.text));
    }
  }
  const appTypeScores: ExtractionTrace['appTypeScores'] = [];
  for (const appType of compiled.appTypeOrder) {
    const cues = appTypeCues.get(appType);
    if (cues === undefined) continue;
    let score = 0;
    for (const weight of cues.values()) score += weight;
    appTypeScores.push({ appType, score, cues: [...cues.keys()] });
  }
  let appType: AppType = playbook.defaultAppType;
  let bestScore = 0;
  for (const entry of appTypeScores) {
    if (entry.score > bestScore) {
      bestScore = entry.score;
      appType = entry.appType;
    }
  }

  // Entities.
  const mentions = findMentions(compiled, analysis);
  const unknownCounts = new Map<string, number>();
  for (const mention of mentions) {
    if (mention.source === 'unknown') unknownCounts.set(mention.text, (unknownCounts.get(mention.text) ?? 0) + 1);
  }
  // Distinct entities in first-mention order; over the cap, entities the
  // playbook knows (terms, aliases) are kept before unknown nouns.
  const distinct = new Map<string, { entity: IntentEntity; known: boolean; mentions: EntityMention[] }>();
  for (const mention of mentions) {
    if (mention.source === 'stop' || mention.source === 'excluded' || mention.role === null) continue;
    if (mention.source === 'unknown' && (unknownCounts.get(mention.text) ?? 0) < playbook.unknownNounPolicy.minMentions) {
      mention.source = 'excluded';
      continue;
    }
    const key = nameKey(mention.name);
    if (key === '' || mention.name.length > 80) continue;
    let entry = distinct.get(key);
    if (entry === undefined) {
      entry = { entity: { name: mention.name, role: mention.role }, known: false, mentions: [] };
      distinct.set(key, entry);
    }
    entry.known ||= mention.source !== 'unknown';
    entry.mentions.push(mention);
  }
  const maxEntities = playbook.extraction.maxEntities;
  let kept = [...distinct.values()];
  if (kept.length > maxEntities) {
    const knownCount = kept.filter((entry) => entry.known).length;
    let unknownRoom = Math.max(0, maxEntities - knownCount);
    let knownRoom = maxEntities;
    kept = kept.filter((entry) => {
      if (entry.known) return knownRoom-- > 0;
      return unknownRoom-- > 0;
    });
  }
  const entities: IntentEntity[] = kept.map((entry) => entry.entity);
  const emittedNames = new Map<EntityMention, string>();
  for (const entry of kept) for (const mention of entry.mentions) emittedNames.set(mention, entry.entity.name);

  // Relations.
  const relations: Relation[] = [];
  const relationPairs = new Set<string>();
  const emitted = [...emittedNames.keys()];
  for (const match of cueMatches) {
    const target = match.cue.target;
    if (target.kind !== 'relation' || relations.length >= playbook.extraction.maxRelations) continue;
    const sentence = words[match.start]!.sentence;
    let before: EntityMention | undefined;
    let after: EntityMention | undefined;
    for (const mention of emitted) {
      if (words[mention.start]!.sentence !== sentence) continue;
      if (mention.end <= match.start && (before === undefined || mention.end > before.end)) before = mention;
      if (mention.start >= match.end && (after === undefined || mention.start < after.start)) after = mention;
    }
    if (before === undefined || after === undefined) continue;
    const from = emittedNames.get(before)!;
    const to = emittedNames.get(after)!;
    const pair = `${from}\u0000${to}`;
    if (from === to || relationPairs.has(pair)) continue;
    relationPairs.add(pair);
    relations.push({
      from,
      to,
      ...(target.cardinality !== undefined ? { cardinality: target.cardinality } : {}),
      kind: target.relationKind,
    });
  }

  // Behaviours and projections, in vocabulary order.
  const defaults = playbook.appTypeDefaults[appType];
  const behaviorSet = new Set<Behavior>([...behaviorCues.keys(), ...(defaults?.behaviors ?? [])]);
  const behaviors = (Object.keys(BEHAVIORS) as Behavior[])
    .filter((behavior) => behaviorSet.has(behavior))
    .slice(0, playbook.extraction.maxBehaviors);
  const projectionSet = new Set<Projection>([
    ...projectionCues.keys(),
    ...playbook.defaultProjections,
    ...(defaults?.projections ?? []),
  ]);
  const projections = (Object.keys(PROJECTIONS) as Projection[])
    .filter((projection) => projectionSet.has(projection))
    .slice(0, playbook.extraction.maxProjections);

  return {
    intent: { appType, entities, relations, behaviors, projections },
    trace: {
      appTypeScores,
      behaviorCues: [...behaviorCues].map(([behavior, cues]) => ({ behavior, cues: [...cues] })),
      projectionCues: [...projectionCues].map(([projection, cues]) => ({ projection, cues: [...cues] })),
      mentions,
    },
  };
}

/** Every noun mention of a goal, in text order, resolved against the playbook. */
function findMentions(compiled: CompiledPlaybook, analysis: GoalAnalysis): EntityMention[] {
  const { words, nounRuns } = analysis;
  const { playbook } = compiled;
  const policy = playbook.unknownNounPolicy;
  const mentions: EntityMention[] = [];
  for (const [runStart, runEnd] of nounRuns) {
    const found: EntityMention[] = [];
    const sentenceStart = firstWordOfSentence(words, runStart);
    const head = phraseEndingAt(compiled, words, runEnd, sentenceStart);
    let modifierEnd: number;
    if (head !== null) {
      found.push(resolveKnown(compiled, head.phrase.text, head.start, runEnd, words));
      modifierEnd = Math.max(runStart, head.start);
    } else {
      const headWord = words[runEnd - 1]!;
      const fullText = words.slice(runStart, runEnd).map((word) => word.lemma).join(' ');
      const text = policy.compounds === 'full' ? fullText : headWord.lemma;
      const start = policy.compounds === 'full' ? runStart : runEnd - 1;
      let source: MentionSource = 'unknown';
      if (compiled.stop.has(text) || compiled.stop.has(headWord.lemma)) source = 'stop';
      else if (!policy.include || (headWord.isProperNoun && !policy.properNouns)) source = 'excluded';
      const role = source === 'unknown' ? unknownRole(compiled, headWord.lemma, headWord.isActor) : null;
      found.push({ text, name: source === 'unknown' ? entityNameOf(text) : '', role, source, start, end: runEnd });
      modifierEnd = runEnd - 1;
    }
    if (playbook.extraction.knownModifiers) {
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
    mentions.push(...found);
  }
  return mentions;
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
  return { text, name: entityNameOf(text), role: compiled.terms.get(text) ?? 'resource', source: 'term', start, end };
}

function unknownRole(compiled: CompiledPlaybook, headLemma: string, isActor: boolean): EntityRole {
  for (const [suffix, role] of compiled.suffixes) {
    if (headLemma.length > suffix.length + 1 && headLemma.endsWith(suffix)) return role;
  }
  const policy = compiled.playbook.unknownNounPolicy;
  if (isActor && policy.actorRole !== undefined) return policy.actorRole;
  return policy.role;
}
