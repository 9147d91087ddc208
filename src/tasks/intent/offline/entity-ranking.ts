/**
 * Which entity candidates become the output's entities, and which relations
 * survive between them.
 *
 * - Candidates: mentions the playbook or the unknown-noun policy made
 *   entities (an unknown noun needs `unknownNounPolicy.minMentions` mentions),
 *   one per normalised name.
 * - Relations are read over all candidates first (`relations.ts`), so that
 *   salience can count them.
 * - The cap `extraction.maxEntities` is filled by `extraction.rankBy`:
 *   `firstMention` (known terms and aliases first, then unknown nouns, each in
 *   text order) or `salience` = mentions + times a mention is the subject or
 *   object of a relation reading + distinct entities related to it (ties:
 *   known before unknown, then first mention); under `salience`, an unknown
 *   noun below `unknownNounPolicy.minSalience` is no entity, and a candidate
 *   past the cap whose salience reaches `extraction.overflowSalience` (when
 *   above 0) is kept all the same. Output order is first mention.
 * - Relations between two kept entities are output, at most
 *   `extraction.maxRelations`, in reading order.
 */
import type { IntentEntity, Relation } from '../intent.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import type { EntityMention } from './entity-mentions.ts';
import type { CompiledPlaybook } from './extract.ts';
import { nameKey } from './extract.ts';
import type { Playbook } from './playbook.ts';
import type { FoundRelation, RelationCueMatch } from './relations.ts';
import { findRelations } from './relations.ts';

/** The intent schema's ceiling on entities (`intentSchema`). */
const MAX_OUTPUT_ENTITIES = 60;

/** One entity candidate as the trace shows it: its salience (0 under `firstMention`) and whether it made the cap. */
export interface RankedCandidate {
  name: string;
  salience: number;
  kept: boolean;
}

interface Candidate {
  key: string;
  entity: IntentEntity;
  known: boolean;
  mentions: EntityMention[];
  firstMention: number;
  salience: number;
}

/**
 * Ranks and caps the entity candidates of one goal and keeps the relations between survivors.
 *
 * @returns the output entities and relations, and every relation read before the cap (for the trace)
 */
export function selectEntitiesAndRelations(
  compiled: CompiledPlaybook,
  words: readonly AnalyzedWord[],
  mentions: EntityMention[],
  cues: readonly RelationCueMatch[],
): { entities: IntentEntity[]; relations: Relation[]; found: FoundRelation[]; ranking: RankedCandidate[] } {
  const { playbook } = compiled;
  const { byKey, candidateMentions } = collectCandidates(playbook, mentions);
  const { relations: found, arguments: argumentCounts } = findRelations(words, candidateMentions, cues, {
    verbRelations: playbook.extraction.verbRelations,
    possessiveRelations: playbook.extraction.possessiveRelations,
    sentenceRelations: playbook.extraction.sentenceRelations,
    compoundRelations: playbook.extraction.compoundRelations,
    subtypePatterns: playbook.extraction.subtypePatterns,
    pronounSubjects: playbook.extraction.pronounSubjects,
    quantifiers: compiled.quantifiers,
  });

  const candidates = [...byKey.values()];
  const kept = capCandidates(playbook, candidates, found, argumentCounts);
  const keptKeys = new Map(kept.map((candidate) => [candidate.key, candidate.entity.name]));
  const relations = keptRelations(playbook, found, keptKeys);
  if (playbook.extraction.connectOrphans) connectOrphans(kept, relations, words, playbook.extraction.maxRelations);
  const ranking = candidates.map((candidate) => ({
    name: candidate.entity.name,
    salience: candidate.salience,
    kept: keptKeys.has(candidate.key),
  }));
  return { entities: kept.map((candidate) => candidate.entity), relations, found, ranking };
}

/**
 * The entity candidates of the mentions, by name key, in first-mention order
 * (stop words, excluded nouns, attributes and role-less mentions left out; an
 * unknown noun mentioned fewer than `unknownNounPolicy.minMentions` times is
 * marked excluded), and the mentions that made them.
 */
function collectCandidates(
  playbook: Playbook,
  mentions: EntityMention[],
): { byKey: Map<string, Candidate>; candidateMentions: EntityMention[] } {
  const unknownCounts = new Map<string, number>();
  for (const mention of mentions) {
    if (mention.source === 'unknown') unknownCounts.set(mention.text, (unknownCounts.get(mention.text) ?? 0) + 1);
  }
  const byKey = new Map<string, Candidate>();
  const candidateMentions: EntityMention[] = [];
  for (const mention of mentions) {
    if (
      mention.source === 'stop' ||
      mention.source === 'excluded' ||
      mention.source === 'attribute' ||
      mention.role === null
    )
      continue;
    if (
      mention.source === 'unknown' &&
      (unknownCounts.get(mention.text) ?? 0) < playbook.unknownNounPolicy.minMentions
    ) {
      mention.source = 'excluded';
      continue;
    }
    const key = nameKey(mention.name);
    if (key === '' || mention.name.length > 80) continue;
    let candidate = byKey.get(key);
    if (candidate === undefined) {
      candidate = {
        key,
        entity: { name: mention.name, role: mention.role },
        known: false,
        mentions: [],
        firstMention: byKey.size,
        salience: 0,
      };
      byKey.set(key, candidate);
    }
    candidate.known ||= mention.source !== 'unknown';
    candidate.mentions.push(mention);
    candidateMentions.push(mention);
  }
  return { byKey, candidateMentions };
}

