import { describe, expect, it } from 'vitest';
import { parsePlantUml, type PlantUmlDiagram, type PlantUmlRelation } from './plantuml.ts';

function wrap(...lines: string[]): string {
  return ['@startuml', ...lines, '@enduml'].join('\n');
}

function relation(diagram: PlantUmlDiagram, index = 0): PlantUmlRelation {
  const found = diagram.relations[index];
  if (found === undefined) throw new Error(`no relation ${index}: ${JSON.stringify(diagram)}`);
  return found;
}

describe('parsePlantUml: declarations', () => {
  it('reads class, abstract class, abstract, interface and entity declarations with their lines', () => {
    const diagram = parsePlantUml(
      wrap('class Clinic', 'abstract class Person', 'abstract Account', 'interface Billable', 'entity Visit'),
    );
    expect(diagram.classes.map((cls) => [cls.name, cls.keyword, cls.abstract, cls.line])).toEqual([
      ['Clinic', 'class', false, 2],
      ['Person', 'abstract class', true, 3],
      ['Account', 'abstract', true, 4],
      ['Billable', 'interface', false, 5],
      ['Visit', 'entity', false, 6],
    ]);
    expect(diagram.classes.every((cls) => !cls.implicit)).toBe(true);
    expect(diagram.unread).toEqual([]);
  });

  it('reads multi-line bodies: attributes, methods, modifiers and separators', () => {
    const diagram = parsePlantUml(
      wrap(
        'class Invoice {',
        '  -String number',
        '  +total(): Money',
        '  {static} int counter',
        '  {method} send',
        '  --',
        '  .. payment ..',
        '  Date issuedOn',
        '}',
        'class Empty {}',
        'class Inline { dueDate: Date }',
      ),
    );
    const invoice = diagram.classes.find((cls) => cls.name === 'Invoice');
    expect(invoice?.attributes).toEqual(['-String number', '{static} int counter', 'Date issuedOn']);
    expect(invoice?.methods).toEqual(['+total(): Money', '{method} send']);
    expect(diagram.classes.find((cls) => cls.name === 'Empty')?.attributes).toEqual([]);
    expect(diagram.classes.find((cls) => cls.name === 'Inline')?.attributes).toEqual(['dueDate: Date']);
    expect(diagram.unread).toEqual([]);
  });

  it('reads enums as value sets, not classes: one value per line, comma lists and inline bodies', () => {
    const diagram = parsePlantUml(
      wrap(
        'enum VisitStatus <<enum>> {',
        '  Planned',
        '  Done,',
        '  Cancelled = 3',
        '  ...',
        '}',
        'enum Size { SMALL, LARGE }',
      ),
    );
    expect(diagram.classes).toEqual([]);
    expect(diagram.enums.map((item) => [item.name, item.values, item.stereotypes, item.line])).toEqual([
      ['VisitStatus', ['Planned', 'Done', 'Cancelled'], ['enum'], 2],
      ['Size', ['SMALL', 'LARGE'], [], 8],
    ]);
  });

  it('reads stereotypes, generics, colours and extends/implements in a declaration', () => {
    const diagram = parsePlantUml(
      wrap(
        'class Therapist<T> <<Person>> <<(P,#FF7700) Staff>> #lightblue extends Employee implements Billable, Rated {',
        '}',
      ),
    );
    const therapist = diagram.classes[0];
    expect(therapist?.name).toBe('Therapist');
    expect(therapist?.stereotypes).toEqual(['Person', 'Staff']);
    expect(diagram.relations.map((item) => [item.from, item.kind, item.to])).toEqual([
      ['Therapist', 'inheritance', 'Employee'],
      ['Therapist', 'inheritance', 'Billable'],
      ['Therapist', 'inheritance', 'Rated'],
    ]);
    expect(diagram.unread).toEqual([]);
  });

  it('reads quoted names with aliases both ways and resolves links through the alias', () => {
    const diagram = parsePlantUml(
      wrap(
        'class "Treatment Plan" as TP',
        'class RX as "Prescription Line"',
        'TP "1" *-- "*" RX',
        '"Treatment Plan" --> Patient',
      ),
    );
    expect(diagram.classes.map((cls) => [cls.name, cls.alias])).toEqual([
      ['Treatment Plan', 'TP'],
      ['Prescription Line', 'RX'],
      ['Patient', undefined],
    ]);
    expect(relation(diagram, 0)).toMatchObject({
      from: 'Treatment Plan',
      to: 'Prescription Line',
      kind: 'composition',
    });
    expect(relation(diagram, 1)).toMatchObject({ from: 'Treatment Plan', to: 'Patient', kind: 'association' });
  });

  it('adds members written as `Name : member` and creates the class when needed', () => {
    const diagram = parsePlantUml(wrap('class Room', 'Room : int capacity', 'Room : book()', 'Desk : String label'));
    expect(diagram.classes.find((cls) => cls.name === 'Room')).toMatchObject({
      attributes: ['int capacity'],
      methods: ['book()'],
    });
    expect(diagram.classes.find((cls) => cls.name === 'Desk')).toMatchObject({
      implicit: true,
      attributes: ['String label'],
    });
  });

  it('merges a class that is declared twice and a link-created class that is declared later', () => {
    const diagram = parsePlantUml(wrap('Ward -- Bed', 'class Ward', 'class Ward {', '  int floor', '}'));
    expect(diagram.classes.map((cls) => [cls.name, cls.implicit, cls.line])).toEqual([
      ['Ward', false, 3],
      ['Bed', true, 2],
    ]);
  });
});

