import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exampleSchema } from '../intent-example.ts';
import { importGoldenUml, importGoldenUmlCase, parseCaseMetadata } from './golden-uml.ts';

// A hand-written case in the ModelSet's layout (not taken from the ModelSet).
const CASE = {
  caseId: 'VetClinic',
  description: [
    'Create a UML class diagram for the following case.',
    'A vet clinic treats pets. Each pet belongs to one owner, and owners book visits for their pets.',
    'A visit ends with an invoice.',
  ].join('\n'),
  plantUml: [
    '@startuml',
    'class Owner {',
    '  String name',
    '}',
    'class Pet',
    'abstract class Staff',
    'class Vet',
    'enum Species { DOG, CAT }',
    'Owner "1" -- "0..*" Pet',
    'Pet "*" - "*" Vet',
    '(Pet, Vet) .. Visit',
    'Visit "1" *-- "0..1" Invoice',
    'Staff <|-- Vet',
    'Pet --> Species',
    '@enduml',
  ].join('\n'),
  metadata: 'name: VetClinic\nlanguage: English\ndomain: Healthcare \nsource: hand-written\n',
};

describe('parseCaseMetadata', () => {
  it('reads key: value lines with trimmed values and lower-case keys', () => {
    expect(parseCaseMetadata('Name: X\ndomain: Leisure and Recreation \ncitation:\n')).toEqual({
      name: 'X',
      domain: 'Leisure and Recreation',
      citation: '',
    });
  });
});

describe('importGoldenUmlCase', () => {
  const { example, report } = importGoldenUmlCase(CASE);

  it('produces a valid shadow example with id, tags and partial gold (no appType, roles or behaviours)', () => {
    expect(example).toBeDefined();
    expect(exampleSchema.safeParse(example).success).toBe(true);
    expect(example?.id).toBe('golden-uml:VetClinic');
    expect(example?.partition).toBe('shadow');
    expect(example?.tags).toEqual(['source:golden-uml', 'domain:healthcare']);
    expect(example?.expected.appType).toBeUndefined();
    expect(example?.expected.behaviors).toBeUndefined();
    expect(example?.expected.projections).toBeUndefined();
    expect(example?.expected.entities?.map((entity) => entity.name)).toEqual([
      'Owner',
      'Pet',
      'Staff',
      'Vet',
      'Visit',
      'Invoice',
    ]);
    expect(example?.expected.relations).toContainEqual({ from: 'Vet', to: 'Staff', kind: 'is_a' });
    expect(example?.expected.relations).toContainEqual({
      from: 'Visit',
      to: 'Invoice',
      kind: 'composition',
      cardinality: 'one_to_one',
    });
  });

  it('strips exercise instructions from the goal and reports them', () => {
    expect(example?.goal.startsWith('A vet clinic treats pets.')).toBe(true);
    expect(example?.goal).not.toMatch(/class diagram/i);
    expect(report.stripped).toEqual([
      {
        line: 1,
        text: 'Create a UML class diagram for the following case.',
        reason: 'mentions the diagram to produce',
      },
    ]);
  });

  it('reports counts, enums, the association class and why appType is left out', () => {
    expect(report).toMatchObject({
      caseId: 'VetClinic',
      exampleId: 'golden-uml:VetClinic',
      domain: 'Healthcare',
      entityCount: 6,
    });
    expect(report.relationCount).toBe(example?.expected.relations?.length);
    expect(report.skipped).toEqual(['line 14: association Pet → Species: Species is an enum']);
    expect(report.notes.some((note) => note.startsWith('appType left out: domain "Healthcare"'))).toBe(true);
    expect(report.notes).toContain('enums are value sets, not entities: Species');
    expect(report.notes).toContain('association class Visit of (Pet, Vet) kept as an entity related to both ends');
  });

  it('uses a domain table entry when one is given, and says when a label is not in the table', () => {
    const mapped = importGoldenUmlCase(CASE, {
      domainAppTypes: { Healthcare: { appType: 'booking', reason: 'test table' } },
    });
    expect(mapped.example?.expected.appType).toBe('booking');
    const unknown = importGoldenUmlCase({ ...CASE, metadata: 'domain: Astronomy\n' });
    expect(unknown.example?.expected.appType).toBeUndefined();
    expect(unknown.report.notes).toContain('appType left out: domain "Astronomy" is not in the domain table');
  });

  it('produces no example, and says why, when a file is missing or nothing is left', () => {
    const noDiagram = importGoldenUmlCase({ caseId: 'A', description: 'A shop.', metadata: '' });
    expect(noDiagram.example).toBeUndefined();
    expect(noDiagram.report.skipped).toContain('plantuml.txt missing: no gold, no example');
    const onlyInstructions = importGoldenUmlCase({ ...CASE, description: 'Create a class diagram.' });
    expect(onlyInstructions.example).toBeUndefined();
    expect(onlyInstructions.report.skipped).toContain(
      'the description is empty once instructions are stripped: no example',
    );
    const onlyEnums = importGoldenUmlCase({ ...CASE, plantUml: 'enum Colour { RED }' });
    expect(onlyEnums.example).toBeUndefined();
    expect(onlyEnums.report.skipped).toContain('the diagram yields no entity');
  });

  it('sanitises folder names that are not valid ids', () => {
    const { example: renamed, report: renamedReport } = importGoldenUmlCase({ ...CASE, caseId: 'Vet Clinic (v2)' });
    expect(renamed?.id).toBe('golden-uml:Vet-Clinic--v2-');
    expect(renamedReport.notes).toContain('case folder name sanitised for the id: Vet-Clinic--v2-');
  });
});

describe('importGoldenUml', () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-golden-uml-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('reads every case folder, sorted, ignoring plain files', () => {
    for (const name of ['Zoo', 'VetClinic']) {
      mkdirSync(path.join(folder, name));
      writeFileSync(path.join(folder, name, 'description.md'), CASE.description);
      writeFileSync(path.join(folder, name, 'plantuml.txt'), CASE.plantUml);
      writeFileSync(path.join(folder, name, 'metadata.txt'), CASE.metadata);
    }
    writeFileSync(path.join(folder, 'README.md'), 'not a case');
    const { examples, reports } = importGoldenUml(folder);
    expect(reports.map((report) => report.caseId)).toEqual(['VetClinic', 'Zoo']);
    expect(examples.map((example) => example.id)).toEqual(['golden-uml:VetClinic', 'golden-uml:Zoo']);
  });
});
