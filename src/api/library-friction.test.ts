/**
 * Issue #35, item 5, "Library friction": a study whose outputs the caller
 * produces (no `execute`: the seed's outputs given once, each candidate's to
 * `tell()`), advice a library study can follow (not `kloop eval`, which needs
 * a kloop.yaml), and a documented progress listener for `optimize()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isKloopError } from '../errors.ts';
import type { CreateStudyOptions } from './create-study.ts';
import { createStudy } from './create-study.ts';
import { printProgress } from './progress.ts';
import { wasTried } from '../proposers/proposer.ts';
import type { RunEvent } from '../loop/run-study.ts';

const root = mkdtempSync(path.join(tmpdir(), 'kloop-library-friction-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Reviews and their sentiment; the artifact is the list of positive words. */
const REVIEWS = [
  ['o1', 'great phone', 'positive', 'optimization'],
  ['o2', 'superb screen', 'positive', 'optimization'],
  ['o3', 'superb battery', 'positive', 'optimization'],
  ['o4', 'superb camera', 'positive', 'optimization'],
  ['o5', 'superb sound', 'positive', 'optimization'],
  ['o6', 'superb case', 'positive', 'optimization'],
  ['o7', 'bad cable', 'negative', 'optimization'],
  ['a1', 'great price', 'positive', 'anchor'],
  ['a2', 'awful box', 'negative', 'anchor'],
  ['s1', 'superb keys', 'positive', 'shadow'],
  ['s2', 'superb grip', 'positive', 'shadow'],
  ['s3', 'superb speed', 'positive', 'shadow'],
  ['s4', 'superb fit', 'positive', 'shadow'],
  ['s5', 'superb look', 'positive', 'shadow'],
  ['s6', 'poor menu', 'negative', 'shadow'],
] as const;
const examples = REVIEWS.map(([id, input, expected, partition]) => ({ id, input, expected, partition }));
/** What the caller's own workflow answers (run elsewhere: kloop never calls it). */
const classify = (artifact: string, input: string): string =>
  artifact.split(',').some((word) => input.includes(word.trim())) ? 'positive' : 'negative';
const outputsOf = (artifact: string) =>
  examples.map((example) => ({ exampleId: example.id, output: classify(artifact, example.input) }));

function options(
  name: string,
  extra: Partial<CreateStudyOptions<string, string, string>> = {},
): CreateStudyOptions<string, string, string> {
  return {
    storage: path.join(root, name),
    artifact: 'great',
    examples,
    score: (output, expected) => output === expected,
    outcome: 'binary',
    proposer: () => [{ text: 'great, superb', rationale: 'superb is positive' }],
    stopping: { maxRounds: 1 },
    ...extra,
  };
}

describe('the library without execute: the caller gives the outputs (issue #35, item 5)', () => {
  it("the seed's outputs once, a candidate's to tell(): kloop scores them and the gate accepts, the shadow confirming", async () => {
    const study = await createStudy(options('caller-outputs', { seedOutputs: outputsOf('great') }));
    try {
      const [candidate] = await study.ask();
      expect(candidate!.text).toBe('great, superb');
      const told = await study.tell(candidate!, outputsOf(candidate!.text));
      expect(told).toMatchObject({ decision: 'accepted', reason: 'accepted' });
      // The accepted artifact's outputs were stored: best() scores it without asking for them again.
      expect((await study.best()).scores).toEqual({ optimization: 1, anchor: 1, shadow: 1 });
    } finally {
      await study.close();
    }
  });

  it('a needed output never given is an InputError naming the example and what to give', async () => {
    const study = await createStudy(options('no-seed-outputs'));
    try {
      const error = await study.ask().then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(isKloopError(error) && error.exitCode).toBe(2);
      expect((error as Error).message).toBe(
        "seedOutputs: no output for example \"o1\" (repeat 0) of the seed artifact: this study has no execute, so kloop scores the outputs you give — the seed's as createStudy({ seedOutputs }), a candidate's as tell(candidate, results), each for every example of every partition (an artifact's outputs once given are stored and reused)",
      );
    } finally {
      await study.close();
    }
    const told = await createStudy(options('no-candidate-outputs', { seedOutputs: outputsOf('great') }));
    try {
      const [candidate] = await told.ask();
      await expect(told.tell(candidate!)).rejects.toThrow(
        /^results: no output for example "o1" \(repeat 0\) of the artifact [0-9a-f]{12}: this study has no execute/,
      );
    } finally {
      await told.close();
    }
  });

  it("seedOutputs are checked as tell()'s results: an unknown example is refused before anything is written", async () => {
    await expect(
      createStudy(options('bad-seed-outputs', { seedOutputs: [{ exampleId: 'nope', output: 'positive' }] })),
    ).rejects.toThrow('no example "nope"');
  });
});

describe('advice a library study can follow, and progress for optimize()', () => {
  it('an incumbent with no valid output names execute, not `kloop eval` (which cannot read a library study)', async () => {
    const study = await createStudy(
      options('failing-execute', {
        execute: () => {
          throw new Error('model offline');
        },
      }),
    );
    try {
      const result = await study.optimize();
      expect(result.stopReason).toBe('infrastructure_failure');
      expect(result.stopDetail).toContain(
        '(o1: error: execute threw: model offline); check the executor by calling your execute function on that example yourself (`kloop eval` needs a kloop.yaml, which a library study has not;',
      );
      expect(result.stopDetail).not.toContain('check the executor with `kloop eval`');
    } finally {
      await study.close();
    }
  });

  it('printProgress(): one line per event, as kloop run prints them (stderr by default)', async () => {
    const lines: string[] = [];
    const study = await createStudy(
      options('progress', { execute: classify, onEvent: printProgress((line) => lines.push(line)) }),
    );
    try {
      await study.optimize();
    } finally {
      await study.close();
    }
    expect(lines[0]).toMatch(/^run 1: evaluator [0-9a-f]{16}, 0 experiments so far, incumbent version 1$/);
    expect(lines).toContain('round 1: 1 candidates proposed');
    expect(lines).toContain('  #1 accepted (accepted) [optimization 1.0000]: - great / + great, superb');
    expect(lines).toContain('round 1 done: 1 accepted, 0 refused; best optimization composite 1.0000');
    expect(lines.at(-1)).toBe('stopped: max_rounds — 1 rounds run (limit 1)');
  });

  it('wasTried(context, text): a proposer that checks it offers nothing twice, so no candidate is skipped as a duplicate', async () => {
    const events: RunEvent[] = [];
    const offered: string[][] = [];
    const study = await createStudy(
      options('tried', {
        execute: classify,
        stopping: { maxRounds: 3 },
        onEvent: (event) => events.push(event),
        proposer: (context) => {
          const fresh = ['great, superb', 'great, superb, fine'].filter((text) => !wasTried(context, text));
          offered.push(fresh);
          return fresh.slice(0, 1).map((text) => ({ text, rationale: 'a positive word' }));
        },
      }),
    );
    try {
      await study.optimize();
    } finally {
      await study.close();
    }
    // Nothing left untried: the idle asks the patience allows (src/loop/idle-patience.ts) end the run as
    // no_new_proposals, without a skipped row.
    expect(offered).toEqual([
      ['great, superb', 'great, superb, fine'],
      ['great, superb, fine'],
      [],
      [],
      [],
      [],
      [],
      [],
    ]);
    expect(
      events.filter((event) => event.type === 'decision').map((event) => (event as { decision: string }).decision),
    ).toEqual(['accepted', 'refused']);
  });
});