describe('parsePlantUml: links', () => {
  it.each([
    ['Clinic -- Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic .. Room', 'association', 'Clinic', 'Room', 'dashed'],
    ['Clinic --> Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic <-- Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic - Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic --x Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic o-- Room', 'aggregation', 'Clinic', 'Room', 'solid'],
    ['Clinic --o Room', 'aggregation', 'Room', 'Clinic', 'solid'],
    ['Clinic *-- Room', 'composition', 'Clinic', 'Room', 'solid'],
    ['Clinic --* Room', 'composition', 'Room', 'Clinic', 'solid'],
    ['Clinic -* Room', 'composition', 'Room', 'Clinic', 'solid'],
    ['Clinic *-> Room', 'composition', 'Clinic', 'Room', 'solid'],
    ['Clinic <|-- Room', 'inheritance', 'Room', 'Clinic', 'solid'],
    ['Clinic --|> Room', 'inheritance', 'Clinic', 'Room', 'solid'],
    ['Clinic -|> Room', 'inheritance', 'Clinic', 'Room', 'solid'],
    ['Clinic ..|> Room', 'inheritance', 'Clinic', 'Room', 'dashed'],
    ['Clinic <|.. Room', 'inheritance', 'Room', 'Clinic', 'dashed'],
    ['Clinic ..> Room', 'dependency', 'Clinic', 'Room', 'dashed'],
    ['Clinic <.. Room', 'dependency', 'Room', 'Clinic', 'dashed'],
    ['Clinic -up-> Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic -left-|> Room', 'inheritance', 'Clinic', 'Room', 'solid'],
    ['Clinic .d.> Room', 'dependency', 'Clinic', 'Room', 'dashed'],
    ['Clinic -[#red,bold]-> Room', 'association', 'Clinic', 'Room', 'solid'],
    ['Clinic*--Room', 'composition', 'Clinic', 'Room', 'solid'],
  ])('%s → %s from %s to %s (%s)', (line, kind, from, to, lineStyle) => {
    const diagram = parsePlantUml(wrap(line));
    expect(diagram.unread).toEqual([]);
    expect(relation(diagram)).toMatchObject({ kind, from, to, lineStyle, hidden: false, line: 2 });
  });

  it('reads multiplicities on either side, with or without spaces, and keeps them with their end', () => {
    const diagram = parsePlantUml(
      wrap(
        'Clinic "1" -- "0..*" Room',
        'Clinic"1"--"1..*"Doctor',
        'Clinic --> "4" Nurse',
        'Patient "*" --* "1" Clinic',
      ),
    );
    expect(relation(diagram, 0)).toMatchObject({
      from: 'Clinic',
      to: 'Room',
      fromMultiplicity: '1',
      toMultiplicity: '0..*',
    });
    expect(relation(diagram, 1)).toMatchObject({
      from: 'Clinic',
      to: 'Doctor',
      fromMultiplicity: '1',
      toMultiplicity: '1..*',
    });
    expect(relation(diagram, 2)).toMatchObject({ from: 'Clinic', to: 'Nurse', toMultiplicity: '4' });
    expect(relation(diagram, 2).fromMultiplicity).toBeUndefined();
    // composition normalised to whole → part: the multiplicities travel with their ends
    expect(relation(diagram, 3)).toMatchObject({
      from: 'Clinic',
      to: 'Patient',
      fromMultiplicity: '1',
      toMultiplicity: '*',
    });
  });

  it('reads labels after a colon and drops reading-direction markers', () => {
    const diagram = parsePlantUml(
      wrap(
        'Doctor "1" -- "*" Patient : treats >',
        'Doctor -- Nurse : < supervises',
        'Doctor -- Ward: heads',
        'Doctor <|-- Surgeon : {disjoint}',
      ),
    );
    expect(diagram.relations.map((item) => item.label)).toEqual(['treats', 'supervises', 'heads', '{disjoint}']);
  });

  it('marks hidden layout links', () => {
    const diagram = parsePlantUml(wrap('Doctor -[hidden]- Nurse', 'Doctor -[hidden]down- Ward'));
    expect(diagram.relations.map((item) => item.hidden)).toEqual([true, true]);
  });

  it('creates implicit classes for names only links use', () => {
    const diagram = parsePlantUml(wrap('class Doctor', 'Doctor -- Shift', 'Shift -- Doctor'));
    expect(diagram.classes.map((cls) => [cls.name, cls.implicit, cls.line])).toEqual([
      ['Doctor', false, 2],
      ['Shift', true, 3],
    ]);
  });

  it('reads association classes written either way, with one or two dots, and creates undeclared ones', () => {
    const diagram = parsePlantUml(
      wrap(
        'class Enrolment',
        'Student "*" -- "*" Course',
        '(Student, Course) .. Enrolment',
        'Student "*" - "*" Club',
        'Membership . (Student,Club)',
        '(Course,Club)--Sponsorship',
      ),
    );
    expect(diagram.associationClasses).toEqual([
      { ends: ['Student', 'Course'], cls: 'Enrolment', line: 4 },
      { ends: ['Student', 'Club'], cls: 'Membership', line: 6 },
      { ends: ['Course', 'Club'], cls: 'Sponsorship', line: 7 },
    ]);
    expect(diagram.classes.find((cls) => cls.name === 'Membership')?.implicit).toBe(true);
    expect(diagram.relations).toHaveLength(2);
  });
});

