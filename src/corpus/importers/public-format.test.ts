import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCandidateRecords } from '../admission.ts';
import {
  corpusFormatOf,
  formatFieldPath,
  importPublicFormat,
  parsePublicFormat,
  readCorpusFile,
  readLocatedCorpusFile,
} from './public-format.ts';

const folder = mkdtempSync(path.join(tmpdir(), 'kloop-public-format-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function write(name: string, content: string | Uint8Array): string {
  const file = path.join(folder, name);
  writeFileSync(file, content);
  return file;
}

const VALID_YAML = `examples:
  - id: clinic-1
    goal: A physio clinic books sessions with therapists.
    expected:
      appType: booking
      entities:
        - { name: Patient, role: party }
        - name: Session
          role: commitment
    tags: [health]
    partition: optimization
  - id: shop-1
    goal: A bakery sells cakes online.
    expected: { appType: ecommerce }
    partition: shadow
`;

const record = (overrides: Record<string, unknown> = {}): string =>
  JSON.stringify({
    id: 'crm-1',
    goal: 'A sales team tracks leads.',
    expected: { appType: 'crm' },
    partition: 'anchor',
    ...overrides,
  });

describe('readCorpusFile: valid files', () => {
  it('reads YAML (mapping with examples, or a bare list), JSONL and JSON by extension', () => {
    const yaml = readCorpusFile(write('corpus.yaml', VALID_YAML));
    expect(yaml).toMatchObject({ ok: true });
    if (!yaml.ok) return;
    expect(yaml.examples.map((example) => example.id)).toEqual(['clinic-1', 'shop-1']);
    expect(yaml.examples[1]?.tags).toEqual([]);

    const list = readCorpusFile(
      write('list.yml', `- id: a\n  goal: text\n  expected: { appType: crm }\n  partition: shadow\n`),
    );
    expect(list.ok && list.examples.length).toBe(1);

    const jsonl = readCorpusFile(write('corpus.jsonl', `${record()}\n\n${record({ id: 'crm-2' })}\r\n`));
    expect(jsonl.ok && jsonl.examples.map((example) => example.id)).toEqual(['crm-1', 'crm-2']);

    const json = readCorpusFile(write('corpus.json', `[\n\t${record()}\n]\n`));
    expect(json.ok && json.examples.map((example) => example.partition)).toEqual(['anchor']);
  });

  it('reads an empty YAML file as no examples', () => {
    expect(readCorpusFile(write('empty.yaml', ''))).toEqual({ ok: true, examples: [] });
  });

  it('chooses the format by extension', () => {
    expect(corpusFormatOf('a/b.JSONL')).toBe('jsonl');
    expect(corpusFormatOf('b.yml')).toBe('yaml');
    expect(corpusFormatOf('b.json')).toBe('yaml');
    expect(corpusFormatOf('b.csv')).toBeUndefined();
  });

  it('formats field paths with dots and indices', () => {
    expect(formatFieldPath(['expected', 'entities', 0, 'role'])).toBe('expected.entities[0].role');
  });
});

describe('readLocatedCorpusFile: the line each record starts on, from the same parse', () => {
  const linesOf = (file: string): Array<number | undefined> => {
    const result = readLocatedCorpusFile(file);
    expect(result.ok).toBe(true);
    return result.ok ? result.lines : [];
  };
  /** The lines readCandidateRecords (the located parse, record by record) gives the same records. */
  const candidateLines = (file: string): Array<number | undefined> => {
    const read = readCandidateRecords(file);
    return read.ok ? read.records.map((candidate) => candidate.line) : [];
  };
  const item = (id: string): string =>
    `id: ${id}\n  goal: A bakery sells cakes online.\n  expected: { appType: ecommerce }\n  partition: shadow`;

  it('gives the line of each YAML list item (first key, or a flow bracket), as the located parse does', () => {
    const files = [
      write('lines-wrapped.yaml', VALID_YAML),
      write('lines-next-line.yaml', `# corpus\n-\n  ${item('a')}\n\n-\n  # a comment\n  ${item('b')}\n`),
      write(
        'lines-props.yaml',
        `---\n- &first\n  ${item('a')}\n- !!map { id: b, goal: A bakery sells cakes., expected: { appType: ecommerce }, partition: shadow }\n- &key ${item('c')}\n`,
      ),
      write('lines-crlf.yaml', `\uFEFF- ${item('a')}\n- ${item('b')}\n`.replace(/\n/g, '\r\n')),
      write('lines.json', `[\n  ${record()},\n\n  ${record({ id: 'crm-2' })}]\n`),
      write('lines-wrapped.json', `{"examples": [${record()},\n${record({ id: 'crm-2' })}]}`),
    ];
    expect(linesOf(files[0]!)).toEqual([2, 12]);
    expect(linesOf(files[1]!)).toEqual([3, 10]);
    expect(linesOf(files[2]!)).toEqual([3, 7, 8]);
    for (const file of files) expect(linesOf(file)).toEqual(candidateLines(file));
  });

  it('gives the line of each JSON Lines record, blank lines counted', () => {
    const file = write('lines.jsonl', `\n${record()}\n\n  \n${record({ id: 'crm-2' })}\r\n`);
    expect(linesOf(file)).toEqual([2, 5]);
    expect(linesOf(file)).toEqual(candidateLines(file));
  });

  it('gives no line for an empty file (read by the located parser)', () => {
    expect(readLocatedCorpusFile(write('lines-empty.yaml', '# nothing yet\n'))).toEqual({
      ok: true,
      examples: [],
      lines: [],
    });
  });

  it('returns the examples readCorpusFile returns', () => {
    const file = write('lines-same.yaml', VALID_YAML);
    const located = readLocatedCorpusFile(file);
    expect(located.ok && located.examples).toEqual((readCorpusFile(file) as { examples: unknown }).examples);
  });
});

describe('readCorpusFile: errors name the file, line and field', () => {
  it("counts a goal's length in characters (code points), as its ceiling does", () => {
    // 15 000 emoji are 15 000 characters (30 000 UTF-16 units): within the 20 000-character ceiling.
    const fits = readCorpusFile(
      write('emoji-fits.jsonl', `${record({ goal: `A sales team tracks leads. ${'😀'.repeat(15_000)}` })}\n`),
    );
    expect(fits.ok).toBe(true);
    const goal = `${'😀'.repeat(15_000)}${'x'.repeat(5_001)}`;
    const file = write('emoji-long.jsonl', `${record({ goal })}\n`);
    const result = readCorpusFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      { file, line: 1, field: 'goal', message: '20001 characters, above the limit of 20000 characters' },
    ]);
  });

  it('reports a YAML syntax error with its line', () => {
    const file = write('bad-syntax.yaml', 'examples:\n  - id: a\n    goal: [unclosed\n  - id: b\n');
    const result = readCorpusFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]).toMatchObject({ file, line: 4 });
    expect(result.errors[0]?.message).toMatch(/^invalid YAML: /);
  });

  it('reports unknown fields at the line of the key, one error per key', () => {
    const file = write(
      'unknown-field.yaml',
      VALID_YAML.replace('    tags: [health]\n', '    tags: [health]\n    notes: extra\n').replace(
        '        - { name: Patient, role: party }\n',
        '        - { name: Patient, role: party, colour: red }\n',
      ),
    );
    const result = readCorpusFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      { file, line: 7, field: 'expected.entities[0].colour', message: 'unknown field "colour"' },
      { file, line: 11, field: 'notes', message: 'unknown field "notes"' },
    ]);
  });

  it('reports a value outside a closed vocabulary with its line and field', () => {
    const file = write(
      'vocabulary.yaml',
      VALID_YAML.replace('          role: commitment', '          role: appointment'),
    );
    const result = readCorpusFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ file, line: 9, field: 'expected.entities[1].role' });
    expect(result.errors[0]?.message).toContain('commitment');
  });

  it('reports a missing required field at the line of its record', () => {
    const file = write('missing.yaml', VALID_YAML.replace('    partition: shadow\n', ''));
    const result = readCorpusFile(file);
    expect(!result.ok && result.errors).toEqual([
      { file, line: 12, field: 'partition', message: 'missing required field "partition"' },
    ]);
  });

  it('reports duplicate ids within a file at the second occurrence (YAML and JSONL)', () => {
    const yamlFile = write('duplicate.yaml', VALID_YAML.replace('id: shop-1', 'id: clinic-1'));
    const yaml = readCorpusFile(yamlFile);
    expect(!yaml.ok && yaml.errors).toEqual([
      { file: yamlFile, line: 12, field: 'id', message: 'duplicate id "clinic-1" (first on line 2)' },
    ]);
    const jsonlFile = write('duplicate.jsonl', `${record()}\n${record({ id: 'other' })}\n${record()}\n`);
    const jsonl = readCorpusFile(jsonlFile);
    expect(!jsonl.ok && jsonl.errors).toEqual([
      { file: jsonlFile, line: 3, field: 'id', message: 'duplicate id "crm-1" (first on line 1)' },
    ]);
  });

  it('reports JSONL errors with the line of the record', () => {
    const file = write(
      'errors.jsonl',
      [
        record(),
        '{"id": "broken",',
        record({ id: 'x-2', expected: { appType: 'spaceship' } }),
        record({ id: 'x-3', extra: 1 }),
      ].join('\n'),
    );
    const result = importPublicFormat(file, 'jsonl');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => [error.line, error.field])).toEqual([
      [2, undefined],
      [3, 'expected.appType'],
      [4, 'extra'],
    ]);
    expect(result.errors[0]?.message).toMatch(/^invalid JSON: /);
  });

  it('refuses invalid UTF-8, naming the file and the line', () => {
    const bytes = Buffer.concat([Buffer.from(`${record()}\n`), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])]);
    const file = write('latin.jsonl', bytes);
    const result = readCorpusFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      { file, line: 2, message: `${file} is not valid UTF-8 (first invalid byte sequence on line 2)` },
    ]);
  });

  it('refuses a wrong root shape, unknown top-level keys, unknown extensions and missing files', () => {
    expect(parsePublicFormat('just a string\n', 'yaml', 'x.yaml')).toEqual({
      ok: false,
      errors: [
        { file: 'x.yaml', line: 1, message: 'the file must hold a list of examples or a mapping with "examples"' },
      ],
    });
    const topLevel = parsePublicFormat('version: 2\nexamples: []\n', 'yaml', 'y.yaml');
    expect(!topLevel.ok && topLevel.errors).toEqual([
      {
        file: 'y.yaml',
        line: 1,
        field: 'version',
        message: 'unknown top-level field "version" (expected only "examples")',
      },
    ]);
    expect(readCorpusFile('corpus.csv')).toMatchObject({ ok: false, errors: [{ file: 'corpus.csv' }] });
    const missing = readCorpusFile(path.join(folder, 'nope.yaml'));
    // The file is the error's location: the message does not name it again ("kloop: f: f does not exist").
    expect(!missing.ok && missing.errors[0]).toEqual({
      file: path.join(folder, 'nope.yaml'),
      message: 'the file does not exist',
    });
  });
});
