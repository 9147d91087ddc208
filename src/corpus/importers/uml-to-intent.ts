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
  const skipped = diagram.unread.map((item) => `line ${item.line}: ${item.reason}: ${item.text}`);
  const notes: string[] = [];
  const entities: ExpectedEntity[] = [];
  const entityNames = new Set<string>();

  for (const cls of diagram.classes) {
    if (cls.keyword === 'interface') {
      notes.push(`interface ${cls.name} is not an entity`);
      continue;
    }
    const name = cls.name.trim();
    if (name === '' || characterCount(name) > MAX_NAME_CHARACTERS) {
      skipped.push(`line ${cls.line}: class name "${name}" is empty or longer than ${MAX_NAME_CHARACTERS} characters`);
      continue;
    }
    const alias = cls.alias?.trim();
    const usableAlias =
      alias !== undefined && alias !== '' && alias !== name && characterCount(alias) <= MAX_NAME_CHARACTERS;
    entities.push({ name, ...(usableAlias ? { aliases: [alias] } : {}) });
    entityNames.add(name);
  }
  const implicit = diagram.classes.filter((cls) => cls.implicit).map((cls) => cls.name);
  if (implicit.length > 0)
    notes.push(`classes drawn only by links (no declaration), kept as entities: ${implicit.join(', ')}`);
  const abstract = diagram.classes.filter((cls) => cls.abstract).map((cls) => cls.name);
  if (abstract.length > 0) notes.push(`abstract classes kept as entities: ${abstract.join(', ')}`);
  if (diagram.enums.length > 0) {
    notes.push(`enums are value sets, not entities: ${diagram.enums.map((item) => item.name).join(', ')}`);
  }

  const relations: Relation[] = [];
  const seen = new Set<string>();
  let withoutCardinality = 0;
  let aggregations = 0;
  const add = (relation: Relation): void => {
    const key = JSON.stringify([relation.from, relation.to, relation.kind, relation.cardinality]);
    if (seen.has(key)) return;
    seen.add(key);
    relations.push(relation);
  };
  const missing = (name: string): string | undefined => {
    if (entityNames.has(name)) return undefined;
    if (diagram.enums.some((item) => item.name === name)) return `${name} is an enum`;
    return `${name} is not an entity`;
  };

  for (const relation of diagram.relations) {
    if (relation.hidden) {
      notes.push(`${describe(relation)} is a hidden layout link, skipped`);
      continue;
    }
    if (relation.kind === 'dependency') {
      skipped.push(`${describe(relation)}: a dependency is not a structural relation`);
      continue;
    }
    const problem = missing(relation.from) ?? missing(relation.to);
    if (problem !== undefined) {
      skipped.push(`${describe(relation)}: ${problem}`);
      continue;
    }
    if (relation.kind === 'inheritance') {
      add({ from: relation.from, to: relation.to, kind: 'is_a' });
      continue;
    }
    if (relation.kind === 'aggregation') aggregations += 1;
    const cardinality = cardinalityOf(relation.fromMultiplicity, relation.toMultiplicity);
    if (cardinality === undefined) {
      withoutCardinality += 1;
      const unreadable = [relation.fromMultiplicity, relation.toMultiplicity].filter(
        (text) => text !== undefined && multiplicityBound(text) === undefined,
      );
      if (unreadable.length > 0)
        notes.push(
          `${describe(relation)}: multiplicity ${unreadable.map((text) => `"${text}"`).join(', ')} not understood`,
        );
    }
    add({
      from: relation.from,
      to: relation.to,
      kind: relation.kind === 'composition' ? 'composition' : 'association',
      ...(cardinality === undefined ? {} : { cardinality }),
    });
  }

  for (const associationClass of diagram.associationClasses) {
    const { cls, ends, line } = associationClass;
    const problem = missing(cls) ?? missing(ends[0]) ?? missing(ends[1]);
    if (problem !== undefined) {
      skipped.push(`line ${line}: association class ${cls} of (${ends.join(', ')}): ${problem}`);
      continue;
    }
    const base = diagram.relations.filter(
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
      if (cardinality === undefined) withoutCardinality += 1;
      add({ from: cls, to: end, kind: 'association', ...(cardinality === undefined ? {} : { cardinality }) });
    }
  }
  if (aggregations > 0) notes.push(`${aggregations} aggregation(s) read as association`);
  if (withoutCardinality > 0) {
    notes.push(`${withoutCardinality} relation(s) without a readable multiplicity on both ends: cardinality left out`);
  }
  return {
    expected: { entities, relations },
    entityCount: entities.length,
    relationCount: relations.length,
    skipped,
    notes,
  };
}