describe('parsePlantUml: notes, packages and layout statements', () => {
  it('reads single-line notes, note blocks, floating notes and their links, without making classes', () => {
    const diagram = parsePlantUml(
      wrap(
        'class Loan',
        'note right of Loan : at most 3 per member',
        'note left of Loan',
        '  due in 21 days',
        '  renewable once',
        'end note',
        'note top : about the last class',
        'note "{XOR}" as N1',
        '(Loan, Member) .. N1',
        'N1 .. Reservation',
        'note as N2',
        '  floating block',
        'endnote',
        'Loan -- Member',
        'note on link : one member per loan',
      ),
    );
    expect(diagram.notes.map((note) => [note.text, note.alias, note.attachedTo])).toEqual([
      ['at most 3 per member', undefined, [{ kind: 'element', name: 'Loan' }]],
      ['due in 21 days\nrenewable once', undefined, [{ kind: 'element', name: 'Loan' }]],
      ['about the last class', undefined, [{ kind: 'element', name: 'Loan' }]],
      [
        '{XOR}',
        'N1',
        [
          { kind: 'association', ends: ['Loan', 'Member'] },
          { kind: 'element', name: 'Reservation' },
        ],
      ],
      ['floating block', 'N2', []],
      ['one member per loan', undefined, [{ kind: 'link', line: 15 }]],
    ]);
    expect(diagram.associationClasses).toEqual([]);
    expect(diagram.classes.map((cls) => cls.name)).not.toContain('N1');
    expect(diagram.relations).toHaveLength(1);
    expect(diagram.unread).toEqual([]);
  });

  it('reads nested packages and namespaces, with quoted names, stereotypes and `end package`', () => {
    const diagram = parsePlantUml(
      wrap(
        'package "Front Desk" as FD <<Folder>> {',
        '  class Booking',
        '  namespace billing.core {',
        '    class Invoice',
        '  }',
        '}',
        'package archive',
        '  class OldBooking',
        'end package',
        'together {',
        '  class Room',
        '}',
        'class billing.Payment',
      ),
    );
    expect(diagram.packages.map((item) => [item.name, item.alias, item.keyword, item.parent])).toEqual([
      ['Front Desk', 'FD', 'package', undefined],
      ['billing.core', undefined, 'namespace', 'Front Desk'],
      ['archive', undefined, 'package', undefined],
    ]);
    expect(diagram.classes.map((cls) => [cls.name, cls.package])).toEqual([
      ['Booking', 'Front Desk'],
      ['Invoice', 'Front Desk.billing.core'],
      ['OldBooking', 'archive'],
      ['Room', undefined],
      ['Payment', 'billing'],
    ]);
    expect(diagram.unread).toEqual([]);
  });

  it('skips skinparams (single and blocks), hide/show, directions, styles, legends and reads the title', () => {
    const diagram = parsePlantUml(
      wrap(
        'title Clinic model',
        'skinparam classAttributeIconSize 0',
        'skinparam class {',
        '  BackgroundColor White',
        '  ArrowColor Black',
        '}',
        'hide empty members',
        'hide circle',
        'show Patient methods',
        'left to right direction',
        'scale 2',
        '<style>',
        'classDiagram { FontSize 12 }',
        '</style>',
        'legend right',
        '  a legend',
        'endlegend',
        'header draft',
        'class Patient',
      ),
    );
    expect(diagram.title).toBe('Clinic model');
    expect(diagram.classes.map((cls) => cls.name)).toEqual(['Patient']);
    expect(diagram.unread).toEqual([]);
  });

  it("ignores ' comments and /' block comments '/, inline or over several lines", () => {
    const diagram = parsePlantUml(
      wrap(
        "' class Hidden",
        "/' class AlsoHidden",
        "   class StillHidden '/",
        "class Visible /' trailing '/",
        "  ' indented comment",
      ),
    );
    expect(diagram.classes.map((cls) => cls.name)).toEqual(['Visible']);
    expect(diagram.unread).toEqual([]);
  });

  it('reads text without @startuml as a diagram, and CRLF line ends', () => {
    const diagram = parsePlantUml('class Ward\r\nclass Bed\r\nWard "1" -- "*" Bed\r\n');
    expect(diagram.classes.map((cls) => cls.name)).toEqual(['Ward', 'Bed']);
    expect(relation(diagram)).toMatchObject({ fromMultiplicity: '1', toMultiplicity: '*', line: 3 });
  });
});

