import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { StudyBusyError } from '../storage/lease.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { createStudy } from './create-study.ts';
import { executeWordList, wordExamples } from '../test-support/word-list-study.ts';

// A tiny workflow: the artifact lists words; an input is "right" when the artifact names its word.
const examples = wordExamples;
const execute = executeWordList;
const score = (output: unknown, expected: unknown) => ({
  pass: output === expected,
  reason: output === expected ? '' : `expected ${String(expected)}`,
});

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
      const given = examples
        .filter((example) => example.partition === 'optimization')
        .map((example) => ({ exampleId: example.id, output: example.expected }));
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
    await expect(
      createStudy({
        storage: folder(),
        artifact: 'x',
        examples: examples.filter((example) => example.partition !== 'anchor'),
        score,
        execute,
        proposer: () => [],
      }),
    ).rejects.toThrow(/no example in the anchor partition/);
    const error = await createStudy({
      storage: folder(),
      artifact: 'x',
      examples: [{ ...examples[0]!, id: 'bad id!' }, ...examples],
      score,
      execute,
      proposer: () => [],
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).field).toBe('examples[0].id');
    await expect(
      createStudy({
        storage: folder(),
        artifact: 'x',
        examples,
        score,
        execute,
        proposer: () => [],
        gate: { alpha: 2 },
      }),
    ).rejects.toThrow(/gate\.alpha/);
    await expect(
      createStudy({ storage: folder(), artifact: 'x', examples, execute, proposer: () => [] }),
    ).rejects.toThrow(/a task or a score function/);
  });

  it('refuses a candidate it did not ask for, and keeps one writer per study', async () => {
    const storage = folder();
    const study = await createStudy({
      storage,
      artifact: 'apple\n',
      examples,
      score,
      execute,
      proposer: ({ incumbentText }) => [{ text: `${incumbentText}pear\n` }],
    });
    try {
      await expect(study.tell({ text: 'apple\npear\n', delta: '+ pear', rationale: '' })).rejects.toThrow(
        /candidate of the last ask/,
      );
      await expect(
        createStudy({ storage, artifact: 'apple\n', examples, score, execute, proposer: () => [] }),
      ).rejects.toBeInstanceOf(StudyBusyError);
      // Its advice is the library's, not the CLI's --wait.
      await expect(
        createStudy({ storage, artifact: 'apple\n', examples, score, execute, proposer: () => [] }),
      ).rejects.toThrow(/; close\(\) the study there, or let its run end, then create it again$/);
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

describe('createStudy from plain JavaScript: what the types do not check', () => {
  const base = (storage: string) => ({
    storage,
    artifact: 'apple\n',
    examples,
    score,
    outcome: 'binary' as const,
    execute,
    executorId: 'words@1',
    proposer: ({ incumbentText }: { incumbentText: string }) => [
      { text: `${incumbentText}pear\nplum\nfig\nkiwi\nlime\n`, rationale: 'five fruits' },
      { text: `${incumbentText}pear\n`, rationale: 'one fruit' },
    ],
  });

  it('tells given at once are decided one after another: the second is gated against the first', async () => {
    const decisions = async (parallel: boolean): Promise<string[]> => {
      const study = await createStudy(base(folder()));
      try {
        const candidates = await study.ask();
        const told = parallel
          ? await Promise.all(candidates.map((candidate) => study.tell(candidate)))
          : [await study.tell(candidates[0]!), await study.tell(candidates[1]!)];
        return [...told.map((result) => `${result.decision} ${result.reason}`), `v${(await study.best()).versionId}`];
      } finally {
        await study.close();
      }
    };
    const sequential = await decisions(false);
    // Before, both were gated against the seed and both accepted: the active version became the smaller edit (v3).
    expect(sequential).toEqual(['accepted accepted', 'refused below_margin', 'v2']);
    expect(await decisions(true)).toEqual(sequential);
  });

  it('two optimize() at once run one after the other: no candidate is decided twice', async () => {
    const storage = folder();
    const study = await createStudy(base(storage));
    try {
      const [first, second] = await Promise.all([study.optimize(), study.optimize()]);
      // Evaluated and decided: the skipped duplicates of each run are not counted.
      expect([first.newExperiments, second.newExperiments]).toEqual([2, 0]);
      expect(first.best.versionId).toBe(2);
      expect(second.best.versionId).toBe(2);
    } finally {
      await study.close();
    }
    const db = await openDatabase(studyDatabasePath(storage), { readonly: true });
    const rows = await db
      .selectFrom('experiments')
      .select(['experiments.decision', 'experiments.candidate_hash', 'experiments.run_id', 'experiments.reason'])
      .execute();
    await db.destroy();
    // Before, both runs gated the same candidates (run ids 1 and 2, the same candidate accepted twice).
    const decided = rows.filter((row) => row.decision !== 'skipped');
    expect(decided.map((row) => `${row.run_id} ${row.decision}`)).toEqual(['1 accepted', '1 refused']);
    expect(rows.filter((row) => row.run_id === 2).every((row) => row.reason === 'duplicate')).toBe(true);
  });

  it('best() before the first ask() names the seed as version 1 (it said 0, a version no command knows); after close() it is refused', async () => {
    const study = await createStudy(base(folder()));
    const before = await study.best();
    expect(before).toMatchObject({ versionId: 1, text: 'apple\n' });
    const candidates = await study.ask();
    expect((await study.tell(candidates[0]!)).decision).toBe('accepted');
    expect((await study.best()).versionId).toBe(2);
    await study.close();
    await expect(study.best()).rejects.toMatchObject({
      field: 'study',
      message: expect.stringContaining('the study is closed'),
    });
  });

  it('refuses a call back into the study from its own proposer instead of waiting for itself', async () => {
    let inner: unknown;
    const holder: { study?: Awaited<ReturnType<typeof createStudy>> } = {};
    const study = await createStudy({
      ...base(folder()),
      proposer: async ({ incumbentText }: { incumbentText: string }) => {
        inner = await holder.study!.ask().catch((error: unknown) => error);
        return [{ text: `${incumbentText}pear\n` }];
      },
    });
    holder.study = study;
    try {
      await study.optimize();
      expect(inner).toBeInstanceOf(InputError);
      expect((inner as InputError).message).toContain(
        "ask() was called from within this study's optimize() (a proposer, execute or onEvent calling back into the study): it would wait for itself",
      );
    } finally {
      await study.close();
    }
  });

  it('refuses bad options with the field, before anything is written', async () => {
    const storage = folder();
    const refused = async (extra: Record<string, unknown>): Promise<InputError> => {
      const error = await createStudy({ ...base(storage), ...extra } as never).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(InputError);
      return error as InputError;
    };
    // concurrency 0 used to loop for ever (a round with nothing evaluated, again and again).
    expect(await refused({ concurrency: 0 })).toMatchObject({
      field: 'concurrency',
      message: expect.stringContaining('concurrency must be an integer ≥ 1, got number 0'),
    });
    expect(await refused({ candidatesPerRound: 2.5 })).toMatchObject({ field: 'candidatesPerRound' });
    expect(await refused({ seed: 'abc' })).toMatchObject({ field: 'seed' });
    expect(await refused({ execute: 42 })).toMatchObject({
      field: 'execute',
      message: expect.stringContaining('execute must be a function (artifact, input, context) → output, got '),
    }); // optional (the caller may give the outputs), but a function when given
    expect(await refused({ maxExperiments: 2 })).toMatchObject({
      field: 'maxExperiments',
      message: expect.stringContaining(
        'unknown option "maxExperiments" (a stopping criterion: give it as stopping: { maxExperiments: … })',
      ),
    });
    expect(await refused({ weights: { score: Number.NaN } })).toMatchObject({ field: 'weights.score' });
    expect(await refused({ examples: [null] })).toMatchObject({ field: 'examples[0]' });
    expect(await refused({ proposer: { propose: () => [] } })).toMatchObject({ field: 'proposer.id' });
    expect(await refused({ storage: 42 })).toMatchObject({ field: 'storage' });
    // editableSections without sectionsOf used to be ignored: every section could change.
    const program =
      '## Instructions\n\nAdd fruits.\n\n## Constraints\n\n```yaml\neditableSections: [fruits]\n```\n\n## Stopping criteria\n\nDefaults.\n';
    expect(await refused({ program })).toMatchObject({
      field: 'program.editableSections[0]',
      message: expect.stringContaining('"fruits" is no section of the artifact (its sections: none): give sectionsOf'),
    });
    // A setting accepted is honoured: the library does not calibrate, so requireCalibration needs one given.
    expect(await refused({ gate: { requireCalibration: true } })).toMatchObject({ field: 'gate.requireCalibration' });
    expect(await refused({ calibration: { noiseSd: Number.NaN, exampleSds: {} } })).toMatchObject({
      field: 'calibration',
    });
    const { existsSync } = await import('node:fs');
    expect(existsSync(path.join(storage, '.kloop'))).toBe(false);
  });

  it('counts a proposer answer that is not candidates as a failed answer, never a crash', async () => {
    const five = 'apple\npear\nplum\nfig\nkiwi\nlime\n';
    const answers: unknown[] = [
      undefined,
      'two ideas',
      [null, { text: 5 }, { text: five, delta: 7 }],
      { candidates: [{ text: five }] },
    ];
    const study = await createStudy({
      ...base(folder()),
      proposer: () => answers.shift() as never,
      stopping: { maxConsecutiveFailures: 10, plateauRounds: 3 },
    });
    try {
      const failed = [await study.ask(), await study.ask(), await study.ask()];
      expect(failed).toEqual([[], [], []]);
      const accepted = await study.ask();
      expect(accepted.map((candidate) => candidate.text)).toEqual([five]);
      expect((await study.tell(accepted[0]!)).decision).toBe('accepted');
    } finally {
      await study.close();
    }
  });

  it('an onEvent listener that throws or rejects neither stops the study nor crashes the process: one warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }): void => {
      if (warning.code === 'KLOOP_ON_EVENT') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    let calls = 0;
    const study = await createStudy({
      ...base(folder()),
      onEvent: (() => {
        calls += 1;
        if (calls % 2 === 0) return Promise.reject(new Error('async listener bug'));
        throw new Error('listener bug');
      }) as never,
    });
    try {
      const result = await study.optimize();
      expect(result.best.versionId).toBe(2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls).toBeGreaterThan(2);
      expect(warnings).toEqual([
        'the onEvent listener failed (the study goes on; later failures are not reported): listener bug',
      ]);
    } finally {
      process.off('warning', onWarning);
      await study.close();
    }
  });

  it('an abort stops a workflow that never settles, and tell() rejects results it cannot take', async () => {
    const controller = new AbortController();
    const study = await createStudy({
      ...base(folder()),
      execute: (artifact: string, input: string) =>
        artifact.includes('pear') ? new Promise<string>(() => undefined) : execute(artifact, input),
      signal: controller.signal,
    });
    try {
      const candidates = await study.ask();
      await expect(study.tell(candidates[0]!, {} as never)).rejects.toMatchObject({ field: 'results' });
      await expect(study.tell(candidates[0]!, [{ exampleId: 'o1', output: 'pear', repeat: 1 }])).rejects.toMatchObject({
        field: 'results[0].repeat',
      });
      await expect(
        study.tell(candidates[0]!, [
          { exampleId: 'o1', output: 'pear' },
          { exampleId: 'o1', output: 'x' },
        ]),
      ).rejects.toMatchObject({ field: 'results[1]' });
      const hanging = study.tell(candidates[0]!);
      setTimeout(() => controller.abort(new Error('user cancel')), 50);
      await expect(hanging).rejects.toThrow('user cancel');
    } finally {
      await study.close();
    }
  });
});
