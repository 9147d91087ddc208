import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlaybook, playbookSections } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { applyPlaybookEdit, describePlaybookEdit, editPlaybook } from './playbook-edit.ts';

const TEXT = `# Header: do not touch.

# App type cues.
appTypeCues:
  booking: [book, {cue: time slot, weight: 2}]   # keep this comment
  helpdesk: [ticket]

entityTerms:
  patient:   party    # odd spacing stays
  room: resource

stopList: [app]
`;

/** An edit of every kind in every section of the seed playbook, and three that make it invalid. */
const SEED_EDITS: PlaybookEdit[] = [
  { op: 'add', path: ['appTypeCues', 'booking'], value: 'court' },
  { op: 'weight', path: ['appTypeCues', 'booking'], value: 'book', weight: 3 },
  { op: 'set', path: ['defaultAppType'], value: 'crm' },
  { op: 'set', path: ['entityTerms', 'locker'], value: 'resource' },
  { op: 'set', path: ['entityAliases', 'client'], value: 'Customer' },
  { op: 'add', path: ['stopList'], value: 'gap' },
  { op: 'remove', path: ['stopList'], value: 'spreadsheet' },
  { op: 'add', path: ['attributeTerms'], value: 'mileage' },
  { op: 'set', path: ['roleSuffixes', 'ee'], value: 'party' },
  { op: 'set', path: ['unknownNounPolicy', 'countableOnly'], value: false },
  { op: 'add', path: ['behaviorCues', 'notification'], value: 'ping' },
  { op: 'add', path: ['projectionCues', 'map'], value: 'route' },
  { op: 'add', path: ['defaultProjections'], value: 'calendar' },
  { op: 'set', path: ['relationCues', 'is stored in'], value: { kind: 'association', cardinality: 'many_to_one' } },
  { op: 'set', path: ['cardinalityCues', 'a pair of'], value: 'many' },
  { op: 'add', path: ['appTypeDefaults', 'helpdesk', 'behaviors'], value: 'assignment' },
  { op: 'setMany', path: ['entityTerms'], entries: { locker: 'resource', court: 'resource' } },
  { op: 'set', path: ['extraction', 'pronounSubjects'], value: true },
  { op: 'set', path: ['extraction', 'maxEntities'], value: 61 }, // out of range: refused
  { op: 'set', path: ['extraction', 'rankBy'], value: 'loudness' }, // not a choice: refused
  { op: 'set', path: ['entityTerms', 'locker'], value: 'furniture' }, // not a role: refused
  { op: 'delete', path: ['entityTerms', 'customer'] },
  { op: 'set', path: ['entityTerms', 'customer'], value: 'resource' },
  { op: 'set', path: ['extraction', 'maxEntities'], value: 12 },
  { op: 'add', path: ['appTypeDefaults', 'crm', 'projections'], value: 'kanban' },
  { op: 'weight', path: ['appTypeCues', 'booking'], value: 'time slot', weight: 1 },
];

const SEED = readFileSync(path.resolve(import.meta.dirname, '../../../../examples/intent/playbook.yaml'), 'utf8');

function changedSections(before: string, after: string): string[] {
  const a = playbookSections(before)!;
  const b = playbookSections(after)!;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((name) => a[name] !== b[name]);
}

