import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import {
  createPatternLibrary,
  loadBuiltInPatternLibrary,
  loadPatternLibrary,
  parsePatternText,
  PatternLibraryError,
} from './pattern-library.ts';

const folders: string[] = [];
function folderWith(files: Record<string, string>): string {
  const folder = mkdtempSync(join(tmpdir(), 'kloop-patterns-'));
  folders.push(folder);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text, 'utf8');
  return folder;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function thrown(action: () => unknown): PatternLibraryError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(PatternLibraryError);
    return error as PatternLibraryError;
  }
  throw new Error('expected a PatternLibraryError');
}

const GOOD = `id: pet-grooming
title: Pet grooming
description: Owners book grooming for their pets.
appTypes: [booking]
entities:
  - name: Owner
    role: party
    fields:
      - { name: name, type: TEXT, required: true }
  - name: Grooming
    role: commitment
    aliases: [grooming appointment]
    fields:
      - { name: startsAt, type: DATETIME, required: true }
relations:
  - { from: Owner, to: Grooming, cardinality: one_to_many }
behaviors: [scheduling]
projections:
  - { kind: calendar, entity: Grooming }
`;

describe('built-in pattern library', () => {
  it('has at least 12 documented patterns with unique ids', () => {
    const library = loadBuiltInPatternLibrary();
    expect(library.patterns.length).toBeGreaterThanOrEqual(12);
    expect(new Set(library.patterns.map((pattern) => pattern.id)).size).toBe(library.patterns.length);
    for (const pattern of library.patterns) {
      expect(pattern.description.length).toBeGreaterThan(40);
      expect(library.sources[pattern.id]).toMatch(/\.ya?ml$/);
    }
    expect(library.patterns.map((pattern) => pattern.id)).toEqual(
      expect.arrayContaining([
        'booking',
        'marketplace',
        'crm',
        'inventory',
        'helpdesk',
        'project-tracking',
        'membership',
        'learning',
        'field-service',
        'expenses-approvals',
        'events',
        'content-publishing',
      ]),
    );
  });

  it('gives every commitment a time field', () => {
    for (const pattern of loadBuiltInPatternLibrary().patterns) {
      for (const entity of pattern.entities.filter((candidate) => candidate.role === 'commitment')) {
        expect(
          entity.fields.some((field) => field.type === 'DATE' || field.type === 'DATETIME'),
          `${pattern.id}.${entity.name}`,
        ).toBe(true);
      }
    }
  });
});

describe('user pattern folders', () => {
  it('adds a pattern dropped into a folder, after the built-ins, with defaults applied', () => {
    const folder = folderWith({ 'pet-grooming.yaml': GOOD, 'notes.txt': 'ignored' });
    const library = loadPatternLibrary([folder]);
    const added = library.patterns.find((pattern) => pattern.id === 'pet-grooming');
    expect(added?.relations[0]?.kind).toBe('association');
    expect(added?.entities[0]?.aliases).toEqual([]);
    expect(library.sources['pet-grooming']).toBe(join(folder, 'pet-grooming.yaml'));
    expect(library.patterns.at(-1)?.id).toBe('pet-grooming');
  });

  it('names file, line and field for a bad field', () => {
    const folder = folderWith({ 'bad.yaml': GOOD.replace('    role: commitment', '    role: appointment') });
    const error = thrown(() => loadPatternLibrary([folder]));
    expect(error).toBeInstanceOf(InputError);
    expect(error.exitCode).toBe(2);
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ file: join(folder, 'bad.yaml'), line: 11, field: 'entities[1].role' });
    expect(error.file).toBe(join(folder, 'bad.yaml'));
    expect(error.line).toBe(11);
    expect(error.field).toBe('entities[1].role');
    expect(error.message).toContain(`${join(folder, 'bad.yaml')}:11: entities[1].role:`);
  });

  it('points an unknown key at its own line', () => {
    const folder = folderWith({
      'extra.yaml': GOOD.replace(
        '    aliases: [grooming appointment]',
        '    aliases: [grooming appointment]\n    colour: blue',
      ),
    });
    const error = thrown(() => loadPatternLibrary([folder], { includeBuiltIn: false }));
    expect(error.issues[0]).toMatchObject({ line: 13, field: 'entities[1].colour' });
    expect(error.issues[0]?.message).toContain('unknown field');
  });

  it('points a missing field at its parent object', () => {
    const folder = folderWith({ 'missing.yaml': GOOD.replace('    role: party\n', '') });
    const error = thrown(() => loadPatternLibrary([folder], { includeBuiltIn: false }));
    expect(error.issues[0]).toMatchObject({ line: 6, field: 'entities[0].role' });
  });

  it('reports semantic problems with their field: unknown relation end, commitment without time, reserved column', () => {
    const text = GOOD.replace('{ from: Owner, to: Grooming', '{ from: Owner, to: Pet')
      .replace('{ name: startsAt, type: DATETIME, required: true }', '{ name: notes, type: TEXT }')
      .replace('{ name: name, type: TEXT, required: true }', '{ name: order, type: INTEGER }');
    const issues = parsePatternText(text, 'semantic.yaml');
    expect(issues.success).toBe(false);
    if (issues.success) return;
    const fields = issues.issues.map((issue) => issue.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'relations[0].to',
        'entities[1].fields',
        'entities[0].fields[0].name',
        'projections[0].entity',
      ]),
    );
    expect(issues.issues.find((issue) => issue.field === 'relations[0].to')?.line).toBe(16);
  });

  it('reports YAML syntax errors with their line', () => {
    const result = parsePatternText('id: x\ntitle: [unclosed\n', 'broken.yaml');
    expect(result.success).toBe(false);
    if (!result.success) expect(result.issues[0]).toMatchObject({ file: 'broken.yaml', line: expect.any(Number) });
  });

  it('refuses a duplicate id and a missing folder, collecting every issue', () => {
    const folder = folderWith({ 'a.yaml': GOOD, 'b.yaml': GOOD });
    const missing = join(folder, 'does-not-exist');
    const error = thrown(() => loadPatternLibrary([folder, missing], { includeBuiltIn: false }));
    expect(error.issues.map((issue) => issue.message)).toEqual([
      'pattern folder not found',
      `pattern id "pet-grooming" is already defined in ${join(folder, 'a.yaml')}`,
    ]);
  });

  it('refuses a user pattern that reuses a built-in id', () => {
    const folder = folderWith({ 'booking.yml': GOOD.replace('id: pet-grooming', 'id: booking') });
    const error = thrown(() => loadPatternLibrary([folder]));
    expect(error.issues[0]).toMatchObject({ file: join(folder, 'booking.yml'), field: 'id' });
  });

  it('reads nested folders only when asked (not recursive)', () => {
    const folder = folderWith({});
    mkdirSync(join(folder, 'nested'));
    writeFileSync(join(folder, 'nested', 'p.yaml'), GOOD);
    expect(loadPatternLibrary([folder], { includeBuiltIn: false }).patterns).toEqual([]);
  });
});

describe('createPatternLibrary', () => {
  it('validates patterns given in code', () => {
    expect(() => createPatternLibrary([{ id: 'x' }])).toThrow(PatternLibraryError);
    const builtIn = loadBuiltInPatternLibrary().patterns;
    expect(createPatternLibrary(builtIn).patterns).toHaveLength(builtIn.length);
  });
});
