/**
 * The open round's phase in the notebook (src/loop/open-round-state.ts): the
 * stored state at each engine state (ask → screen → decide → closed), a
 * round interrupted past ask resumed from its stored candidates without
 * asking the proposer again and deciding as the uninterrupted run, a round
 * stored without a phase (an older database) asked again as before, a
 * round whose candidates carry a `rebase` function kept at ask, and a
 * malformed stored round an error naming its field.
 *
 * The study: a word list as the artifact, an input right when the artifact
 * names its word (deterministic, offline). One round of three candidates:
 * five words (accepted), two words (refused: 2 of 8, not significant after
 * the rebase onto the accepted one), a word no example asks for (refused,
 * below the margin).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStudy, type ProposedCandidate } from '../api/create-study.ts';
import type { ProposalContext, ProposalResult } from '../proposers/proposer.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { openNotebook } from '../storage/notebook/index.ts';
import type { StudyState } from './study-state.ts';
import { readStudyState } from './study-state.ts';
import { executeWordList, wordExamples } from '../test-support/word-list-study.ts';

const examples = wordExamples;
const SEED = 'apple\n';
const execute = executeWordList;
const score = (output: unknown, expected: unknown) => ({
  pass: output === expected,
  reason: output === expected ? '' : `expected ${String(expected)}`,
});

/** A proposer that counts its calls on the seed (round 1); it has nothing more for a later incumbent. */
function countingProposer(onAsk?: () => Promise<void>) {
  const counter = { calls: 0 };
  const propose = async ({ incumbentText }: ProposalContext) => {
    if (incumbentText !== SEED) return [];
    counter.calls += 1;
    await onAsk?.();
    return [
      { text: `${SEED}pear\nplum\nfig\nkiwi\nlime\n`, delta: 'five fruits', rationale: 'five fruits' },
      { text: `${SEED}melon\n`, delta: 'melon', rationale: 'a fruit nobody asked for' },
      { text: `${SEED}date\nlemon\n`, delta: 'date and lemon', rationale: 'two fruits' },
    ];
  };
  return { counter, propose };
}

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-phase-'));
  folders.push(dir);
  return dir;
}

/** Opens the study on `storage` and optimizes it; `interruptAt` aborts when it returns true for an execution's artifact. */
async function optimize(
  storage: string,
  proposer: (context: ProposalContext) => Promise<ProposedCandidate[] | ProposalResult>,
  interruptAt?: (artifact: string) => boolean,
  gate?: Record<string, unknown>,
) {
  const controller = new AbortController();
  const study = await createStudy({
    storage,
    artifact: SEED,
    examples,
    score,
    outcome: 'binary',
    execute: (artifact: string, input: string) => {
      if (interruptAt?.(artifact)) controller.abort();
      return execute(artifact, input);
    },
    executorId: 'words@1',
    proposer,
    concurrency: 1,
    stopping: { idleRounds: 1 },
    ...(gate !== undefined ? { gate } : {}),
    signal: controller.signal,
  });
  try {
    return await study.optimize();
  } finally {
    await study.close();
  }
}

/** What the notebook holds of the study: its experiments, its proposer calls and its stored state. */
async function notebookOf(storage: string, withEvidence = false) {
  const db = await openDatabase(studyDatabasePath(storage), { readonly: true });
  try {
    const experiments = await db
      .selectFrom('experiments')
      .select(['round', 'delta', 'decision', 'reason', 'candidate_id', 'candidate_hash'])
      .$if(withEvidence, (query) => query.select('evidence'))
      .orderBy('id')
      .execute();
    const proposals = await db
      .selectFrom('proposals')
      .select(['round', 'attempt', 'outcome', 'candidates', 'candidate_ids'])
      .orderBy('id')
      .execute();
    return { experiments, proposals, state: await readStudyState(openNotebook(db)) };
  } finally {
    await db.destroy();
  }
}

/** Rewrites the stored state (as an older release, or a damaged database, would have left it). */
async function rewriteState(storage: string, change: (state: StudyState) => unknown): Promise<void> {
  const db = await openDatabase(studyDatabasePath(storage));
  try {
    const notebook = openNotebook(db);
    const value = JSON.parse((await notebook.readStudyStateValue('loop'))!) as StudyState;
    await notebook.writeStudyStateValue('loop', JSON.stringify(change(value)));
  } finally {
    await db.destroy();
  }
}

const DECISIONS = [
  ['five fruits', 'accepted', 'accepted'],
  ['date and lemon', 'refused', 'not_significant'],
  ['melon', 'refused', 'below_margin'],
];

