/**
 * A candidate that makes the server fail is refused, not fatal
 * (docs/reliability.md, "A candidate that makes the server fail"): a
 * loopback server answers HTTP 500 to every prompt of one candidate, after
 * the retries. The candidate is refused `evaluation_failed` with the error,
 * the next candidate is evaluated, a later run tries it once more and then
 * skips it for good; a streak of failing candidates stops the run as an
 * infrastructure failure.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmStudyPlugins } from '../src/providers-subpath.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import type { ChatRequest, FakeResponse, FakeServer } from './llm-fake-openai-server.ts';
import { loopbackFetch } from './llm-fake-openai-server.ts';
import type { LlmStopStudy } from './llm-stop-study.ts';
import { appendToRoles, makeLlmStopStudy, serveStudy } from './llm-stop-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const POISON = 'Poison rule: every role is a reference.';
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord'];

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(
  stopping: string,
  proposer: (chat: ChatRequest, call: number) => FakeResponse,
  fails: (chat: ChatRequest) => boolean,
) {
  const study = makeLlmStopStudy({ stopping });
  cleanups.push(study.cleanup);
  let calls = 0;
  const server = await serveStudy(study, {
    proposer: (chat) => proposer(chat, calls++),
    executor: (chat) =>
      fails(chat)
        ? { status: 500, body: { error: { message: 'the model server crashed on this prompt', type: 'server_error' } } }
        : undefined,
  });
  cleanups.push(() => server.close());
  const db = await openDatabase(studyDatabasePath(study.dir));
  cleanups.push(() => db.destroy());
  return { study, server, db };
}

/** The study through the real provider path on the fake server: one retry after a 500, no waiting between. */
function load(study: LlmStopStudy, server: FakeServer, db: StudyDatabase): LoadedStudy {
  return loadStudy(
    study.dir,
    createLlmStudyPlugins({
      baseURL: server.baseURL,
      deterministic: true,
      getDatabase: () => db,
      fetch: loopbackFetch,
      maxRetries: 1,
      sleep: async () => undefined,
      env: { OPENAI_API_KEY: 'unused' },
    }),
  );
}

async function decisions(db: StudyDatabase) {
  return db
    .selectFrom('experiments')
    .select(['round', 'decision', 'reason', 'delta', 'evidence'])
    .orderBy('id')
    .execute();
}