/**
 * The candidates kept under the entity cap, in first-mention order: by
 * salience (mentions + argument roles + relation partners; overflow past the
 * cap above `overflowSalience`) or, by first mention, known terms first.
 */
function capCandidates(
  playbook: Playbook,
  candidates: Candidate[],
  found: readonly FoundRelation[],
  argumentCounts: ReadonlyMap<EntityMention, number>,
): Candidate[] {
  const maxEntities = playbook.extraction.maxEntities;
  let kept: Candidate[];
  if (playbook.extraction.rankBy === 'salience') {
    const partners = new Map<string, Set<string>>();
    for (const relation of found) {
      if (relation.source === 'sentence') continue;
      const from = nameKey(relation.from.name);
      const to = nameKey(relation.to.name);
      (partners.get(from) ?? partners.set(from, new Set()).get(from)!).add(to);
      (partners.get(to) ?? partners.set(to, new Set()).get(to)!).add(from);
    }
    for (const candidate of candidates) {
      let argumentsCount = 0;
      for (const mention of candidate.mentions) argumentsCount += argumentCounts.get(mention) ?? 0;
      candidate.salience = candidate.mentions.length + argumentsCount + (partners.get(candidate.key)?.size ?? 0);
    }
    const overflow = playbook.extraction.overflowSalience;
    kept = candidates
      .filter((candidate) => candidate.known || candidate.salience >= playbook.unknownNounPolicy.minSalience)
      .sort((a, b) => b.salience - a.salience || Number(b.known) - Number(a.known) || a.firstMention - b.firstMention)
      .filter((candidate, rank) => rank < maxEntities || (overflow > 0 && candidate.salience >= overflow))
      .slice(0, MAX_OUTPUT_ENTITIES)
      .sort((a, b) => a.firstMention - b.firstMention);
  } else if (candidates.length > maxEntities) {
    const knownCount = candidates.filter((entry) => entry.known).length;
    let unknownRoom = Math.max(0, maxEntities - knownCount);
    let knownRoom = maxEntities;
    kept = candidates.filter((entry) => (entry.known ? knownRoom-- > 0 : unknownRoom-- > 0));
  } else {
    kept = candidates;
  }
  return kept;
}

/** The relations between kept entities, in reading order, at most `extraction.maxRelations`. */
function keptRelations(
  playbook: Playbook,
  found: readonly FoundRelation[],
  keptKeys: ReadonlyMap<string, string>,
): Relation[] {
  const relations: Relation[] = [];
  for (const relation of found) {
    if (relations.length >= playbook.extraction.maxRelations) break;
    const from = keptKeys.get(nameKey(relation.from.name));
    const to = keptKeys.get(nameKey(relation.to.name));
    if (from === undefined || to === undefined) continue;
    relations.push({
      from,
      to,
      ...(relation.cardinality !== undefined ? { cardinality: relation.cardinality } : {}),
      kind: relation.kind,
    });
  }
  return relations;
}

/**
 * `extraction.connectOrphans`: every kept entity in no output relation is
 * related to the kept entity it shares most sentences with (ties: higher
 * salience, then first mention), one to many from that partner.
 */
function connectOrphans(
  kept: readonly Candidate[],
  relations: Relation[],
  words: readonly AnalyzedWord[],
  maxRelations: number,
): void {
  const related = new Set<string>();
  for (const relation of relations) {
    related.add(nameKey(relation.from));
    related.add(nameKey(relation.to));
  }
  const sentencesOf = new Map(
    kept.map((candidate) => [
      candidate.key,
      new Set(candidate.mentions.map((mention) => words[mention.start]!.sentence)),
    ]),
  );
  for (const orphan of kept) {
    if (relations.length >= maxRelations) break;
    if (related.has(orphan.key)) continue;
    const mine = sentencesOf.get(orphan.key)!;
    let best: Candidate | undefined;
    let bestShared = -1;
    for (const other of kept) {
      if (other === orphan) continue;
      let shared = 0;
      for (const sentence of sentencesOf.get(other.key)!) if (mine.has(sentence)) shared += 1;
      if (
        shared > bestShared ||
        (shared === bestShared &&
          best !== undefined &&
          (other.salience > best.salience ||
            (other.salience === best.salience && other.firstMention < best.firstMention)))
      ) {
        best = other;
        bestShared = shared;
      }
    }
    if (best === undefined) continue;
    relations.push({ from: best.entity.name, to: orphan.entity.name, cardinality: 'one_to_many', kind: 'association' });
    related.add(orphan.key);
    related.add(best.key);
  }
}
