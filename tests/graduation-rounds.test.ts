/**
 * Graduation cannot deadlock (issue 19, item 2): in a study where no
 * candidate ever passes (so no decision ever consults the shadow), shadow
 * examples still graduate after `corpusPolicy.graduateAfterRounds` rounds,
 * `rotateSlice` per round boundary, while the shadow is larger than the
 * optimization partition and never below its minimum; and changing the
 * setting changes when they graduate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_SHADOW_EXAMPLES } from '../src/corpus/lifecycle.ts';
import { readCorpusEvents, readDecisionRecords } from '../src/corpus/lifecycle-store.ts';
import type { Proposer } from '../src/proposers/proposer.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { makeSmallStudy } from './small-intent-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

/** Proposes edits that change nothing measurable: a booking cue word no goal contains. Every one is refused. */
function uselessProposer(): Proposer {
  let serial = 0;
  return {
    id: 'useless-test-proposer',
    propose: async (context) => ({
      failures: [],
      candidates: Array.from({ length: context.maxCandidates }, () => {
        serial += 1;
        const cue = `zzqx${serial}`;
        return {
          text: context.incumbentText.replace('booking: [book,', `booking: [${cue}, book,`),
          delta: `appTypeCues.booking += "${cue}"`,
          rationale: 'a cue word that appears in no goal',
        };
      }),
    }),
  };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function runWithoutPassingCandidates(graduateAfterRounds: number, sizes = { optimization: 6, shadow: 9 }) {
  const study = makeSmallStudy({
    optimization: sizes.optimization,
    anchor: 3,
    shadow: sizes.shadow,
    config: [
      'proposer: { candidatesPerRound: 2, concurrency: 1 }',
      'stopping: { maxExperiments: 100, plateauRounds: 50, maxRounds: 6 }',
      `corpusPolicy: { graduateAfterRounds: ${graduateAfterRounds}, rotateSlice: 2, graduateAfterDecisions: 1000, maxShadowExposures: 1000 }`,
    ],
  });
  cleanups.push(study.cleanup);
  const loaded = loadStudy(study.dir, { createProposer: uselessProposer });
  const db = await openDatabase(studyDatabasePath(study.dir));
  cleanups.push(() => void db.destroy());
  const messages: string[] = [];
  const outcome = await runStudy({
    study: loaded,
    notebook: openNotebook(db),
    onCorpusChange: (change) => messages.push(change.message),
  });
  const decisions = await readDecisionRecords(openNotebook(db));
  const rounds = await db.selectFrom('experiments').select(['id', 'round', 'decision']).orderBy('id').execute();
  const lastOfRound = (round: number): number =>
    Math.max(...rounds.filter((row) => row.round === round).map((row) => row.id));
  const graduated = (await readCorpusEvents(openNotebook(db))).filter((event) => event.kind === 'graduated');
  return {
    outcome,
    decisions,
    rounds,
    lastOfRound,
    graduated,
    messages,
    shadow: loaded.partitions.shadow.length,
    optimization: loaded.partitions.optimization.length,
  };
}

describe('graduation by rounds in a study where no candidate ever passes', () => {
  it('graduates shadow examples after graduateAfterRounds rounds, rotateSlice at a time, while the shadow is the larger partition', async () => {
    const result = await runWithoutPassingCandidates(2);
    expect(result.outcome.stopReason).toBe('max_rounds');
    expect(result.rounds.every((row) => row.decision === 'refused')).toBe(true);
    expect(result.decisions.some((decision) => decision.shadowConsulted)).toBe(false);
    // Served 2 rounds at the boundary after round 2: 9 > 6 and 8 > 7 graduate 2; then the shadow (7) is no
    // larger than optimization (8), and the examples due by rounds alone wait: time does not drain the shadow.
    expect(result.graduated.map((event) => event.experimentId)).toEqual([result.lastOfRound(2), result.lastOfRound(2)]);
    expect(
      result.graduated.every(
        (event) =>
          event.reason.startsWith('served ') && event.reason.endsWith('rounds in shadow (graduateAfterRounds 2)'),
      ),
    ).toBe(true);
    expect([result.optimization, result.shadow]).toEqual([8, 7]);
    expect(result.messages.filter((message) => message.includes('graduated into optimization'))).toHaveLength(1);
  }, 60_000);

  it('never takes the shadow below its minimum', async () => {
    // 2 in optimization, 8 in shadow: 2 graduate after round 2 (8 > 2, 7 > 3), 1 after round 3 (6 > 4), then the floor of 5 holds.
    const result = await runWithoutPassingCandidates(2, { optimization: 2, shadow: 8 });
    expect(result.graduated.map((event) => event.experimentId)).toEqual([
      result.lastOfRound(2),
      result.lastOfRound(2),
      result.lastOfRound(3),
    ]);
    expect(result.shadow).toBe(MIN_SHADOW_EXAMPLES);
  }, 60_000);

  it('honours the setting: with graduateAfterRounds 3 the first graduation waits one more round', async () => {
    const result = await runWithoutPassingCandidates(3);
    expect(result.graduated.map((event) => event.experimentId)).toEqual([result.lastOfRound(3), result.lastOfRound(3)]);
    expect(result.graduated[0]!.reason).toBe('served 3 rounds in shadow (graduateAfterRounds 3)');
  }, 60_000);
});
