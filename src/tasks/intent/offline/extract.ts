/**
 * The offline extractor: a validated playbook applied to an analysed goal.
 *
 * Everything domain-specific comes from the playbook; the code only knows
 * English word and clause structure (lemmas, noun runs, heads of compounds,
 * subjects and objects of predicates, quantifiers, possessives):
 *
 * - App type: every cue of `appTypeCues` found in the goal adds its weight
 *   (each distinct cue once) to its type; the highest total wins, ties go to
 *   the type listed first; no cue → `defaultAppType`.
 * - Entities (`entity-mentions.ts`): noun runs resolved against the playbook
 *   — terms, aliases, stop words, attributes, compounds kept whole or read at
 *   their head — then ranked and capped (`entity-ranking.ts`): at most
 *   `extraction.maxEntities`, chosen by first mention (known terms first) or
 *   by salience.
 * - Relations (`relations.ts`): relation phrases and (optionally) verbs
 *   between a subject and an object noun of one clause, and possessives;
 *   kind from the phrase, cardinality from the phrase or the quantifiers.
 *   Only relations between two output entities are kept.
 * - Behaviours and projections: any cue found adds its value; plus
 *   `appTypeDefaults` of the chosen type and `defaultProjections`.
 */
import type { AppType, Behavior, Cardinality, EntityRole, Projection, RelationKind } from '../vocabulary.ts';
import { BEHAVIORS, PROJECTIONS } from '../vocabulary.ts';
import type { Intent } from '../intent.ts';
import type { AnalyzedWord, GoalAnalysis } from './goal-analysis.ts';
import { withLayoutCues } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import type { Playbook } from './playbook.ts';
import { normalizeTerm } from './playbook.ts';
import type { CompiledQuantifier } from './relations.ts';
import { phraseWords, termKey, wordMatches } from './term-keys.ts';
import { frozenSectionsKey, readEntities } from './entity-readings.ts';

export { entityNameOf, nameKey, termKey } from './term-keys.ts';

export type { EntityMention, MentionSource } from './entity-mentions.ts';

type CueTarget =
  | { kind: 'appType'; value: AppType }
  | { kind: 'behavior'; value: Behavior }
  | { kind: 'projection'; value: Projection }
  | { kind: 'relation'; cardinality: Cardinality | undefined; relationKind: RelationKind; reverse: boolean };

interface CompiledCue {
  text: string;
  /** Accepted forms of each word of the phrase. */
  words: ReadonlyArray<readonly string[]>;
  weight: number;
  target: CueTarget;
}

export interface CompiledPhrase {
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
  /** `attributeTerms`, as term keys. */
  readonly attributes: ReadonlySet<string>;
  readonly suffixes: ReadonlyArray<readonly [string, EntityRole]>;
  /** `cardinalityCues`, longest first. */
  readonly quantifiers: readonly CompiledQuantifier[];
}

/** Why the extractor answered what it did; read by the error-driven proposer. */
export interface ExtractionTrace {
  /** App types with at least one matched cue, in playbook order, with the distinct cues matched. */
  appTypeScores: Array<{ appType: AppType; score: number; cues: string[] }>;
  behaviorCues: Array<{ behavior: Behavior; cues: string[] }>;
  projectionCues: Array<{ projection: Projection; cues: string[] }>;
  mentions: EntityMention[];
  /** Every relation read from the text before the entity cap, with what produced it. */
  relations: Array<{ from: string; to: string; source: string }>;
  /** Every entity candidate with its salience and whether it made the cap. */
  candidates: Array<{ name: string; salience: number; kept: boolean }>;
}

/**
 * Builds the lookup indexes of a playbook. Pure; cache the result per playbook text.
 * The cue index and the lexicon are each built once for playbooks that share
 * their sections as the same frozen objects (see {@link compiledPart}).
 */
export function compilePlaybook(playbook: Playbook): CompiledPlaybook {
  const { appTypeOrder, cuesByFirstWord } = compiledPart('cues', playbook, CUE_SECTIONS, () => compileCues(playbook));
  const { terms, aliases, stop, attributes, phrasesByLastWord } = compiledPart(
    'lexicon',
    playbook,
    LEXICON_SECTIONS,
    () => compileLexicon(playbook),
  );
  const suffixes = Object.entries(playbook.roleSuffixes)
    .map(([suffix, role]) => [suffix.toLowerCase(), role] as const)
    .sort((a, b) => b[0].length - a[0].length);
  const quantifiers: CompiledQuantifier[] = Object.entries(playbook.cardinalityCues)
    .map(([text, quantity]) => ({ words: phraseWords(text), quantity }))
    .sort((a, b) => b.words.length - a.words.length);
  return {
    playbook,
    appTypeOrder,
    cuesByFirstWord,
    phrasesByLastWord,
    terms,
    aliases,
    stop,
    attributes,
    suffixes,
    quantifiers,
  };
}

