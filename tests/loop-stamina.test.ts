/**
 * Stamina and memory (issue 34, item 3): a proposer that keeps repeating a
 * tried candidate but still holds one good unseen idea is asked again — told
 * which candidates it repeated, with a fresh sample — until it offers the
 * idea, within a patience that scales with the budget left; the repeats are
 * recorded as skipped duplicates, never dropped silently.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Proposer, ProposalContext } from '../src/proposers/proposer.ts';
import { openDatabase } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { idlePatience } from '../src/loop/engine.ts';
import { makeSmallStudy } from './small-intent-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('stamina: asking again when the answers repeat', () => {
  it('patience is stopping.idleRounds plus one ask per two rounds of budget left', () => {
    expect(idlePatience(1, 19, 1)).toBe(10);
    expect(idlePatience(2, 9, 1)).toBe(6);
    expect(idlePatience(2, 39, 4)).toBe(6);
    expect(idlePatience(2, 19, 4)).toBe(4);
    expect(idlePatience(2, 7, 4)).toBe(2);
    expect(idlePatience(2, 0, 4)).toBe(2);
  });

  it('finds the one good idea a repeating proposer still holds, and records every repeat', async () => {
    const small = makeSmallStudy({
      optimization: 40,
      anchor: 10,
      shadow: 22,
      config: [
        'proposer: { candidatesPerRound: 1 }',
        'stopping: { maxExperiments: 20, plateauRounds: 10, idleRounds: 1 }',
      ],
    });
    cleanups.push(small.cleanup);
    const loaded = loadStudy(small.dir);
    const neutral = loaded.artifactText.replace('approval: [approve, approval]', 'approval: [approve, approval, zzqx]');
    const good = loaded.artifactText.replace('layoutCues: false', 'layoutCues: true');
    expect(neutral).not.toBe(loaded.artifactText);
    expect(good).not.toBe(loaded.artifactText);
    const asks: Array<{ repeated: readonly string[] }> = [];
    const repeating: Proposer = {
      id: 'repeating@1',
      async propose(context: ProposalContext) {
        asks.push({ repeated: context.repeatedDeltas ?? [] });
        // It repeats the neutral idea until it has been told twice that it repeats itself.
        const toldTwice = asks.filter((ask) => ask.repeated.length > 0).length >= 2;
        if (toldTwice && context.incumbentText === loaded.artifactText)
          return {
            candidates: [{ text: good, delta: 'extraction.layoutCues = true', rationale: 'read the layout' }],
            failures: [],
          };
        return {
          candidates: [{ text: neutral, delta: 'behaviorCues.approval += "zzqx"', rationale: 'again' }],
          failures: [],
        };
      },
    };
    const db = await openDatabase(':memory:');
    cleanups.push(() => db.destroy());
    const outcome = await runStudy({ study: { ...loaded, proposer: repeating }, notebook: openNotebook(db) });
    const rows = await db.selectFrom('experiments').select(['delta', 'decision', 'reason']).orderBy('id').execute();
    // Ask 1: the neutral idea, judged; asks 2 and 3 repeat it (recorded as skipped), the 3rd told of it twice;
    // ask 4 brings the good idea, accepted. With the old rule (stop after stopping.idleRounds = 1 idle ask) the run
    // would have stopped after ask 2.
    expect(rows.slice(0, 4).map((row) => `${row.decision} ${row.reason} ${row.delta}`)).toEqual([
      'refused below_margin behaviorCues.approval += "zzqx"',
      'skipped duplicate behaviorCues.approval += "zzqx"',
      'skipped duplicate behaviorCues.approval += "zzqx"',
      'accepted accepted extraction.layoutCues = true',
    ]);
    expect(asks.slice(0, 4).map((ask) => ask.repeated)).toEqual([
      [],
      [],
      ['behaviorCues.approval += "zzqx"'],
      ['behaviorCues.approval += "zzqx"'],
    ]);
    expect(outcome.stopReason).toBe('no_new_proposals');
  });
});
