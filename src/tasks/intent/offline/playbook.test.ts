import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  PLAYBOOK_SECTIONS,
  PREAMBLE_SECTION,
  formatPlaybookError,
  parsePlaybook,
  playbookSections,
} from './playbook.ts';

describe('parsePlaybook', () => {
  it('fills defaults for an empty playbook', () => {
    const result = parsePlaybook('');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.playbook.defaultAppType).toBe('other');
    expect(result.playbook.unknownNounPolicy).toEqual({
      include: true,
      role: 'resource',
      minMentions: 1,
      compounds: 'head',
      properNouns: false,
      minSalience: 0,
      countableOnly: false,
      excludeCategories: [],
    });
    expect(result.playbook.extraction.maxEntities).toBe(12);
    expect(result.playbook.extraction.rankBy).toBe('firstMention');
    expect(result.playbook.attributeTerms).toEqual([]);
    expect(result.playbook.cardinalityCues).toEqual({});
    expect(result.playbook.stopList).toEqual([]);
  });

  it('normalises cues to lower case and reads weights', () => {
    const result = parsePlaybook('appTypeCues:\n  booking: [Book, {cue: "Time  Slot", weight: 2}]\nstopList:\n');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.playbook.appTypeCues.booking).toEqual([
      { cue: 'book', weight: 1 },
      { cue: 'time slot', weight: 2 },
    ]);
    expect(result.playbook.stopList).toEqual([]);
  });

  it('names the section, key and line of each error, in line order', () => {
    const text = [
      '# header',
      'appTypeCues:',
      '  booking: [book]',
      '  bookings: [reserve]',
      'entityTerms:',
      '  patient: person',
      'stopList: [app, 42]',
      'colours: [red]',
      'unknownNounPolicy: {include: maybe}',
    ].join('\n');
    const result = parsePlaybook(text, 'playbook.yaml');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const summary = result.errors.map((error) => [error.line, error.path]);
    expect(summary).toEqual([
      [4, 'appTypeCues.bookings'],
      [6, 'entityTerms.patient'],
      [7, 'stopList[1]'],
      [8, 'colours'],
      [9, 'unknownNounPolicy.include'],
    ]);
    expect(result.errors[0]!.message).toContain('unknown key "bookings"');
    expect(result.errors[0]!.message).toContain('booking, marketplace');
    expect(result.errors[3]!.message).toContain('unknown section "colours"');
    expect(result.errors.every((error) => error.file === 'playbook.yaml')).toBe(true);
    expect(formatPlaybookError(result.errors[1]!)).toMatch(/^playbook\.yaml:6:\d+ entityTerms\.patient: /);
  });

  it('reports YAML syntax errors with their line', () => {
    const result = parsePlaybook('appTypeCues:\n  booking: [book\nstopList: [a]\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]!.message).toMatch(/^YAML: /);
    expect(result.errors[0]!.line).toBeGreaterThanOrEqual(2);
  });

  it('refuses a document that is not a mapping', () => {
    const result = parsePlaybook('- just\n- a list\n');
    expect(result.ok).toBe(false);
  });

  it('accepts the seed playbook', () => {
    const text = readFileSync(new URL('../../../../examples/intent/playbook.yaml', import.meta.url), 'utf8');
    const result = parsePlaybook(text);
    expect(result.ok ? [] : result.errors).toEqual([]);
  });
});

describe('playbookSections', () => {
  const text = [
    '# Header comment',
    '',
    '# Cues for app types.',
    'appTypeCues:',
    '  booking: [book]',
    '',
    'stopList: [app]',
    '# trailing note',
    '',
  ].join('\n');

  it('splits the text into its sections, leading comments included', () => {
    const sections = playbookSections(text);
    expect(sections).toEqual({
      [PREAMBLE_SECTION]: '# Header comment\n\n',
      appTypeCues: '# Cues for app types.\nappTypeCues:\n  booking: [book]\n\n',
      stopList: 'stopList: [app]\n# trailing note\n',
    });
    expect(Object.values(sections!).join('')).toBe(text);
  });

  it('returns null for text that is not a YAML mapping', () => {
    expect(playbookSections('a: [\n')).toBeNull();
    expect(playbookSections('- a\n')).toBeNull();
  });

  it('lists the known sections', () => {
    expect(PLAYBOOK_SECTIONS).toContain('appTypeCues');
    expect(PLAYBOOK_SECTIONS).toContain('unknownNounPolicy');
  });
});
