/**
 * Bad input (DESIGN.md §7): each broken study gets one clear message naming
 * the file, the line and the field, exit code 2, and no database change. The
 * CLI runs as a child process (`node bin/kloop.js run <study>`); the study
 * database (an existing one, or its absence) is compared byte for byte
 * before and after.
 */
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { databaseFile, databaseState, makeStudy, readOnlyUser, runKloop } from './reliability-fixture.ts';

// The cases run concurrently: clean up once all are done.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A study with an (empty, migrated) database, so "no change" is checked on a real file. */
async function studyWithDatabase(): Promise<string> {
  const dir = makeStudy(cleanups);
  const db = await openDatabase(databaseFile(dir));
  await db.destroy();
  return dir;
}

function edit(file: string, change: (text: string) => string): void {
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  expect(after, `the edit of ${file} changed nothing`).not.toBe(before);
  writeFileSync(file, after);
}

/** Runs `kloop run` on the broken study; asserts exit 2, one message matching `expected`, and an untouched database. */
async function expectRefused(dir: string, expected: RegExp): Promise<string> {
  const before = databaseState(dir);
  const result = await runKloop(['run', dir]);
  const message = result.stderr.trim();
  expect(result.code, message).toBe(2);
  expect(message.split('\n'), 'one message').toHaveLength(1);
  expect(message).toMatch(expected);
  expect(result.stdout).toBe('');
  expect(databaseState(dir)).toBe(before);
  return message;
}

