import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { StudyBusyError } from '../storage/lease.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { createStudy, type StudyExample } from './create-study.ts';

// A tiny workflow: the artifact lists words; an input is "right" when the artifact names its word.
const words = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date', 'lemon', 'mango', 'peach', 'grape', 'melon'];
const examples: StudyExample<string, string>[] = [
  ...words.slice(0, 8).map((word, index) => ({ id: `o${index}`, input: `I want ${word}`, expected: word, partition: 'optimization' as const })),
  { id: 'a0', input: 'I want apple', expected: 'apple', partition: 'anchor' },
  ...words.slice(0, 6).map((word, index) => ({ id: `s${index}`, input: `give me ${word} now`, expected: word, partition: 'shadow' as const })),
];
const execute = (artifact: string, input: string): string => artifact.split(/\s+/).find((word) => word !== '' && input.includes(word)) ?? 'none';
const score = (output: unknown, expected: unknown) => ({ pass: output === expected, reason: output === expected ? '' : `expected ${String(expected)}` });

const folders: string[] = [];
function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-api-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('createStudy', () => {
  it('asks for candidates and tells them to the gate, on a notebook the CLI reads', async () => {
    const storage = folder();
    const study = await createStudy({
      storage,
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute,
      executorId: 'words@1',
      proposer: ({ incumbentText }) => [
        { text: `${incumbentText}pear\nplum\nfig\nkiwi\nlime\n`, rationale: 'five fruits' },
        { text: `${incumbentText}melon\n`, rationale: 'a fruit nobody asked for' },
      ],
    });
    try {
      const candidates = await study.ask();
      expect(candidates.map((candidate) => candidate.rationale)).toEqual(['five fruits', 'a fruit nobody asked for']);
      const first = await study.tell(candidates[0]!);
      expect(first.decision).toBe('accepted');
      expect(first.gate?.checks.find((check) => check.name === 'significance')?.detail).toMatch(/McNemar/);
      const second = await study.tell(candidates[1]!);
      expect(second.decision).toBe('refused');
      const best = await study.best();
      expect(best.versionId).toBe(2);
      expect(best.text).toBe('apple\npear\nplum\nfig\nkiwi\nlime\n');
      expect(best.scores).toEqual({ optimization: 6 / 8, anchor: 1, shadow: 1 });
    } finally {
      await study.close();
    }
    const db = await openDatabase(studyDatabasePath(storage), { readonly: true });
    const rows = await db.selectFrom('experiments').select(['id', 'decision']).orderBy('id').execute();
    await db.destroy();
    expect(rows.map((row) => row.decision)).toEqual(['accepted', 'refused']);
  });

  it('scores outputs given to tell() instead of executing them', async () => {
    const calls: Array<{ artifact: string; input: string }> = [];
    const study = await createStudy({
      storage: folder(),
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute: (artifact: string, input: string) => {
        calls.push({ artifact, input });
        return execute(artifact, input);
      },
      proposer: ({ incumbentText }) => [{ text: `${incumbentText}pear\n` }],
    });
    try {
      const [candidate] = await study.ask();
      const given = examples.filter((example) => example.partition === 'optimization').map((example) => ({ exampleId: example.id, output: example.expected }));
      const told = await study.tell(candidate!, given);
      // The 8 optimization outputs given (all right, though the artifact would get 2 right) are scored, never executed.
      expect(told.optimization).toBe(1);
      const ofCandidate = calls.filter((call) => call.artifact === candidate!.text).map((call) => call.input);
      expect(ofCandidate.some((input) => input.startsWith('I want ') && input !== 'I want apple')).toBe(false);
      expect(ofCandidate).toContain('I want apple'); // the anchor was executed
    } finally {
      await study.close();
    }
  });

  it('refuses what it cannot use, naming the field', async () => {
    await expect(createStudy({ storage: folder(), artifact: 'x', examples: examples.filter((example) => example.partition !== 'anchor'), score, execute, proposer: () => [] })).rejects.toThrow(/no example in the anchor partition/);
    const error = await createStudy({ storage: folder(), artifact: 'x', examples: [{ ...examples[0]!, id: 'bad id!' }, ...examples], score, execute, proposer: () => [] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).field).toBe('examples[0].id');
    await expect(createStudy({ storage: folder(), artifact: 'x', examples, score, execute, proposer: () => [], gate: { alpha: 2 } })).rejects.toThrow(/gate\.alpha/);
    await expect(createStudy({ storage: folder(), artifact: 'x', examples, execute, proposer: () => [] })).rejects.toThrow(/a task or a score function/);
  });

  it('refuses a candidate it did not ask for, and keeps one writer per study', async () => {
    const storage = folder();
    const study = await createStudy({ storage, artifact: 'apple\n', examples, score, execute, proposer: ({ incumbentText }) => [{ text: `${incumbentText}pear\n` }] });
    try {
      await expect(study.tell({ text: 'apple\npear\n', delta: '+ pear', rationale: '' })).rejects.toThrow(/candidate of the last ask/);
      await expect(createStudy({ storage, artifact: 'apple\n', examples, score, execute, proposer: () => [] })).rejects.toBeInstanceOf(StudyBusyError);
    } finally {
      await study.close();
    }
  });

  it('counts a proposer that throws as a failed answer, and optimize() stops honestly', async () => {
    const study = await createStudy({
      storage: folder(),
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute,
      proposer: () => {
        throw new Error('no ideas today');
      },
      stopping: { maxConsecutiveFailures: 2 },
    });
    try {
      const result = await study.optimize();
      expect(result.stopReason).toBe('consecutive_failures');
      expect(result.newExperiments).toBe(0);
      expect(result.baseline).toEqual({ optimization: 1 / 8, anchor: 1, shadow: 1 / 6 });
      expect(result.best.versionId).toBe(1);
    } finally {
      await study.close();
    }
  });
});
