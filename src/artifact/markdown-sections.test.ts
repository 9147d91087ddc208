import { describe, expect, it } from 'vitest';
import { markdownSections, markdownSectionSpans, PREAMBLE_SECTION, replaceSections } from './markdown-sections.ts';

const PROMPT =
  '# Title\n\nIntro.\n\n## Roles\nA party acts.\n\n### Detail\nstays inside\n\n## Views\n```md\n## not a heading\n```\nList.\n';

describe('markdownSections', () => {
  it('splits at ## headings outside code fences, with the preamble first', () => {
    const sections = markdownSections(PROMPT);
    expect(Object.keys(sections)).toEqual([PREAMBLE_SECTION, 'Roles', 'Views']);
    expect(sections[PREAMBLE_SECTION]).toBe('# Title\n\nIntro.\n\n');
    expect(sections.Roles).toContain('### Detail');
    expect(Object.values(sections).join('')).toBe(PROMPT);
  });

  it('refuses two sections with one name', () => {
    expect(() => markdownSectionSpans('## A\nx\n## A\ny\n')).toThrow(/two sections/);
    expect(markdownSections('no headings')).toEqual({ [PREAMBLE_SECTION]: 'no headings' });
  });
});

describe('replaceSections', () => {
  it('replaces a body and keeps every other byte', () => {
    const result = replaceSections(PROMPT, [
      { section: 'Roles', body: '## Roles\nA party acts; a commitment is a promise.' },
    ]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const before = markdownSections(PROMPT);
    const after = markdownSections(result.text);
    expect(after.Roles).toBe('## Roles\nA party acts; a commitment is a promise.\n\n');
    expect(
      replaceSections(PROMPT, [
        { section: 'Views', body: markdownSections(PROMPT).Views!.split('\n').slice(1).join('\n') },
      ]),
    ).toEqual({ ok: true, text: PROMPT });
    expect(after[PREAMBLE_SECTION]).toBe(before[PREAMBLE_SECTION]);
    expect(after.Views).toBe(before.Views);
  });

  it('appends a new section only when allowed', () => {
    expect(replaceSections(PROMPT, [{ section: 'Examples', body: 'x' }])).toMatchObject({ ok: false });
    const added = replaceSections(PROMPT, [{ section: 'Examples', body: 'x' }], true);
    expect(added.ok && Object.keys(markdownSections(added.text))).toEqual([
      PREAMBLE_SECTION,
      'Roles',
      'Views',
      'Examples',
    ]);
  });

  it('refuses bodies that would change the structure', () => {
    expect(replaceSections(PROMPT, [{ section: 'Roles', body: 'a\n## Sneaky\nb' }])).toMatchObject({ ok: false });
    expect(replaceSections(PROMPT, [{ section: 'Roles', body: '```\nunclosed' }])).toMatchObject({ ok: false });
    expect(replaceSections(PROMPT, [{ section: PREAMBLE_SECTION, body: 'x' }])).toMatchObject({ ok: false });
    expect(
      replaceSections(PROMPT, [
        { section: 'Roles', body: 'a' },
        { section: 'Roles', body: 'b' },
      ]),
    ).toMatchObject({ ok: false });
  });
});
