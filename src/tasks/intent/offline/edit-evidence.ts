/**
 * What the playbook edit generator reads and writes: the evidence of one
 * optimization example, the candidate edits and their kinds, and the small
 * readings of the evidence the generators share (gold entity keys, cue terms
 * of a goal, entities the layout reading hides, a name's noun category).
 *
 * Pure.
 */
import type { ExampleDiagnostics } from '../scorer.ts';
import type { ExpectedIntent } from '../intent.ts';
import type { ExtractionTrace } from './extract.ts';
import { nameKey } from './extract.ts';
import type { GoalAnalysis } from './goal-analysis.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { nounCategory } from './noun-senses.ts';

/** The error an edit was generated from (used to interleave kinds fairly). */
export type EditKind =
  | 'appTypeCue'
  | 'appTypeWeight'
  | 'appTypeCueRemoval'
  | 'entityTerm'
  | 'entityAlias'
  | 'stopListRemoval'
  | 'aliasRemoval'
  | 'stopWord'
  | 'termRemoval'
  | 'role'
  | 'roleSuffix'
  | 'behaviorCue'
  | 'appTypeDefault'
  | 'entityCap'
  | 'salienceFloor'
  | 'compoundPolicy'
  | 'attributeTerm'
  | 'attributeRemoval'
  | 'relationCue'
  | 'cardinalityCue'
  | 'nounCategory'
  | 'countability'
  | 'layout'
  | 'lexiconBundle'
  | 'projection';

/** One failing (or passing) optimization example as the generator reads it. */
export interface ExampleEvidence {
  id: string;
  expected: ExpectedIntent;
  analysis: GoalAnalysis;
  trace: ExtractionTrace;
  predictedAppType: string;
  predictedEntityCount: number;
  diagnostics: ExampleDiagnostics;
}

export interface EditCandidate {
  edit: PlaybookEdit;
  /** Canonical delta line. */
  delta: string;
  kind: EditKind;
  /** Ids of the failing examples that suggested this edit. */
  sources: Set<string>;
  /** Cheap prior: plausible fixes minus plausible breaks over all examples. */
  preRank: number;
}

/** The WordNet category of an entity name (its whole words, else its head). */
export function categoryOfName(name: string): ReturnType<typeof nounCategory> {
  const key = nameKey(name);
  return nounCategory(key) ?? nounCategory(key.split(' ').pop() ?? key);
}

/** Whether a gold entity the example misses is named by a word the layout reading reads otherwise (`extraction.layoutCues`). */
export function hiddenByLayout(example: ExampleEvidence): boolean {
  const missed = new Set<string>();
  for (const goldName of example.diagnostics.missedEntities) {
    const gold = example.expected.entities?.find((entity) => entity.name === goldName);
    for (const name of [goldName, ...(gold?.aliases ?? [])]) missed.add(nameKey(name));
  }
  return example.analysis.words.some(
    (word) => (word.positionalCapital || word.opensAside) && missed.has(nameKey(word.lemma)),
  );
}

/** Normalised names (and aliases) of an example's gold entities. */
export function goldKeys(expected: ExpectedIntent): Set<string> {
  const keys = new Set<string>();
  for (const entity of expected.entities ?? []) {
    keys.add(nameKey(entity.name));
    for (const alias of entity.aliases ?? []) keys.add(nameKey(alias));
  }
  return keys;
}

/** Cue suggestions from a goal: content-word lemmas, verb stems of gerunds, and two-noun compounds. */
export function candidateCueTerms(analysis: GoalAnalysis): string[] {
  const terms = new Set<string>();
  for (const word of analysis.words) {
    if (!word.isContent || word.isProperNoun) continue;
    for (const key of word.keys) {
      if (key === word.normal && key !== word.lemma) continue;
      if (key.length >= 3 && /^[a-z][a-z'-]*[a-z]$/.test(key)) terms.add(key);
    }
  }
  for (const [start, end] of analysis.nounRuns) {
    if (end - start < 2) continue;
    const first = analysis.words[end - 2]!;
    const second = analysis.words[end - 1]!;
    if (first.isProperNoun || second.isProperNoun) continue;
    const phrase = `${first.lemma} ${second.lemma}`;
    if (/^[a-z][a-z' -]*[a-z]$/.test(phrase)) terms.add(phrase);
  }
  return [...terms];
}
