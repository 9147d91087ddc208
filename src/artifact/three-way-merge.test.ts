import { describe, expect, it } from 'vitest';
import { changeText, lineChanges, rebaseText } from './three-way-merge.ts';

const BASE = ['# Prompt', '', '## Roles', '', 'A party acts.', '', '## Views', '', 'List the views.', ''].join('\n');
const withRolesLine = (text: string, line: string): string =>
  text.replace('A party acts.\n', `A party acts.\n\n${line}\n`);

describe('lineChanges', () => {
  it('lists the added and removed lines, not whole sections', () => {
    const after = withRolesLine(BASE, 'Decide from meaning.').replace('List the views.', 'List the screens.');
    expect(lineChanges(BASE, after)).toEqual({
      added: ['Decide from meaning.', 'List the screens.'],
      removed: ['List the views.'],
    });
    expect(changeText(lineChanges(BASE, after))).toBe('- List the views.\n+ Decide from meaning.\n+ List the screens.');
  });

  it('is empty for identical texts', () => {
    expect(lineChanges(BASE, BASE)).toEqual({ added: [], removed: [] });
  });
});

describe('lineChanges on a JSON rules file (issue 35)', () => {
  const rules = (...lines: string[]): string =>
    ['{', '  "default": "hours",', '  "rules": [', ...lines, '  ]', '}', ''].join('\n');
  const returns = '    { "id": "returns", "queue": "returns", "any": ["receipt"] }';
  const delivery = '    { "id": "delivery", "queue": "delivery", "any": ["courier"] }';

  it('a rule that only gains its trailing comma, because a rule is added after it, is unchanged', () => {
    const changes = lineChanges(
      rules(`${returns},`, delivery),
      rules(`${returns},`, `${delivery},`, '    { "id": "returns-return", "queue": "returns", "any": ["return"] }'),
    );
    expect(changes).toEqual({
      added: ['    { "id": "returns-return", "queue": "returns", "any": ["return"] }'],
      removed: [],
    });
    expect(changeText(changes)).toBe('+     { "id": "returns-return", "queue": "returns", "any": ["return"] }');
  });

  it('and one that loses it, because the rule after it is removed; a real change beside a comma still shows', () => {
    expect(lineChanges(rules(`${returns},`, delivery), rules(returns))).toEqual({ added: [], removed: [delivery] });
    const edited = '    { "id": "returns", "queue": "returns", "any": ["receipt", "return"] }';
    expect(lineChanges(rules(returns), rules(`${edited},`, delivery))).toEqual({
      added: [`${edited},`, delivery],
      removed: [returns],
    });
  });
});

describe('rebaseText', () => {
  it('keeps both lines when two candidates append different lines to one section', () => {
    const first = withRolesLine(BASE, 'Hint A.');
    const second = withRolesLine(BASE, 'Hint B.');
    const rebased = rebaseText(BASE, second, first);
    expect(rebased.text).toBe(BASE.replace('A party acts.\n', 'A party acts.\n\nHint A.\n\nHint B.\n'));
    expect(rebased).toMatchObject({ conflicts: 0, sideBySideInsertions: 1 });
  });

  it('applies a change to another section untouched', () => {
    const first = withRolesLine(BASE, 'Hint A.');
    const second = BASE.replace('List the views.', 'List the screens.');
    expect(rebaseText(BASE, second, first).text).toBe(first.replace('List the views.', 'List the screens.'));
  });

  it('gives the incumbent back when the candidate changes what the incumbent already has', () => {
    const first = withRolesLine(BASE, 'Hint A.');
    expect(rebaseText(BASE, first, first).text).toBe(first);
  });

  it('lets the candidate win where both rewrote the same line', () => {
    const first = BASE.replace('A party acts.', 'A party is a person.');
    const second = BASE.replace('A party acts.', 'A party is an organisation.');
    const rebased = rebaseText(BASE, second, first);
    expect(rebased.text).toBe(second);
    expect(rebased.conflicts).toBe(1);
  });

  it('returns the candidate itself when the incumbent is still the base', () => {
    const second = withRolesLine(BASE, 'Hint B.');
    expect(rebaseText(BASE, second, BASE).text).toBe(second);
  });
});
