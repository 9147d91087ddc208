/** The proposer's history carries each evaluated candidate's optimization composite (what the search proposer learns from). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../proposers/proposer.ts';
import { createStudy } from './create-study.ts';
import { executeWordList, wordExamples } from '../test-support/word-list-study.ts';

const examples = wordExamples;
const execute = executeWordList;
const score = (output: unknown, expected: unknown) => ({ pass: output === expected });

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the history a proposer reads', () => {
  it('gives every evaluated candidate its optimization composite, refused ones too', async () => {
    const storage = mkdtempSync(path.join(tmpdir(), 'kloop-history-scores-'));
    folders.push(storage);
    const seen: HistoryEntry[][] = [];
    let round = 0;
    const study = await createStudy({
      storage,
      artifact: 'apple\n',
      examples,
      score,
      outcome: 'binary',
      execute,
      proposer: ({ incumbentText, history }) => {
        seen.push([...history]);
        round += 1;
        // Round 1: five words (6 of 8 right, accepted first) and one word (rebased onto the five, which already hold it: refused); round 2: nothing new.
        return round === 1
          ? [{ text: `${incumbentText}pear\n` }, { text: `${incumbentText}pear\nplum\nfig\nkiwi\nlime\n` }]
          : [];
      },
      stopping: { maxRounds: 2, plateauRounds: 5 },
    });
    try {
      await study.optimize();
    } finally {
      await study.close();
    }
    expect(seen[0]).toEqual([]);
    expect(seen[1]!.map((entry) => [entry.decision, entry.optimizationScore])).toEqual([
      ['accepted', 0.75],
      ['refused', 0.75],
    ]);
  });
});
