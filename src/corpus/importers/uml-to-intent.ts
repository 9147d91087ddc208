/**
 * Maps a UML class diagram (as read by `parsePlantUml`) onto a partial gold
 * intent: entities and relations only. Roles, behaviours, projections and the
 * app type are not in a class diagram, so they are left out (partial gold;
 * the scorer skips absent components and says so).
 *
 * The mapping, explicitly:
 *
 * | diagram | gold |
 * |---|---|
 * | class, abstract class, entity (declared or drawn only by a link) | entity `{ name }`, no role; a declared alias becomes an entity alias |
 * | association class `(A, B) .. C` | entity C, plus relations C → A and C → B |
 * | interface | not an entity (reported); links to it are skipped |
 * | enum | not an entity: a value set of an attribute (reported); links to it are skipped |
 * | association, aggregation | relation, kind `association` (UML aggregation has no distinct meaning in the intent vocabulary) |
 * | composition | relation, kind `composition`, from the whole to the part |
 * | inheritance / realisation between classes | relation, kind `is_a`, from child to parent |
 * | dependency, hidden layout link | skipped (reported) |
 *
 * Cardinality is derived only when both ends carry a readable multiplicity:
 * an upper bound of 1 (`1`, `0..1`, `1..1`) is "one", an upper bound above 1
 * (`*`, `0..*`, `1..*`, `n`, `2..4`, `4`) is "many"; `one_to_many` means one
 * `from` has many `to`. An association class C of A–B relates to A as
 * `many_to_one` when the multiplicity at B's end is "many" (`one_to_one` when
 * it is "one"), and likewise to B.
 *
 * Source: UML 2.5.1 (OMG formal/17-12-05) §11.5 (associations, association
 * classes); the mapping rules of the Golden UML ModelSet notes in
 * `shared/data/golden-uml/SOURCE.md`.
 */
import type { Cardinality } from '../../tasks/intent/vocabulary.ts';
import type { ExpectedEntity, ExpectedIntent, Relation } from '../../tasks/intent/intent.ts';
import type { PlantUmlDiagram, PlantUmlRelation } from './plantuml.ts';
import { characterCount } from '../../text/characters.ts';

/** What a diagram became, with everything that was left out and why. */
export interface UmlMapping {
  /** Entities and relations; never appType, roles, behaviours or projections. */
  expected: ExpectedIntent;
  entityCount: number;
  relationCount: number;
  /** What could not be read or mapped, one line each. */
  skipped: string[];
  /** Mapping decisions worth knowing (enums, implicit classes, aggregation, missing cardinalities). */
  notes: string[];
}

const MAX_NAME_CHARACTERS = 80;

/** Upper bound of a UML multiplicity: `one` (1), `many` (above 1) or undefined when unreadable. */
export function multiplicityBound(text: string | undefined): 'one' | 'many' | undefined {
  if (text === undefined) return undefined;
  const match = /^\s*(\d+|\*|[nNmM])\s*(?:\.\.\s*(\d+|\*|[nNmM])\s*)?$/.exec(text);
  if (match === null) return undefined;
  const lower = match[1] ?? '';
  const upper = match[2] ?? lower;
  if (/^[*nNmM]$/.test(upper)) return 'many';
  const upperValue = Number(upper);
  if (/^\d+$/.test(lower) && Number(lower) > upperValue) return undefined;
  if (upperValue === 1) return 'one';
  return upperValue > 1 ? 'many' : undefined;
}

/** Cardinality read from `from` to `to`, given the multiplicities written at each end. */
export function cardinalityOf(
  fromMultiplicity: string | undefined,
  toMultiplicity: string | undefined,
): Cardinality | undefined {
  const fromBound = multiplicityBound(fromMultiplicity);
  const toBound = multiplicityBound(toMultiplicity);
  if (fromBound === undefined || toBound === undefined) return undefined;
  if (fromBound === 'one') return toBound === 'one' ? 'one_to_one' : 'one_to_many';
  return toBound === 'one' ? 'many_to_one' : 'many_to_many';
}

function describe(relation: PlantUmlRelation): string {
  return `line ${relation.line}: ${relation.kind} ${relation.from} → ${relation.to}`;
}

/** Maps a parsed diagram onto entities and relations (see the module table). */
export function umlDiagramToExpectedIntent(diagram: PlantUmlDiagram): UmlMapping {
  const state: MappingState = {
    diagram,
    skipped: diagram.unread.map((item) => `line ${item.line}: ${item.reason}: ${item.text}`),
    notes: [],
    entities: [],
    entityNames: new Set(),
    relations: [],
    seen: new Set(),
    withoutCardinality: 0,
    aggregations: 0,
  };
  mapClasses(state);
  for (const relation of diagram.relations) mapRelation(state, relation);
  for (const associationClass of diagram.associationClasses) mapAssociationClass(state, associationClass);
  const { notes, entities, relations } = state;
  if (state.aggregations > 0) notes.push(`${state.aggregations} aggregation(s) read as association`);
  if (state.withoutCardinality > 0) {
    notes.push(
      `${state.withoutCardinality} relation(s) without a readable multiplicity on both ends: cardinality left out`,
    );
  }
  return {
    expected: { entities, relations },
    entityCount: entities.length,
    relationCount: relations.length,
    skipped: state.skipped,
    notes,
  };
}

/** What mapping one diagram accumulates. */
interface MappingState {
  diagram: PlantUmlDiagram;
  skipped: string[];
  notes: string[];
  entities: ExpectedEntity[];
  entityNames: Set<string>;
  relations: Relation[];
  /** Keys of the relations added (from, to, kind, cardinality). */
  seen: Set<string>;
  withoutCardinality: number;
  aggregations: number;
}

