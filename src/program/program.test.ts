import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { checkConstraints, parseProgram, registerOfHeading, type MechanicalConstraints } from './program.ts';

const examplePath = fileURLToPath(new URL('../../examples/intent/program.md', import.meta.url));

function thrown(action: () => unknown): InputError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

const program = (constraints: string) =>
  [
    '# Program',
    '',
    '## Instructions',
    'Try cue words.',
    '',
    '## Constraints',
    constraints,
    '',
    '## Stopping criteria',
    'After 30 experiments.',
  ].join('\n');

describe('parseProgram', () => {
  it('reads the three registers at any level and case', () => {
    const parsed = parseProgram(
      '### INSTRUCTIONS:\nTry.\n\n# constraints\nKeep.\n\n## Stopping Criteria\nStop.\n',
      'p.md',
    );
    expect(parsed.instructions).toBe('Try.');
    expect(parsed.constraints).toBe('Keep.');
    expect(parsed.stopping).toBe('Stop.');
    expect(parsed.lines).toEqual({ instructions: 1, constraints: 4, stopping: 7 });
    expect(parsed.mechanical).toEqual({ maxArtifactCharacters: 50_000, forbiddenText: [], requiredText: [] });
  });

  it('accepts the usual spellings of the stopping register and setext headings', () => {
    for (const heading of [
      'Stopping criteria',
      'Stopping Criteria',
      'Stop criteria',
      '3. Stop Criteria',
      'Stopping criteria (when to report)',
      '**Stopping criteria** — budget',
    ]) {
      expect(registerOfHeading(heading)).toBe('stopping');
    }
    expect(registerOfHeading('Constraints checked by code')).toBeUndefined();
    const parsed = parseProgram(
      'Instructions\n============\nTry.\n\nConstraints\n-----------\nKeep.\n\nStop criteria\n---\nStop.',
      'p.md',
    );
    expect(parsed.stopping).toBe('Stop.');
  });

  it('keeps deeper headings inside a register and ignores headings inside code blocks', () => {
    const parsed = parseProgram(
      program('### Checked by code\n```yaml\n# Instructions\nmaxArtifactCharacters: 10\n```'),
      'p.md',
    );
    expect(parsed.constraints).toContain('### Checked by code');
    expect(parsed.mechanical.maxArtifactCharacters).toBe(10);
  });

  it('names the file, the line and the missing register', () => {
    const error = thrown(() =>
      parseProgram('# Title\n\n## Instructions\nTry.\n\n## Stopping criteria\nStop.\n', 'study/program.md'),
    );
    expect(error.file).toBe('study/program.md');
    expect(error.line).toBe(3);
    expect(error.field).toBe('Constraints');
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/^study\/program\.md:3: Constraints: missing register "Constraints"/);
    expect(error.message).toContain('found: Instructions, Stopping criteria');
  });

  it('points at line 1 when the file has no heading', () => {
    const error = thrown(() => parseProgram('just prose', 'program.md'));
    expect(error.message).toMatch(/^program\.md:1: Instructions: missing register "Instructions"/);
  });

  it('refuses a duplicate register at the second heading', () => {
    const error = thrown(() =>
      parseProgram('# Instructions\na\n# Constraints\nb\n# Instructions\nc\n# Stopping criteria\nd', 'program.md'),
    );
    expect(error.line).toBe(5);
    expect(error.message).toMatch(
      /^program\.md:5: Instructions: duplicate register "Instructions" \(first at line 1\)/,
    );
  });

  it('refuses an empty register and an unclosed code block', () => {
    expect(
      thrown(() => parseProgram('# Instructions\n\n# Constraints\nb\n# Stopping criteria\nd', 'program.md')).message,
    ).toBe('program.md:1: Instructions: register "Instructions" is empty');
    expect(thrown(() => parseProgram(program('```yaml\nmaxArtifactCharacters: 3'), 'program.md')).message).toMatch(
      /^program\.md:7: .*never closed/,
    );
  });

  it('names an unknown mechanical key and its line in program.md', () => {
    const text = program('Prose.\n\n```yaml\nmaxArtifactCharacters: 100\nforbidenText: [TODO]\n```');
    const error = thrown(() => parseProgram(text, 'program.md'));
    expect(error.line).toBe(text.split('\n').indexOf('forbidenText: [TODO]') + 1);
    expect(error.field).toBe('constraints.forbidenText');
    expect(error.message).toMatch(
      /^program\.md:11: constraints\.forbidenText: unknown key "forbidenText" \(allowed: editableSections, maxArtifactCharacters, forbiddenText, requiredText\)/,
    );
  });

  it('names a wrong mechanical value, malformed YAML and a second block', () => {
    expect(
      thrown(() => parseProgram(program('```yaml\nmaxArtifactCharacters: lots\n```'), 'program.md')).message,
    ).toMatch(/^program\.md:8: constraints\.maxArtifactCharacters: .*number/);
    expect(thrown(() => parseProgram(program('```yaml\neditableSections: []\n```'), 'program.md')).message).toMatch(
      /^program\.md:8: constraints\.editableSections: list at least one section/,
    );
    expect(thrown(() => parseProgram(program('```yaml\nforbiddenText: [a\n```'), 'program.md')).message).toMatch(
      /^program\.md:\d+: malformed YAML/,
    );
    expect(
      thrown(() =>
        parseProgram(program('```yaml\nrequiredText: [a]\n```\n\n```yml\nforbiddenText: [b]\n```'), 'program.md'),
      ).line,
    ).toBe(11);
  });

  it('parses the example study program', () => {
    const parsed = parseProgram(readFileSync(examplePath, 'utf8'), 'examples/intent/program.md');
    expect(parsed.instructions).toContain('entityTerms');
    expect(parsed.stopping).toContain('plateau');
    expect(parsed.mechanical.editableSections).toContain('appTypeCues');
    expect(parsed.mechanical.editableSections).toContain('extraction');
    expect(parsed.mechanical.editableSections).not.toContain('defaultAppType');
    expect(parsed.mechanical.maxArtifactCharacters).toBe(30_000);
    expect(parsed.mechanical.forbiddenText).toContain('TODO');
  });
});