describe('applyPlaybookEdit', () => {
  const cases: Array<[PlaybookEdit, string, string]> = [
    [
      { op: 'add', path: ['appTypeCues', 'booking'], value: 'Appointment' },
      'appTypeCues.booking += "Appointment"',
      'appTypeCues',
    ],
    [
      { op: 'remove', path: ['appTypeCues', 'helpdesk'], value: 'tickets' },
      'appTypeCues.helpdesk -= "tickets"',
      'appTypeCues',
    ],
    [
      { op: 'weight', path: ['appTypeCues', 'booking'], value: 'book', weight: 3 },
      'appTypeCues.booking.book.weight = 3',
      'appTypeCues',
    ],
    [
      { op: 'set', path: ['entityTerms', 'time slot'], value: 'commitment' },
      'entityTerms["time slot"] = "commitment"',
      'entityTerms',
    ],
    [
      { op: 'set', path: ['entityTerms', 'Rooms'], value: 'reference' },
      'entityTerms.Rooms = "reference"',
      'entityTerms',
    ],
    [{ op: 'delete', path: ['entityTerms', 'room'] }, 'delete entityTerms.room', 'entityTerms'],
    [{ op: 'add', path: ['stopList'], value: 'desk' }, 'stopList += "desk"', 'stopList'],
    [
      { op: 'set', path: ['entityAliases', 'visit'], value: 'Appointment' },
      'entityAliases.visit = "Appointment"',
      'entityAliases',
    ],
    [
      { op: 'add', path: ['appTypeDefaults', 'booking', 'behaviors'], value: 'scheduling' },
      'appTypeDefaults.booking.behaviors += "scheduling"',
      'appTypeDefaults',
    ],
  ];

  it.each(cases)('%j changes only its own section', (edit, delta, section) => {
    expect(describePlaybookEdit(edit)).toBe(delta);
    const result = applyPlaybookEdit(TEXT, edit);
    expect(result).not.toBeNull();
    expect(changedSections(TEXT, result!)).toEqual([section]);
    expect(parsePlaybook(result!).ok).toBe(true);
    expect(result!.startsWith('# Header: do not touch.\n\n# App type cues.\n')).toBe(true);
  });

  it('keeps comments and applies the edit', () => {
    const result = applyPlaybookEdit(TEXT, { op: 'add', path: ['appTypeCues', 'booking'], value: 'appointment' })!;
    expect(result).toContain('# keep this comment');
    expect(result).toContain('patient:   party    # odd spacing stays');
    const parsed = parsePlaybook(result);
    expect(parsed.ok && parsed.playbook.appTypeCues.booking?.map((cue) => cue.cue)).toEqual([
      'book',
      'time slot',
      'appointment',
    ]);

    const renamed = applyPlaybookEdit(TEXT, { op: 'set', path: ['entityTerms', 'Rooms'], value: 'reference' })!;
    const parsedRenamed = parsePlaybook(renamed);
    expect(parsedRenamed.ok && parsedRenamed.playbook.entityTerms).toEqual({ patient: 'party', room: 'reference' });

    const weighted = applyPlaybookEdit(TEXT, {
      op: 'weight',
      path: ['appTypeCues', 'booking'],
      value: 'time slot',
      weight: 5,
    })!;
    const parsedWeighted = parsePlaybook(weighted);
    expect(parsedWeighted.ok && parsedWeighted.playbook.appTypeCues.booking).toEqual([
      { cue: 'book', weight: 1 },
      { cue: 'time slot', weight: 5 },
    ]);
  });

  it('returns null when the edit changes nothing or does not apply', () => {
    expect(applyPlaybookEdit(TEXT, { op: 'add', path: ['appTypeCues', 'booking'], value: 'books' })).toBeNull();
    expect(applyPlaybookEdit(TEXT, { op: 'remove', path: ['stopList'], value: 'system' })).toBeNull();
    expect(applyPlaybookEdit(TEXT, { op: 'set', path: ['entityTerms', 'patient'], value: 'party' })).toBeNull();
    expect(applyPlaybookEdit(TEXT, { op: 'delete', path: ['entityAliases', 'visit'] })).toBeNull();
    expect(
      applyPlaybookEdit(TEXT, { op: 'weight', path: ['appTypeCues', 'helpdesk'], value: 'issue', weight: 2 }),
    ).toBeNull();
    // Invalid results are refused: "person" is not a role.
    expect(applyPlaybookEdit(TEXT, { op: 'set', path: ['entityTerms', 'nurse'], value: 'person' })).toBeNull();
    expect(applyPlaybookEdit('a: [\n', { op: 'add', path: ['stopList'], value: 'x' })).toBeNull();
  });

  it('creates missing sections at the end', () => {
    const result = applyPlaybookEdit('appTypeCues:\n  booking: [book]\n', {
      op: 'add',
      path: ['behaviorCues', 'notification'],
      value: 'remind',
    });
    expect(result).toBe('appTypeCues:\n  booking: [book]\nbehaviorCues:\n  notification: [remind]\n');
    const nested = applyPlaybookEdit('stopList: [app]\n', {
      op: 'add',
      path: ['appTypeDefaults', 'booking', 'behaviors'],
      value: 'scheduling',
    });
    expect(nested).toBe('stopList: [app]\nappTypeDefaults:\n  booking: {behaviors: [scheduling]}\n');
    expect(applyPlaybookEdit('', { op: 'add', path: ['stopList'], value: 'app' })).toBe('stopList: [app]\n');
  });

  it('editPlaybook returns the validated playbook without re-parsing', () => {
    const edited = editPlaybook(TEXT, { op: 'add', path: ['stopList'], value: 'desk' });
    expect(edited?.playbook.stopList).toEqual(['app', 'desk']);
    const parsed = parsePlaybook(edited!.text);
    expect(parsed.ok && parsed.playbook).toEqual(edited!.playbook);
  });

  it('editPlaybook checks only the edited section, and gives what a whole parse of its text gives, in every section', () => {
    const edits = SEED_EDITS;
    let checked = 0;
    for (const edit of edits) {
      const edited = editPlaybook(SEED, edit);
      const text = applyPlaybookEdit(SEED, edit);
      expect(edited?.text ?? null, describePlaybookEdit(edit)).toBe(text);
      if (edited === null) continue;
      const parsed = parsePlaybook(edited.text);
      expect(parsed.ok && parsed.playbook, describePlaybookEdit(edit)).toEqual(edited.playbook);
      checked += 1;
    }
    expect(checked).toBe(edits.length - 3);
    // The source's playbook is shared between its edits, frozen: what one candidate's playbook changes would reach the others.
    const one = editPlaybook(SEED, edits[0]!)!.playbook;
    expect(() => one.stopList.push('x')).toThrow(TypeError);
    // A source that is not a valid playbook is checked whole: an edit that repairs it is valid.
    const invalid = SEED.replace('maxEntities: 10', 'maxEntities: 99');
    const repaired = editPlaybook(invalid, { op: 'set', path: ['extraction', 'maxEntities'], value: 12 });
    expect(repaired?.playbook.extraction.maxEntities).toBe(12);
    expect(editPlaybook(invalid, { op: 'add', path: ['stopList'], value: 'gap' })).toBeNull();
  });

  it('the edits of one source share its parse, which none of them changes: in any order, each gives the same text', () => {
    const texts = (edits: readonly PlaybookEdit[]) =>
      new Map(edits.map((edit) => [describePlaybookEdit(edit), editPlaybook(SEED, edit)?.text ?? null]));
    const forward = texts(SEED_EDITS);
    const backward = texts([...SEED_EDITS].reverse());
    expect([...forward].filter(([, text]) => text !== null).length).toBe(SEED_EDITS.length - 3);
    for (const [edit, text] of forward) expect(backward.get(edit), edit).toBe(text);
    // Each changes the seed in its own section only.
    for (const edit of SEED_EDITS) {
      const text = forward.get(describePlaybookEdit(edit));
      if (text !== null && text !== undefined)
        expect(changedSections(SEED, text), describePlaybookEdit(edit)).toEqual([edit.path[0]]);
    }
  });
});