/** The sections the cue index is built from, and those the lexicon is. */
const CUE_SECTIONS = ['appTypeCues', 'behaviorCues', 'projectionCues', 'relationCues'] as const satisfies ReadonlyArray<
  keyof Playbook
>;
const LEXICON_SECTIONS = [
  'entityTerms',
  'entityAliases',
  'stopList',
  'attributeTerms',
] as const satisfies ReadonlyArray<keyof Playbook>;

/** Cues of every kind indexed by every accepted form of their first word. */
function compileCues(playbook: Playbook): Pick<CompiledPlaybook, 'appTypeOrder' | 'cuesByFirstWord'> {
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
    for (const cue of playbook.appTypeCues[appType] ?? [])
      addCue(cue.cue, cue.weight, { kind: 'appType', value: appType });
  }
  for (const [behavior, cues] of Object.entries(playbook.behaviorCues) as Array<[Behavior, Array<{ cue: string }>]>) {
    for (const cue of cues) addCue(cue.cue, 1, { kind: 'behavior', value: behavior });
  }
  for (const [projection, cues] of Object.entries(playbook.projectionCues) as Array<
    [Projection, Array<{ cue: string }>]
  >) {
    for (const cue of cues) addCue(cue.cue, 1, { kind: 'projection', value: projection });
  }
  for (const [text, rule] of Object.entries(playbook.relationCues)) {
    addCue(normalizeTerm(text), 1, {
      kind: 'relation',
      cardinality: rule.cardinality,
      relationKind: rule.kind,
      reverse: rule.reverse,
    });
  }
  return { appTypeOrder, cuesByFirstWord };
}

/** Entity terms, aliases, stop words and attributes by term key, and every such phrase indexed by its last word. */
function compileLexicon(
  playbook: Playbook,
): Pick<CompiledPlaybook, 'terms' | 'aliases' | 'stop' | 'attributes' | 'phrasesByLastWord'> {
  const terms = new Map<string, EntityRole>();
  for (const [text, role] of Object.entries(playbook.entityTerms)) terms.set(termKey(text), role);
  const aliases = new Map<string, string>();
  for (const [text, canonical] of Object.entries(playbook.entityAliases)) aliases.set(termKey(text), canonical);
  const stop = new Set(playbook.stopList.map(termKey));
  const attributes = new Set(playbook.attributeTerms.map(termKey));

  const phrasesByLastWord = new Map<string, CompiledPhrase[]>();
  for (const text of new Set([...terms.keys(), ...aliases.keys(), ...stop, ...attributes])) {
    const words = phraseWords(text);
    const phrase: CompiledPhrase = { text, words };
    for (const form of words[words.length - 1] ?? []) {
      const list = phrasesByLastWord.get(form) ?? [];
      list.push(phrase);
      phrasesByLastWord.set(form, list);
    }
  }
  for (const list of phrasesByLastWord.values()) list.sort((a, b) => b.words.length - a.words.length);
  return { terms, aliases, stop, attributes, phrasesByLastWord };
}

/** Parts of compiled playbooks, by part and the identities of the frozen sections they were built from. */
const compiledParts = new Map<string, unknown>();
const COMPILED_PARTS_LIMIT = 16;

/**
 * A part of a compiled playbook, built once for playbooks that share its
 * sections as the same frozen objects (the edits of one source,
 * playbook-edit.ts): an edit of a cue compiles the lexicon of its source
 * once, and the other way round. Built afresh when a section is not frozen.
 * The parts are never changed once built.
 */
function compiledPart<T>(part: string, playbook: Playbook, sections: ReadonlyArray<keyof Playbook>, build: () => T): T {
  const sectionsKey = frozenSectionsKey(playbook, sections);
  if (sectionsKey === null) return build();
  const key = `${part} ${sectionsKey}`;
  const cached = compiledParts.get(key) as T | undefined;
  if (cached !== undefined) return cached;
  const built = build();
  if (compiledParts.size >= COMPILED_PARTS_LIMIT) compiledParts.delete(compiledParts.keys().next().value!);
  compiledParts.set(key, built);
  return built;
}

export interface CueMatch {
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
export function phraseEndingAt(
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
export function extractIntent(
  compiled: CompiledPlaybook,
  tagged: GoalAnalysis,
): { intent: Intent; trace: ExtractionTrace } {
  const { playbook } = compiled;
  const analysis = playbook.extraction.layoutCues ? withLayoutCues(tagged) : tagged;
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

  // Entities and relations.
  const { mentions, entities, relations, found, ranking } = readEntities(compiled, tagged, analysis, cueMatches);

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
      relations: found.map((relation) => ({ from: relation.from.name, to: relation.to.name, source: relation.source })),
      candidates: ranking,
    },
  };
}
