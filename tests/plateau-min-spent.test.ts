/**
 * `stopping.plateauMinSpent` (issue 34: no run stops with much of its budget
 * unspent while good ideas remain): a plateau stops the run only once that
 * share of `maxExperiments` is evaluated. A proposer that offers three
 * useless ideas before its good one: with the default (0) the plateau stops
 * the run before the good idea is asked for; with 0.75 the run goes on, keeps
 * the good idea and then stops on the plateau it reaches past the floor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { plateauSpendFloor } from '../src/loop/engine-open-round.ts';
import { runStudy } from '../src/loop/run-study.ts';
import type { Proposer } from '../src/proposers/proposer.ts';
import { openDatabase } from '../src/storage/database.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { makeSmallStudy } from './small-intent-study.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs the small study with a proposer whose 4th idea is the good one; the decisions and the stop. */
async function run(plateauMinSpent: number | undefined) {
  const spent = plateauMinSpent === undefined ? '' : `, plateauMinSpent: ${plateauMinSpent}`;
  const small = makeSmallStudy({
    optimization: 40,
    anchor: 10,
    shadow: 22,
    config: [
      'proposer: { candidatesPerRound: 1 }',
      `stopping: { maxExperiments: 8, plateauRounds: 2${spent} }`,
      'gate: { minDeltaDistance: 0 }',
    ],
  });
  cleanups.push(small.cleanup);
  const loaded = loadStudy(small.dir);
  const useless = ['zzqa', 'zzqb', 'zzqc', 'zzqd', 'zzqe', 'zzqf', 'zzqg', 'zzqh'];
  const good = { cue: 'layoutCues', text: loaded.artifactText.replace('layoutCues: false', 'layoutCues: true') };
  expect(good.text).not.toBe(loaded.artifactText);
  let asked = 0;
  const proposer: Proposer = {
    id: 'fourth-is-good@1',
    async propose(context) {
      asked += 1;
      if (asked === 4)
        return {
          candidates: [{ text: good.text, delta: 'extraction.layoutCues = true', rationale: 'layout' }],
          failures: [],
        };
      const word = useless[asked - 1]!;
      const text = context.incumbentText.replace(
        'approval: [approve, approval]',
        `approval: [approve, approval, ${word}]`,
      );
      return { candidates: [{ text, delta: `behaviorCues.approval += "${word}"`, rationale: 'a word' }], failures: [] };
    },
  };
  const db = await openDatabase(':memory:');
  cleanups.push(() => db.destroy());
  const outcome = await runStudy({ study: { ...loaded, proposer }, notebook: openNotebook(db) });
  const rows = await db.selectFrom('experiments').select(['decision', 'delta']).orderBy('id').execute();
  return { outcome, rows: rows.map((row) => `${row.decision} ${row.delta}`) };
}

describe('stopping.plateauMinSpent', () => {
  it('is ⌈share × maxExperiments⌉ experiments, 0 when absent', () => {
    expect(plateauSpendFloor({ maxExperiments: 40 })).toBe(0);
    expect(plateauSpendFloor({ maxExperiments: 40, plateauMinSpent: 0.75 })).toBe(30);
    expect(plateauSpendFloor({ maxExperiments: 30, plateauMinSpent: 0.75 })).toBe(23);
    expect(plateauSpendFloor({ maxExperiments: 8, plateauMinSpent: 1 })).toBe(8);
  });

  it('by default, the plateau stops the run before the good idea is asked for', async () => {
    const { outcome, rows } = await run(undefined);
    expect(outcome.stopReason).toBe('plateau');
    expect(rows).toEqual(['refused behaviorCues.approval += "zzqa"', 'refused behaviorCues.approval += "zzqb"']);
  });

  it('at 0.75, the run goes on past the plateau, keeps the good idea, and stops on the plateau past the floor', async () => {
    const { outcome, rows } = await run(0.75);
    expect(rows.slice(0, 4)).toEqual([
      'refused behaviorCues.approval += "zzqa"',
      'refused behaviorCues.approval += "zzqb"',
      'refused behaviorCues.approval += "zzqc"',
      'accepted extraction.layoutCues = true',
    ]);
    expect(rows).toHaveLength(6);
    expect(outcome.stopReason).toBe('plateau');
    expect(outcome.stopDetail).toContain('6 of 8 experiments evaluated, stopping.plateauMinSpent 0.75');
  });
});