describe('checkConstraints', () => {
  const mechanical: MechanicalConstraints = {
    editableSections: ['cues'],
    maxArtifactCharacters: 60,
    forbiddenText: ['TODO'],
    requiredText: ['cues:'],
  };
  /** A tiny "section" format: one `name: value` per line. */
  const sectionsOf = (text: string): Record<string, string> =>
    Object.fromEntries(
      text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          const [name, ...rest] = line.split(':');
          if (name === undefined || rest.length === 0) throw new Error(`no section name in "${line}"`);
          return [name, rest.join(':')];
        }),
    );
  const incumbentText = 'cues: book\npolicy: strict';
  const check = (candidateText: string) => checkConstraints(mechanical, { incumbentText, candidateText, sectionsOf });

  it('passes a candidate that only changes editable sections', () => {
    expect(check('cues: book, reserve\npolicy: strict')).toEqual({ passed: true, violations: [] });
  });

  it('refuses a change to a non-editable section, and an added or removed one', () => {
    expect(check('cues: book\npolicy: loose').violations).toEqual([
      { constraint: 'editableSections', message: 'section "policy" is not editable but was changed (editable: cues)' },
    ]);
    expect(check('cues: book').violations[0]?.message).toContain('"policy" is not editable but was removed');
    expect(check('cues: book\npolicy: strict\nextra: x').violations[0]?.message).toContain(
      '"extra" is not editable but was added',
    );
    expect(check('cues: book\npolicy strict').violations[0]?.constraint).toBe('format');
  });

  it('allows every section when editableSections is absent', () => {
    const result = checkConstraints(
      { ...mechanical, editableSections: undefined },
      { incumbentText, candidateText: 'cues: x\npolicy: loose', sectionsOf },
    );
    expect(result.passed).toBe(true);
  });

  it('refuses a candidate over the ceiling', () => {
    const result = check(`cues: ${'a'.repeat(60)}\npolicy: strict`);
    expect(result.passed).toBe(false);
    expect(result.violations).toEqual([
      { constraint: 'maxArtifactCharacters', message: 'the candidate has 81 characters, over the ceiling of 60' },
    ]);
    // 41 code points but 61 UTF-16 units: the ceiling counts characters
    expect(check(`cues: ${'𝔞'.repeat(20)}\npolicy: strict`).passed).toBe(true);
  });

  it('refuses forbidden text whatever its case', () => {
    expect(check('cues: book todo\npolicy: strict').violations).toEqual([
      { constraint: 'forbiddenText', message: 'the candidate contains forbidden text "TODO"' },
    ]);
  });

  it('refuses a candidate that lost required text', () => {
    const result = checkConstraints(
      { ...mechanical, editableSections: undefined },
      { incumbentText, candidateText: 'Cues: book\npolicy: strict', sectionsOf },
    );
    expect(result.violations).toEqual([
      { constraint: 'requiredText', message: 'the candidate lost required text "cues:"' },
    ]);
  });
});
