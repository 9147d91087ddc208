/**
 * The entity reading of a goal under a playbook (its mentions, the capped
 * entities and relations, and why), shared between playbooks whose entity
 * sections are the same frozen objects: what lets the offline extractor
 * (./extract.ts) screen many cue edits reading each goal's entities once.
 */
import type { IntentEntity, Relation } from '../intent.ts';
import { deepFreeze } from './deep-freeze.ts';
import type { EntityMention } from './entity-mentions.ts';
import { findMentions } from './entity-mentions.ts';
import { selectEntitiesAndRelations } from './entity-ranking.ts';
import type { CompiledPlaybook, CueMatch } from './extract.ts';
import type { GoalAnalysis } from './goal-analysis.ts';
import type { Playbook, PlaybookSection } from './playbook.ts';
import { PLAYBOOK_SECTIONS } from './playbook.ts';
import type { RelationCueMatch } from './relations.ts';

/** What the entity sections of a playbook read from a goal: its mentions, the capped entities and relations, and why. */
export interface EntityReading {
  mentions: EntityMention[];
  entities: IntentEntity[];
  relations: Relation[];
  found: ReturnType<typeof selectEntitiesAndRelations>['found'];
  ranking: ReturnType<typeof selectEntitiesAndRelations>['ranking'];
}

/** The sections that only decide app type, behaviours and projections: nothing in entity-mentions.ts, entity-ranking.ts or relations.ts reads them. */
const CUE_ONLY_SECTIONS: ReadonlySet<PlaybookSection> = new Set([
  'appTypeCues',
  'defaultAppType',
  'behaviorCues',
  'projectionCues',
  'defaultProjections',
  'appTypeDefaults',
]);
/**
 * The sections entities and relations are read from: every other one (so a
 * section added later counts until it is shown not to), among them the
 * relation cues of `findCues` and what the phrase index of
 * {@link compilePlaybook} is built from.
 */
const ENTITY_SECTIONS: readonly PlaybookSection[] = PLAYBOOK_SECTIONS.filter(
  (section) => !CUE_ONLY_SECTIONS.has(section),
);

/** Readings per analysed goal, by the identities of the entity sections they were read with. */
const entityReadings = new WeakMap<GoalAnalysis, Map<string, EntityReading>>();
const sectionIds = new WeakMap<object, number>();
let nextSectionId = 0;
/** Readings kept per goal: one per frozen source playbook in use at once is what screening needs. */
const READINGS_PER_GOAL = 4;

/**
 * Entities and relations of a goal under a playbook. When every entity
 * section of the playbook is a frozen object (the sections an edit shares
 * with its validated source, playbook-edit.ts), the reading is kept per goal
 * and section identity and given again, frozen, to every playbook that shares
 * those sections: screening many edits of app type, behaviour or projection
 * cues reads each goal's entities once. Frozen objects cannot change, so the
 * same objects mean the same reading; any other playbook is read afresh.
 */
export function readEntities(
  compiled: CompiledPlaybook,
  tagged: GoalAnalysis,
  analysis: GoalAnalysis,
  cueMatches: readonly CueMatch[],
): EntityReading {
  const key = frozenSectionsKey(compiled.playbook, ENTITY_SECTIONS);
  const cached = key === null ? undefined : entityReadings.get(tagged)?.get(key);
  if (cached !== undefined) return cached;
  const mentions = findMentions(compiled, analysis);
  const relationCueMatches: RelationCueMatch[] = [];
  for (const match of cueMatches) {
    const target = match.cue.target;
    if (target.kind !== 'relation') continue;
    relationCueMatches.push({
      text: match.cue.text,
      start: match.start,
      end: match.end,
      cardinality: target.cardinality,
      kind: target.relationKind,
      reverse: target.reverse,
    });
  }
  const reading: EntityReading = {
    mentions,
    ...selectEntitiesAndRelations(compiled, analysis.words, mentions, relationCueMatches),
  };
  if (key !== null) {
    const readings = entityReadings.get(tagged) ?? new Map<string, EntityReading>();
    if (readings.size >= READINGS_PER_GOAL) readings.delete(readings.keys().next().value!);
    readings.set(key, deepFreeze(reading));
    entityReadings.set(tagged, readings);
  }
  return reading;
}

/** The identities of some sections of a playbook, or null when one of them is not a frozen object. */
export function frozenSectionsKey(playbook: Playbook, sections: ReadonlyArray<keyof Playbook>): string | null {
  let key = '';
  for (const section of sections) {
    const value: unknown = playbook[section];
    if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return null;
    let id = sectionIds.get(value);
    if (id === undefined) {
      id = nextSectionId;
      nextSectionId += 1;
      sectionIds.set(value, id);
    }
    key += `${id} `;
  }
  return key;
}
