/**
 * Stopping honestly on failures: `stopping.maxFailureRate` stops a run whose
 * proposals fail too often (with its own stop reason), even when no streak of
 * failures reaches `maxConsecutiveFailures`; and the count survives a resume.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Proposer } from '../proposers/proposer.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { loadStudy } from './load-study.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { FAILURE_RATE_MIN_ATTEMPTS, runStudy } from '../loop/run-study.ts';
import { readStudyState } from '../loop/study-state.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/intent');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WORDS = [
  'amber',
  'basalt',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'glacier',
  'harbor',
  'isthmus',
  'jasper',
  'kelp',
  'lagoon',
];

/** Of every three calls, two answers are unusable and the third holds one harmless candidate (a comment line). */
function flakyProposer(): Proposer {
  let calls = 0;
  return {
    id: 'flaky@1',
    async propose(context) {
      calls += 1;
      if (calls % 3 !== 0) return { candidates: [], failures: [{ code: 'broken_json', reason: 'unparsable answer' }] };
      const word = WORDS[calls % WORDS.length]!;
      return {
        candidates: [
          {
            text: `${context.incumbentText}\n# ${word} ${calls}\n`,
            delta: `comment ${word} ${word.split('').reverse().join('')} ${calls}`,
            rationale: 'a no-op',
          },
        ],
        failures: [],
      };
    },
  };
}

function studyWith(stopping: string): LoadedStudy {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-failure-rate-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'corpus'));
  for (const file of ['program.md', 'playbook.yaml']) copyFileSync(path.join(EXAMPLE, file), path.join(dir, file));
  copyFileSync(path.join(EXAMPLE, 'corpus', 'extra.jsonl'), path.join(dir, 'corpus', 'extra.jsonl'));
  const config = readFileSync(path.join(EXAMPLE, 'kloop.yaml'), 'utf8')
    .replace(/^stopping:[\s\S]*?\n\n/m, `stopping:\n${stopping}\n\n`)
    .replace('  - corpus/*.yaml\n', ''); // only the JSONL file is copied: every corpus pattern must match a file
  writeFileSync(path.join(dir, 'kloop.yaml'), config);
  return { ...loadStudy(dir), proposer: flakyProposer() };
}

async function database(): Promise<StudyDatabase> {
  const db = await openDatabase(':memory:');
  cleanups.push(() => db.destroy());
  return db;
}

describe('stopping.maxFailureRate', () => {
  it('stops with failure_rate once enough proposals were attempted and too many failed', async () => {
    const study = studyWith(
      '  maxExperiments: 60\n  plateauRounds: 10\n  maxConsecutiveFailures: 3\n  maxRounds: 6\n  maxFailureRate: 0.5',
    );
    expect(study.stopping.maxFailureRate).toBe(0.5);
    const db = await database();
    const outcome = await runStudy({ study, notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('failure_rate');
    // Each round: two failed answers, then one evaluated candidate. The rate is judged once 10
    // proposals were attempted: after round 3 (9) and the first failed answer of round 4, 7 of 10 failed.
    expect(FAILURE_RATE_MIN_ATTEMPTS).toBe(10);
    expect(outcome.stopDetail).toBe('7 of 10 proposals failed (70.0% > maxFailureRate 0.5)');
    const rounds = await db.selectFrom('experiments').select('round').distinct().execute();
    expect(rounds).toHaveLength(3);
    // Every failed answer is recorded with its reason; a retried round asks with the next attempt.
    const calls = await db.selectFrom('proposals').select(['round', 'attempt', 'outcome']).orderBy('id').execute();
    expect(calls.slice(0, 3)).toEqual([
      { round: 1, attempt: 0, outcome: 'failed' },
      { round: 1, attempt: 1, outcome: 'failed' },
      { round: 1, attempt: 2, outcome: 'candidates' },
    ]);
    expect(await db.selectFrom('runs').select('stop_reason').execute()).toEqual([{ stop_reason: 'failure_rate' }]);
  });

  it('without maxFailureRate the same run goes on to its other criteria', async () => {
    const study = studyWith('  maxExperiments: 60\n  plateauRounds: 10\n  maxConsecutiveFailures: 3\n  maxRounds: 6');
    const db = await database();
    const outcome = await runStudy({ study, notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('max_rounds');
    const state = await readStudyState(openNotebook(db));
    expect(state).toMatchObject({ proposalAttempts: 18, proposalFailures: 12 });
  });

  it('the counts carry over an interrupted run, like the failure streak', async () => {
    const study = studyWith(
      '  maxExperiments: 60\n  plateauRounds: 10\n  maxConsecutiveFailures: 3\n  maxRounds: 6\n  maxFailureRate: 0.5',
    );
    const db = await database();
    const controller = new AbortController();
    const first = await runStudy({
      study,
      notebook: openNotebook(db),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'round-end' && event.round === 3) controller.abort(new Error('interrupted'));
      },
    });
    expect(first.stopReason).toBe('interrupted');
    expect(await readStudyState(openNotebook(db))).toMatchObject({ proposalAttempts: 9, proposalFailures: 6 });
    const second = await runStudy({ study, notebook: openNotebook(db) });
    expect(second.stopReason).toBe('failure_rate');
  });
});