/** Classes (not interfaces) with a usable name become entities; notes on implicit and abstract classes and enums. */
function mapClasses(state: MappingState): void {
  const { diagram, notes } = state;
  for (const cls of diagram.classes) {
    if (cls.keyword === 'interface') {
      notes.push(`interface ${cls.name} is not an entity`);
      continue;
    }
    const name = cls.name.trim();
    if (name === '' || characterCount(name) > MAX_NAME_CHARACTERS) {
      state.skipped.push(
        `line ${cls.line}: class name "${name}" is empty or longer than ${MAX_NAME_CHARACTERS} characters`,
      );
      continue;
    }
    const alias = cls.alias?.trim();
    const usableAlias =
      alias !== undefined && alias !== '' && alias !== name && characterCount(alias) <= MAX_NAME_CHARACTERS;
    state.entities.push({ name, ...(usableAlias ? { aliases: [alias] } : {}) });
    state.entityNames.add(name);
  }
  const implicit = diagram.classes.filter((cls) => cls.implicit).map((cls) => cls.name);
  if (implicit.length > 0)
    notes.push(`classes drawn only by links (no declaration), kept as entities: ${implicit.join(', ')}`);
  const abstract = diagram.classes.filter((cls) => cls.abstract).map((cls) => cls.name);
  if (abstract.length > 0) notes.push(`abstract classes kept as entities: ${abstract.join(', ')}`);
  if (diagram.enums.length > 0) {
    notes.push(`enums are value sets, not entities: ${diagram.enums.map((item) => item.name).join(', ')}`);
  }
}

/** Adds a relation unless the same one (from, to, kind, cardinality) is already there. */
function addRelation(state: MappingState, relation: Relation): void {
  const key = JSON.stringify([relation.from, relation.to, relation.kind, relation.cardinality]);
  if (state.seen.has(key)) return;
  state.seen.add(key);
  state.relations.push(relation);
}

/** Why a name is not an entity (an enum, or not one at all); undefined when it is one. */
function missingEntity(state: MappingState, name: string): string | undefined {
  if (state.entityNames.has(name)) return undefined;
  if (state.diagram.enums.some((item) => item.name === name)) return `${name} is an enum`;
  return `${name} is not an entity`;
}

function mapRelation(state: MappingState, relation: PlantUmlRelation): void {
  if (relation.hidden) {
    state.notes.push(`${describe(relation)} is a hidden layout link, skipped`);
    return;
  }
  if (relation.kind === 'dependency') {
    state.skipped.push(`${describe(relation)}: a dependency is not a structural relation`);
    return;
  }
  const problem = missingEntity(state, relation.from) ?? missingEntity(state, relation.to);
  if (problem !== undefined) {
    state.skipped.push(`${describe(relation)}: ${problem}`);
    return;
  }
  if (relation.kind === 'inheritance') {
    addRelation(state, { from: relation.from, to: relation.to, kind: 'is_a' });
    return;
  }
  if (relation.kind === 'aggregation') state.aggregations += 1;
  const cardinality = cardinalityOf(relation.fromMultiplicity, relation.toMultiplicity);
  if (cardinality === undefined) {
    state.withoutCardinality += 1;
    const unreadable = [relation.fromMultiplicity, relation.toMultiplicity].filter(
      (text) => text !== undefined && multiplicityBound(text) === undefined,
    );
    if (unreadable.length > 0)
      state.notes.push(
        `${describe(relation)}: multiplicity ${unreadable.map((text) => `"${text}"`).join(', ')} not understood`,
      );
  }
  addRelation(state, {
    from: relation.from,
    to: relation.to,
    kind: relation.kind === 'composition' ? 'composition' : 'association',
    ...(cardinality === undefined ? {} : { cardinality }),
  });
}

function mapAssociationClass(
  state: MappingState,
  associationClass: PlantUmlDiagram['associationClasses'][number],
): void {
  const { notes } = state;
  const { cls, ends, line } = associationClass;
  const problem = missingEntity(state, cls) ?? missingEntity(state, ends[0]) ?? missingEntity(state, ends[1]);
  if (problem !== undefined) {
    state.skipped.push(`line ${line}: association class ${cls} of (${ends.join(', ')}): ${problem}`);
    return;
  }
  const base = state.diagram.relations.filter(
    (relation) =>
      !relation.hidden &&
      relation.kind !== 'inheritance' &&
      relation.kind !== 'dependency' &&
      ((relation.from === ends[0] && relation.to === ends[1]) ||
        (relation.from === ends[1] && relation.to === ends[0])),
  );
  const only = base.length === 1 ? base[0] : undefined;
  const multiplicityAt = (end: string): string | undefined =>
    only === undefined ? undefined : only.from === end ? only.fromMultiplicity : only.toMultiplicity;
  if (only === undefined) {
    notes.push(
      `line ${line}: association class ${cls}: ${base.length} lines join ${ends.join(' and ')}, cardinality left out`,
    );
  }
  notes.push(`association class ${cls} of (${ends.join(', ')}) kept as an entity related to both ends`);
  for (const [end, otherEnd] of [
    [ends[0], ends[1]],
    [ends[1], ends[0]],
  ] as const) {
    const bound = multiplicityBound(multiplicityAt(otherEnd));
    const cardinality: Cardinality | undefined =
      bound === undefined ? undefined : bound === 'many' ? 'many_to_one' : 'one_to_one';
    if (cardinality === undefined) state.withoutCardinality += 1;
    addRelation(state, {
      from: cls,
      to: end,
      kind: 'association',
      ...(cardinality === undefined ? {} : { cardinality }),
    });
  }
}