async function uninterrupted() {
  const storage = folder();
  const { counter, propose } = countingProposer();
  const outcome = await optimize(storage, propose);
  return { storage, counter, outcome, notebook: await notebookOf(storage) };
}

describe('a round resumed from its stored phase', () => {
  it('the uninterrupted run: three decisions in round 1, the proposer asked once on the seed, the round closed', async () => {
    const { counter, outcome, notebook } = await uninterrupted();
    expect(outcome.stopReason).toBe('no_new_proposals');
    expect(counter.calls).toBe(1);
    expect(notebook.experiments.map((row) => [row.delta, row.decision, row.reason])).toEqual(DECISIONS);
    expect(notebook.state.openRound).toBeNull();
  });

  it('interrupted while screening: resumed from the stored candidates, the proposer not asked again, the same rows', async () => {
    const reference = await uninterrupted();
    const storage = folder();
    const first = countingProposer();
    // The first execution of a candidate's text is in the screening (the proposer here scores nothing).
    const outcome = await optimize(storage, first.propose, (artifact) => artifact !== SEED);
    expect(outcome.stopReason).toBe('interrupted');
    expect(first.counter.calls).toBe(1);
    const stopped = await notebookOf(storage);
    expect(stopped.experiments).toEqual([]);
    expect(stopped.state.openRound).toMatchObject({ round: 1, baseVersionId: 1, attempt: 0, phase: 'screen' });
    expect(stopped.state.openRound?.candidates?.map((candidate) => [candidate.delta, candidate.id])).toEqual(
      reference.notebook.experiments
        .map((row) => [row.delta, row.candidate_id])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    );

    const second = countingProposer();
    expect((await optimize(storage, second.propose)).stopReason).toBe('no_new_proposals');
    expect(second.counter.calls).toBe(0);
    const resumed = await notebookOf(storage);
    expect(resumed.experiments).toEqual(reference.notebook.experiments);
    expect(resumed.proposals).toEqual(reference.notebook.proposals);
  });

  it('interrupted while deciding: the decided candidate skipped by identity, the rest decided as the uninterrupted run', async () => {
    const reference = await uninterrupted();
    const storage = folder();
    const first = countingProposer();
    // The rebase of "date and lemon" onto the accepted "five fruits" is evaluated after that decision.
    const outcome = await optimize(
      storage,
      first.propose,
      (artifact) => artifact.includes('pear') && artifact.includes('date'),
    );
    expect(outcome.stopReason).toBe('interrupted');
    const stopped = await notebookOf(storage);
    expect(stopped.experiments.map((row) => [row.delta, row.decision])).toEqual([['five fruits', 'accepted']]);
    expect(stopped.state.openRound).toMatchObject({ round: 1, phase: 'decide' });

    const second = countingProposer();
    expect((await optimize(storage, second.propose)).stopReason).toBe('no_new_proposals');
    expect(second.counter.calls).toBe(0);
    const resumed = await notebookOf(storage);
    expect(resumed.experiments).toEqual(reference.notebook.experiments);
    expect(resumed.proposals).toEqual(reference.notebook.proposals);
  });

  it('stores the phase of each state: ask while the proposer answers, screen once it answered, decide once screened, none once closed', async () => {
    const storage = folder();
    const phases: unknown[] = [];
    const read = async () => {
      const { state } = await notebookOf(storage);
      phases.push(state.openRound === null ? null : state.openRound?.phase);
    };
    const { propose } = countingProposer(read);
    const study = await createStudy({
      storage,
      artifact: SEED,
      examples,
      score,
      outcome: 'binary',
      execute,
      executorId: 'words@1',
      proposer: propose,
    });
    try {
      const candidates = await study.ask();
      await read();
      const [first, ...rest] = candidates;
      await study.tell(first!);
      await read();
      for (const candidate of rest) await study.tell(candidate);
      await read();
    } finally {
      await study.close();
    }
    expect(phases).toEqual(['ask', 'screen', 'decide', null]);
  });

  it('a round stored without a phase (an older database) is asked again, and decides as the uninterrupted run', async () => {
    const reference = await uninterrupted();
    const storage = folder();
    await optimize(storage, countingProposer().propose, (artifact) => artifact !== SEED);
    await rewriteState(storage, (state) => ({
      ...state,
      openRound: { round: 1, baseVersionId: 1, attempt: 0 },
    }));
    const second = countingProposer();
    expect((await optimize(storage, second.propose)).stopReason).toBe('no_new_proposals');
    expect(second.counter.calls).toBe(1);
    const resumed = await notebookOf(storage);
    expect(resumed.experiments).toEqual(reference.notebook.experiments);
    expect(resumed.proposals).toEqual(reference.notebook.proposals);
  });

  it('moves a round whose candidates carry a rebase function on with reask: it is asked again on resume', async () => {
    const storage = folder();
    const counter = { calls: 0 };
    const propose = async (context: ProposalContext): Promise<ProposalResult> => {
      if (context.incumbentText !== SEED) return { candidates: [], failures: [] };
      counter.calls += 1;
      const added = 'pear\nplum\nfig\nkiwi\nlime\n';
      return {
        candidates: [
          { text: `${SEED}${added}`, delta: 'five fruits', rationale: '', rebase: (base) => `${base}${added}` },
        ],
        failures: [],
      };
    };
    expect((await optimize(storage, propose, (artifact) => artifact !== SEED)).stopReason).toBe('interrupted');
    expect((await notebookOf(storage)).state.openRound).toEqual({
      round: 1,
      baseVersionId: 1,
      attempt: 0,
      phase: 'screen',
      reask: true,
      distances: [1],
    });
    expect((await optimize(storage, propose)).stopReason).toBe('no_new_proposals');
    expect(counter.calls).toBe(2);
    expect((await notebookOf(storage)).experiments.map((row) => [row.delta, row.decision])).toEqual([
      ['five fruits', 'accepted'],
    ]);
  });

  it('a re-trial interrupted while screening is resumed with its trial: the same evidence as the uninterrupted run', async () => {
    // Round 1: "date and lemon" refused on the seed (not significant); round 2: "five fruits" accepted;
    // round 3: "date and lemon" again on the new incumbent, a re-trial; then nothing new.
    const propose = async ({ incumbentText, history }: ProposalContext): Promise<ProposedCandidate[]> => {
      if (history.length === 0)
        return [
          { text: `${SEED}date\nlemon\n`, delta: 'date and lemon' },
          { text: `${SEED}melon\n`, delta: 'melon' },
        ];
      if (history.length === 2) return [{ text: `${SEED}pear\nplum\nfig\nkiwi\nlime\n`, delta: 'five fruits' }];
      if (history.length === 3) return [{ text: `${incumbentText}date\nlemon\n`, delta: 'date and lemon' }];
      return [];
    };
    const rows = async (storage: string) =>
      (await notebookOf(storage, true)).experiments.map(({ round, delta, decision, reason, evidence }) => ({
        round,
        delta,
        decision,
        reason,
        evidence,
      }));
    const referenceStorage = folder();
    await optimize(referenceStorage, propose, undefined, { retrials: 1 });
    const reference = await rows(referenceStorage);
    expect(reference.map((row) => [row.round, row.delta, row.decision])).toEqual([
      [1, 'date and lemon', 'refused'],
      [1, 'melon', 'refused'],
      [2, 'five fruits', 'accepted'],
      [3, 'date and lemon', 'refused'],
    ]);
    expect(JSON.parse(reference[3]!.evidence!).retrial).toMatchObject({ kind: 'retrial', trial: 2, of: 2 });

    const storage = folder();
    const interrupted = await optimize(
      storage,
      propose,
      (artifact) => artifact.includes('pear') && artifact.includes('date'),
      { retrials: 1 },
    );
    expect(interrupted.stopReason).toBe('interrupted');
    expect((await notebookOf(storage)).state.openRound?.candidates?.[0]?.retrial).toMatchObject({ trial: 2, of: 2 });
    await optimize(storage, propose, undefined, { retrials: 1 });
    expect(await rows(storage)).toEqual(reference);
  });

  it('reads a malformed stored round as an error naming the field, never as a default', async () => {
    const storage = folder();
    await optimize(storage, countingProposer().propose, (artifact) => artifact !== SEED);
    await rewriteState(storage, (state) => ({
      ...state,
      openRound: {
        ...state.openRound,
        candidates: state.openRound!.candidates!.map((candidate, index) =>
          index === 1 ? { ...candidate, text: 5 } : candidate,
        ),
      },
    }));
    await expect(optimize(storage, countingProposer().propose)).rejects.toThrow(
      /^study_state is malformed at openRound\.candidates\.1\.text: Invalid input: expected string, received number$/,
    );
    await rewriteState(storage, (state) => ({ ...state, openRound: { round: 1, baseVersionId: 1, phase: 'decide' } }));
    await expect(notebookOf(storage)).rejects.toThrow(
      /^study_state is malformed at openRound\.candidates: a round past ask stores its candidates \(or reask: true\)$/,
    );
    await rewriteState(storage, (state) => ({ ...state, openRound: { round: 1, baseVersionId: 1, phase: 'tell' } }));
    await expect(notebookOf(storage)).rejects.toThrow(/^study_state is malformed at openRound\.phase: /);
  });
});
