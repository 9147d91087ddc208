/**
 * Re-trials on the same incumbent (src/loop/retrials.ts), in-process: a
 * sampled workflow and a proposer that offers the same lines again while the
 * incumbent stands. A line refused by noise is judged again on the same
 * incumbent with twice the repeats (the stored ones and as many fresh ones),
 * at α/K; a no-op offered as often is never accepted; with a deterministic
 * executor the repeat is skipped as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import { createStudy, type StudyExample } from '../api/create-study.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { createSeededRandom } from '../stats/index.ts';

const EFFECTS: Record<string, number> = { 'use the glossary': 0.06, 'be polite': 0 };
const partition = (prefix: string, count: number, name: 'optimization' | 'anchor' | 'shadow') =>
  Array.from({ length: count }, (_, index) => ({
    id: `${prefix}${String(index).padStart(2, '0')}`,
    input: `${name} question ${index}`,
    expected: null,
    partition: name,
  }));
const examples: StudyExample<string, null>[] = [
  ...partition('o', 30, 'optimization'),
  ...partition('a', 9, 'anchor'),
  ...partition('s', 15, 'shadow'),
];

/** Executions by artifact, input and repeat. */
const executions = new Map<string, number>();

function workflow(artifact: string, input: string, context: { repeat: number }): number {
  const key = `${artifact}|${input}|${context.repeat}`;
  executions.set(key, (executions.get(key) ?? 0) + 1);
  const effect = artifact.split('\n').reduce((sum, line) => sum + (EFFECTS[line.trim()] ?? 0), 0);
  const base = 0.3 + 0.02 * (Number(input.split(' ').at(-1)) % 5);
  const random = createSeededRandom(
    Number.parseInt(contentHash(`${artifact}|${input}|${context.repeat}`).slice(0, 8), 16),
  );
  return Math.min(1, Math.max(0, base + effect + 0.3 * (random() + random() + random() - 1.5)));
}

const SEED_ARTIFACT = 'Answer the question.\n';
/** Offers both lines on the seed artifact, every round. */
const proposer = (context: { incumbentText: string }) =>
  context.incumbentText === SEED_ARTIFACT
    ? Object.keys(EFFECTS).map((line) => ({ text: `${SEED_ARTIFACT}${line}\n`, delta: line }))
    : [];

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function run(deterministic: boolean) {
  executions.clear();
  const storage = mkdtempSync(path.join(tmpdir(), 'kloop-same-incumbent-'));
  folders.push(storage);
  const study = await createStudy({
    storage,
    artifact: SEED_ARTIFACT,
    examples,
    score: (output: unknown) => output as number,
    execute: workflow,
    executorId: 'same-incumbent-test@1',
    deterministic,
    proposer,
    candidatesPerRound: 2,
    concurrency: 1,
    seed: 5,
    gate: { repeats: 4, incumbentRepeats: 8, requireCalibration: false, racing: false },
    stopping: { maxExperiments: 10, plateauRounds: 10, idleRounds: 1 },
    calibration: {
      noiseSd: 0.02,
      exampleSds: Object.fromEntries(examples.map((example) => [example.id, 0.087])),
      noiseRepeats: 8,
    },
  });
  await study.optimize();
  await study.close();
  const db = await openDatabase(studyDatabasePath(storage), { readonly: true });
  const rows = await db
    .selectFrom('experiments')
    .select(['delta', 'decision', 'reason', 'evidence'])
    .orderBy('id')
    .execute();
  await db.destroy();
  return rows.map((row) => {
    const evidence = JSON.parse(row.evidence) as {
      retrial?: { trial: number; repeatsFactor?: number; repeats?: number; alpha: number };
    };
    return `${row.delta}: ${row.reason}${evidence.retrial !== undefined ? ` (trial ${evidence.retrial.trial}, ×${evidence.retrial.repeatsFactor ?? 1}, ${evidence.retrial.repeats ?? '-'} repeats, α ${evidence.retrial.alpha})` : ''}`;
  });
}

describe('re-trials on the same incumbent', () => {
  it('judges a line refused by noise again on the same incumbent with twice the repeats, at α/K, and keeps it', async () => {
    const decisions = await run(false);
    expect(decisions).toEqual([
      'use the glossary: not_confirmed',
      'be polite: below_margin',
      // A refusal that is not noise is not reopened.
      'be polite: duplicate',
      'use the glossary: accepted (trial 2, ×2, 8 repeats, α 0.025)',
    ]);
    // Nothing was executed twice: the re-trial read the 4 stored repeats and paid for repeats 4–7 only.
    expect(Math.max(...executions.values())).toBe(1);
    const glossary = `${SEED_ARTIFACT}use the glossary\n`;
    expect([0, 4, 7].map((repeat) => executions.get(`${glossary}|optimization question 0|${repeat}`))).toEqual([
      1, 1, 1,
    ]);
    expect(executions.get(`${glossary}|optimization question 0|8`)).toBeUndefined();
  }, 60_000);

  it('with a deterministic executor, skips the repeat as before (the same answers would come again)', async () => {
    const decisions = await run(true);
    expect(decisions.slice(0, 4)).toEqual([
      'use the glossary: not_confirmed',
      'be polite: below_margin',
      'use the glossary: duplicate',
      'be polite: duplicate',
    ]);
    expect(decisions.every((decision) => !decision.includes('accepted'))).toBe(true);
  }, 60_000);
});