describe('a candidate the server fails on', () => {
  it('is refused evaluation_failed with the error, the next candidate is evaluated, and a later run tries it once more, then skips it', async () => {
    let poisonOnly = false;
    const { study, server, db } = await setUp(
      'stopping: { maxExperiments: 2, plateauRounds: 10, maxConsecutiveFailures: 3 }',
      (chat, call) =>
        call === 0 || poisonOnly
          ? appendToRoles(chat, POISON)
          : appendToRoles(chat, `Rule ${WORDS[call]}: ${WORDS[call]} roles first.`),
      (chat) => chat.system.includes(POISON),
    );
    const poisoned = (): number => server.requests.filter((chat) => chat.system.includes(POISON)).length;

    const first = await runStudy({ study: load(study, server, db), notebook: openNotebook(db) });
    expect(first.stopReason).toBe('max_experiments');
    const run1 = await decisions(db);
    expect(run1.map(({ round, decision, reason }) => ({ round, decision, reason }))).toEqual([
      { round: 1, decision: 'refused', reason: 'evaluation_failed' },
      { round: 2, decision: 'refused', reason: 'below_margin' }, // the next candidate was evaluated and judged
    ]);
    expect(run1[0]!.delta).toContain(POISON);
    const check = (
      JSON.parse(run1[0]!.evidence) as {
        checks: Array<{ name: string; detail: string; data: { transient: number; total: number } }>;
      }
    ).checks[0]!;
    expect(check.name).toBe('evaluation');
    expect(check.detail).toContain('HTTP 500');
    expect(check.detail).toContain('the model server crashed on this prompt');
    expect(check.data).toEqual({
      transient: 6,
      total: 6,
      messages: [expect.stringContaining('failed 2 times: HTTP 500')],
    }); // 4 optimization + 2 anchor, each tried twice
    const afterFirstRun = poisoned();
    expect(afterFirstRun).toBe(12);

    // A later run whose proposer offers the same candidate every round: evaluated once more, and never again.
    poisonOnly = true;
    const second = load(study, server, db);
    second.stopping.maxExperiments = 10;
    const again = await runStudy({ study: second, notebook: openNotebook(db) });
    expect(again.stopReason).toBe('no_new_proposals');
    // Its repeats are recorded (skipped, evaluation_failed), never dropped silently: kloop history shows them.
    expect((await decisions(db)).slice(2).map(({ round, decision, reason }) => ({ round, decision, reason }))).toEqual([
      { round: 3, decision: 'refused', reason: 'evaluation_failed' },
      { round: 4, decision: 'skipped', reason: 'evaluation_failed' },
      { round: 5, decision: 'skipped', reason: 'evaluation_failed' },
      { round: 6, decision: 'skipped', reason: 'evaluation_failed' },
      { round: 7, decision: 'skipped', reason: 'evaluation_failed' },
      { round: 8, decision: 'skipped', reason: 'evaluation_failed' },
    ]);
    expect(poisoned()).toBe(2 * afterFirstRun); // its second evaluation, and nothing after
    // The reflective proposer is told it was tried (a repeat, not a candidate): idle rounds, as many as the patience
    // (stopping.idleRounds 2 + ⌊7 experiments left / (2 × 1 candidate per round)⌋ = 5; src/loop/idle-patience.ts).
    const calls = await db
      .selectFrom('proposals')
      .select(['round', 'outcome'])
      .where('round', '>', 2)
      .orderBy('id')
      .execute();
    expect(calls).toEqual([
      { round: 3, outcome: 'candidates' },
      { round: 4, outcome: 'idle' },
      { round: 5, outcome: 'idle' },
      { round: 6, outcome: 'idle' },
      { round: 7, outcome: 'idle' },
      { round: 8, outcome: 'idle' },
    ]);

    // A proposer that does not read the tried hashes offers it anyway: skipped before anything is paid for, with the reason.
    const third = load(study, server, db);
    third.stopping.maxExperiments = 10;
    const reflective = third.proposer;
    third.proposer = {
      id: reflective.id,
      propose: (context) => reflective.propose({ ...context, triedHashes: new Set() }),
    };
    const last = await runStudy({ study: third, notebook: openNotebook(db) });
    expect(last.stopReason).toBe('no_new_proposals');
    const skips = (await decisions(db)).slice(8);
    // One skip per idle round, as many as the patience (5, as above).
    expect(skips.map(({ decision, reason }) => ({ decision, reason }))).toEqual(
      Array.from({ length: 5 }, () => ({ decision: 'skipped', reason: 'evaluation_failed' })),
    );
    expect(poisoned()).toBe(2 * afterFirstRun);
    const skip = (
      JSON.parse(skips[0]!.evidence) as {
        checks: Array<{ name: string; statistic: number; threshold: number; detail: string }>;
      }
    ).checks[0]!;
    expect(skip).toMatchObject({ name: 'evaluation', statistic: 2, threshold: 2 });
    expect(skip.detail).toMatch(
      /^its evaluation failed in the infrastructure 2 times before \(2 at most\): not tried again; last: 6 of 6 example-repeats failed/,
    );
  }, 60_000);
});

describe('failures that follow the server, not the candidate', () => {
  it('stopping.maxConsecutiveFailures candidates in a row that cannot be evaluated stop the run as infrastructure_failure', async () => {
    const { study, server, db } = await setUp(
      'stopping: { maxExperiments: 10, plateauRounds: 10, maxConsecutiveFailures: 3 }',
      (chat, call) => appendToRoles(chat, `Rule ${WORDS[call]}: ${WORDS[call]} roles first.`),
      (chat) => chat.system.includes('Rule '), // every candidate; never the incumbent
    );
    const outcome = await runStudy({ study: load(study, server, db), notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('infrastructure_failure');
    expect(outcome.stopDetail).toMatch(
      /^3 candidates in a row could not be evaluated \(stopping\.maxConsecutiveFailures 3\): their evaluations failed in the infrastructure after the retries, whatever the candidate; last: 6 of 6 example-repeats failed .*HTTP 500/,
    );
    expect((await decisions(db)).map((row) => row.reason)).toEqual([
      'evaluation_failed',
      'evaluation_failed',
      'evaluation_failed',
    ]);
  }, 60_000);
});
