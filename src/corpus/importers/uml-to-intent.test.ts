import { describe, expect, it } from 'vitest';
import { parsePlantUml } from './plantuml.ts';
import { cardinalityOf, multiplicityBound, umlDiagramToExpectedIntent } from './uml-to-intent.ts';

describe('multiplicityBound', () => {
  it.each([
    ['1', 'one'],
    ['0..1', 'one'],
    ['1..1', 'one'],
    ['*', 'many'],
    ['0..*', 'many'],
    ['1..*', 'many'],
    ['n', 'many'],
    ['0..n', 'many'],
    ['2..4', 'many'],
    ['4', 'many'],
    [' 1 .. * ', 'many'],
    ['0', undefined],
    ['3..1', undefined],
    ['0..1*', undefined],
    ['many', undefined],
    [undefined, undefined],
  ])('%s → %s', (text, bound) => {
    expect(multiplicityBound(text)).toBe(bound);
  });
});

describe('cardinalityOf', () => {
  it('reads from → to: one `from` with many `to` is one_to_many', () => {
    expect(cardinalityOf('1', '0..*')).toBe('one_to_many');
    expect(cardinalityOf('0..*', '1')).toBe('many_to_one');
    expect(cardinalityOf('0..1', '1')).toBe('one_to_one');
    expect(cardinalityOf('*', '1..*')).toBe('many_to_many');
    expect(cardinalityOf(undefined, '*')).toBeUndefined();
    expect(cardinalityOf('1', 'lots')).toBeUndefined();
  });
});

describe('umlDiagramToExpectedIntent', () => {
  const diagram = parsePlantUml(
    [
      '@startuml',
      'abstract class Person',
      'class Member',
      'class "Loan Record" as LR',
      'class Book',
      'interface Lendable',
      'enum Genre { FICTION, SCIENCE }',
      'Person <|-- Member',
      'Member "1" -- "0..*" LR : borrows',
      'LR "*" -- "1" Book',
      'Book "1" *-- "1..*" Copy',
      'Library o-- "*" Book',
      'Book --> Genre',
      'Book ..|> Lendable',
      'Book ..> Catalogue',
      'Book -[hidden]- Member',
      'Member "*" -- "*" Club',
      '(Member, Club) .. Membership',
      'Member "1" -- "1" Member',
      'Member "1" -- "1" Member',
      'Book "1" -- "0..1*" Review',
      '@enduml',
    ].join('\n'),
  );
  const mapping = umlDiagramToExpectedIntent(diagram);

  it('makes classes, abstract classes, implicit classes and association classes entities; not enums or interfaces', () => {
    expect(mapping.expected.entities).toEqual([
      { name: 'Person' },
      { name: 'Member' },
      { name: 'Loan Record', aliases: ['LR'] },
      { name: 'Book' },
      { name: 'Copy' },
      { name: 'Library' },
      { name: 'Catalogue' },
      { name: 'Club' },
      { name: 'Membership' },
      { name: 'Review' },
    ]);
    expect(mapping.entityCount).toBe(10);
    expect(mapping.expected.entities?.every((entity) => !('role' in entity))).toBe(true);
    expect(mapping.notes).toContain('enums are value sets, not entities: Genre');
    expect(mapping.notes).toContain('interface Lendable is not an entity');
    expect(mapping.notes).toContain('abstract classes kept as entities: Person');
  });

  it('maps inheritance to is_a, aggregation to association, composition whole → part, with cardinalities', () => {
    expect(mapping.expected.relations).toEqual([
      { from: 'Member', to: 'Person', kind: 'is_a' },
      { from: 'Member', to: 'Loan Record', kind: 'association', cardinality: 'one_to_many' },
      { from: 'Loan Record', to: 'Book', kind: 'association', cardinality: 'many_to_one' },
      { from: 'Book', to: 'Copy', kind: 'composition', cardinality: 'one_to_many' },
      { from: 'Library', to: 'Book', kind: 'association' },
      { from: 'Member', to: 'Club', kind: 'association', cardinality: 'many_to_many' },
      { from: 'Member', to: 'Member', kind: 'association', cardinality: 'one_to_one' },
      { from: 'Book', to: 'Review', kind: 'association' },
      { from: 'Membership', to: 'Member', kind: 'association', cardinality: 'many_to_one' },
      { from: 'Membership', to: 'Club', kind: 'association', cardinality: 'many_to_one' },
    ]);
    expect(mapping.relationCount).toBe(10);
    expect(mapping.notes).toContain('1 aggregation(s) read as association');
    expect(mapping.notes.some((note) => note.includes('"0..1*" not understood'))).toBe(true);
  });

  it('skips dependencies, links to enums and interfaces, and hidden links, saying so', () => {
    expect(mapping.skipped).toEqual([
      'line 13: association Book → Genre: Genre is an enum',
      'line 14: inheritance Book → Lendable: Lendable is not an entity',
      'line 15: dependency Book → Catalogue: a dependency is not a structural relation',
    ]);
    expect(mapping.notes).toContain('line 16: association Book → Member is a hidden layout link, skipped');
  });

  it('reports unread diagram lines as skipped', () => {
    const result = umlDiagramToExpectedIntent(parsePlantUml('class A\nA +-- B\n'));
    expect(result.skipped).toEqual(['line 2: arrow head + is not read: A +-- B']);
  });

  it('relates an association class one-to-one to an end whose opposite multiplicity is one', () => {
    const result = umlDiagramToExpectedIntent(
      parsePlantUml('Ward "1" -- "0..*" Bed\n(Ward, Bed) .. Allocation\nA -- B\nA -- B\n(A, B) .. C\n'),
    );
    expect(result.expected.relations).toContainEqual({
      from: 'Allocation',
      to: 'Ward',
      kind: 'association',
      cardinality: 'many_to_one',
    });
    expect(result.expected.relations).toContainEqual({
      from: 'Allocation',
      to: 'Bed',
      kind: 'association',
      cardinality: 'one_to_one',
    });
    expect(result.expected.relations).toContainEqual({ from: 'C', to: 'A', kind: 'association' });
    expect(result.notes).toContain('line 5: association class C: 2 lines join A and B, cardinality left out');
  });
});