const quote = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.concurrent('bad input: one clear message, exit code 2, no database change', () => {
  it('malformed YAML in kloop.yaml names the file and the line', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'kloop.yaml'), (text) =>
      text.replace('executor:\n  kind: offline', 'executor: [offline\n  kind: offline'),
    );
    const message = await expectRefused(dir, new RegExp(`^kloop: ${quote(dir)}/kloop\\.yaml:\\d+: malformed YAML: `));
    expect(message).toMatch(/at line \d+, column \d+$/); // the message ends there: no colon left from the code frame it dropped
  });

  it('malformed JSONL names the file and the line', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'corpus/extra.jsonl'), (text) =>
      text
        .split('\n')
        .map((line, index) => (index === 2 ? line.slice(0, 40) : line))
        .join('\n'),
    );
    await expectRefused(dir, new RegExp(`^kloop: ${quote(dir)}/corpus/extra\\.jsonl:3: invalid JSON: `));
  });

  it('a missing register in program.md names the file, the line and the register', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'program.md'), (text) => text.replace('## Stopping criteria', '## When things end'));
    await expectRefused(
      dir,
      new RegExp(`^kloop: ${quote(dir)}/program\\.md:\\d+: Stopping criteria: missing register "Stopping criteria"`),
    );
  });

  it('an unknown key in kloop.yaml names the file, the line and the key', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'kloop.yaml'), (text) => text.replace('  alpha: 0.05', '  alpah: 0.05'));
    const message = await expectRefused(
      dir,
      new RegExp(`^kloop: ${quote(dir)}/kloop\\.yaml:(\\d+): gate\\.alpah: unknown key "alpah"`),
    );
    const line = Number(/kloop\.yaml:(\d+):/.exec(message)![1]);
    expect(readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').split('\n')[line - 1]).toContain('alpah');
  });

  it('an unknown vocabulary value in kloop.yaml names the field and the allowed values', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'kloop.yaml'), (text) => text.replace('  kind: offline', '  kind: magic'));
    await expectRefused(dir, new RegExp(`^kloop: ${quote(dir)}/kloop\\.yaml:\\d+: executor\\.kind: .*"offline"`));
  });

  it('an unknown vocabulary value in the corpus names the file, the line, the field and the value', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'corpus/operations.yaml'), (text) => text.replace(/role: party/, 'role: boss'));
    const message = await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/corpus/operations\\.yaml:(\\d+): expected\\.entities\\[\\d+\\]\\.role: unknown value "boss"; expected one of "party"`,
      ),
    );
    const line = Number(/operations\.yaml:(\d+):/.exec(message)![1]);
    expect(readFileSync(path.join(dir, 'corpus/operations.yaml'), 'utf8').split('\n')[line - 1]).toContain('boss');
  });

  it('an empty corpus names the configuration, the field and the empty file', async () => {
    const dir = await studyWithDatabase();
    for (const file of readdirSync(path.join(dir, 'corpus'))) writeFileSync(path.join(dir, 'corpus', file), '');
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/kloop\\.yaml: corpus: the corpus is empty: corpus/extra\\.jsonl, .* hold no example`,
      ),
    );
  });

  it('a duplicate id within a file names the file, the line and the first occurrence', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'corpus/extra.jsonl'), (text) => `${text.trimEnd()}\n${text.split('\n')[0]}\n`);
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/corpus/extra\\.jsonl:13: id: duplicate id "booking-tennis-club-02" \\(first on line 1\\)`,
      ),
    );
  });

  it('a duplicate id across files names both files', async () => {
    const dir = await studyWithDatabase();
    const first = JSON.parse(readFileSync(path.join(dir, 'corpus/extra.jsonl'), 'utf8').split('\n')[0]!) as {
      id: string;
    };
    edit(path.join(dir, 'corpus/operations.yaml'), (text) => text.replace(/^- id: \S+/m, `- id: ${first.id}`));
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/corpus/operations\\.yaml: id: duplicate example id "${first.id}" \\(also in ${quote(dir)}/corpus/extra\\.jsonl\\)`,
      ),
    );
  });

  it('an example of several megabytes is refused above the documented size, naming the file, the line and the field', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'corpus/extra.jsonl'), (text) => {
      const record = JSON.parse(text.split('\n')[1]!) as { id: string; goal: string };
      const huge = { ...record, id: 'huge-example-01', goal: 'Members book courts and pay online. '.repeat(120_000) };
      return `${text.trimEnd()}\n${JSON.stringify(huge)}\n`;
    });
    expect(statSync(path.join(dir, 'corpus/extra.jsonl')).size).toBeGreaterThan(4_000_000);
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/corpus/extra\\.jsonl:13: goal: the example is 4\\.\\d MiB, above the limit of 1\\.0 MiB per example`,
      ),
    );
  });

  it('a goal over the character limit (below the record size limit) names the file, the line, the field and the limit', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'corpus/extra.jsonl'), (text) =>
      text
        .split('\n')
        .map((line, index) =>
          index === 4
            ? JSON.stringify({ ...(JSON.parse(line) as object), goal: 'a very long goal '.repeat(1_500) })
            : line,
        )
        .join('\n'),
    );
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/corpus/extra\\.jsonl:5: goal: 2550\\d characters, above the limit of 20000 characters`,
      ),
    );
  });

  it('invalid UTF-8 names the file and the line', async () => {
    const dir = await studyWithDatabase();
    const file = path.join(dir, 'corpus/operations.yaml');
    const bytes = readFileSync(file);
    const at = bytes.indexOf('goal:', 2_000);
    writeFileSync(
      file,
      Buffer.concat([
        bytes.subarray(0, at + 6),
        Buffer.from([0xff, 0xfe, 0x63, 0x61, 0x66, 0xe9, 0x20]),
        bytes.subarray(at + 6),
      ]),
    );
    const line = bytes.subarray(0, at).toString('utf8').split('\n').length;
    await expectRefused(dir, new RegExp(`^kloop: ${quote(file)}:${line}: .*not valid UTF-8`));
  });

  it('a corpus path that does not exist names kloop.yaml, the line and the entry', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'kloop.yaml'), (text) => text.replace('  - corpus/*.jsonl', '  - corpus/missing.jsonl'));
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/kloop\\.yaml:\\d+: corpus\\[1\\]: file not found: ${quote(dir)}/corpus/missing\\.jsonl`,
      ),
    );
  });

  it('an editableSections entry naming no section of the artifact names program.md, the line and the entry', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'program.md'), (text) => text.replace('  - stopList\n', '  - stopLsit\n'));
    const line =
      readFileSync(path.join(dir, 'program.md'), 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('stopLsit')) + 1;
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/program\\.md:${line}: editableSections\\[3\\]: "stopLsit" is no section of the artifact playbook\\.yaml \\(its sections: .*stopList`,
      ),
    );
  });

  it('a corpus pattern that matches no file names kloop.yaml, the line and the pattern', async () => {
    const dir = await studyWithDatabase();
    edit(path.join(dir, 'kloop.yaml'), (text) => text.replace('  - corpus/*.jsonl', '  - corpus/*.jsnol.jsonl'));
    await expectRefused(
      dir,
      new RegExp(
        `^kloop: ${quote(dir)}/kloop\\.yaml:\\d+: corpus\\[1\\]: the corpus pattern "corpus/\\*\\.jsnol\\.jsonl" matches no file`,
      ),
    );
  });

  it('a study folder that does not exist is named', async () => {
    const dir = path.join(makeStudy(cleanups), 'nowhere');
    await expectRefused(dir, new RegExp(`^kloop: ${quote(dir)}: the study folder does not exist`));
  });

  const asUser = readOnlyUser();
  if (asUser === undefined)
    console.warn(
      'skipped: the tests run as root and `nobody` cannot reach this repository (a folder on the way is closed to other users)',
    );
  it.skipIf(asUser === undefined)(
    'a read-only study folder is refused before anything is written (no database appears)',
    async () => {
      const dir = makeStudy(cleanups);
      // Root writes anywhere: run the child as `nobody`, for whom the folder is read-only.
      const walk = (target: string): void => {
        const isDirectory = statSync(target).isDirectory();
        if (isDirectory) for (const entry of readdirSync(target)) walk(path.join(target, entry));
        chmodSync(target, isDirectory ? 0o555 : 0o444);
      };
      walk(dir);
      cleanups.push(() => chmodSync(dir, 0o755));
      const before = databaseState(dir);
      expect(before).toBe('absent absent');
      const result = await runKloop(['run', dir], asUser);
      const message = result.stderr.trim();
      expect(result.code, message).toBe(2);
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toMatch(
        new RegExp(
          `^kloop: ${quote(dir)}: is read-only \\(EACCES\\): kloop run writes the study's lab notebook to ${quote(databaseFile(dir))}`,
        ),
      );
      expect(databaseState(dir)).toBe(before);
    },
  );
});