describe('parsePlantUml: what it cannot read is reported, never guessed', () => {
  it('lists unreadable lines with their line number and a reason', () => {
    const diagram = parsePlantUml(
      [
        'stray text before the diagram',
        '@startuml',
        'class Ward',
        'Ward +-- Bed',
        'Ward <|--* Bed',
        '(Ward, Bed) --> Stay',
        '(Ward, Bed) .. (Bed, Ward)',
        'object ward1',
        '!include common.puml',
        'this is not plantuml',
        'Ward -- Bed <<stereotyped link>>',
        'class',
        '}',
        '@enduml',
      ].join('\n'),
    );
    expect(diagram.unread.map((item) => [item.line, item.reason])).toEqual([
      [1, 'outside @startuml … @enduml'],
      [4, 'arrow head + is not read'],
      [5, 'conflicting arrow heads "<|" and "*"'],
      [6, 'an association-class link must be a plain line (no arrow head)'],
      [7, 'both ends are association tuples'],
      [8, "'object' declarations are not read (not a class or enum)"],
      [9, 'preprocessor directive not evaluated'],
      [10, 'statement not recognised'],
      [11, 'link not read'],
      [12, 'class declaration without a readable name'],
      [13, 'closing a block that is not open'],
    ]);
    expect(diagram.unread[1]?.text).toBe('Ward +-- Bed');
    expect(diagram.relations).toEqual([]);
  });

  it('reports unclosed bodies, notes, packages and block comments', () => {
    expect(parsePlantUml(wrap('class Ward {', '  int floor')).unread.map((item) => item.reason)).toEqual([
      'body not closed before the end of the diagram',
    ]);
    expect(parsePlantUml(wrap('note as N1', '  text')).unread.map((item) => item.reason)).toEqual([
      'note block not closed with end note',
    ]);
    expect(parsePlantUml(wrap('package ward {', 'class Bed')).unread.map((item) => item.line)).toEqual([2]);
    expect(parsePlantUml(wrap("/' open", 'class Bed')).unread.map((item) => item.reason)).toEqual([
      "block comment not closed with '/",
    ]);
  });

  it('refuses a name declared both as a class and as an enum', () => {
    const diagram = parsePlantUml(wrap('class Status', 'enum Status { A }'));
    expect(diagram.unread.map((item) => item.reason)).toEqual(['Status is declared both as a class and as an enum']);
  });
});
