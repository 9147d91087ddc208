/**
 * Adaptive repeats in the loop, in-process (src/loop/adaptive-evaluation.ts):
 * a sampled workflow that answers a third of the examples alike every time
 * (a temperature-0 model), calibrated so (per-example SD 0 over 8 repeats).
 * With `gate.adaptiveRepeats` on (the default) the round makes the same
 * decisions as with it off, raced or not, for no more executions (fewer
 * without racing); the evidence counts the example-repeats copied.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import { createStudy, type StudyExample } from '../api/create-study.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { createSeededRandom } from '../stats/index.ts';

const EFFECTS: Record<string, number> = { 'use the glossary': 0.15, 'be polite': 0, 'mind the commas': 0 };
/** Lines that change only the answers that vary (the others stay alike, so their one draw agrees with the incumbent's). */
const NOISY_ONLY: Record<string, number> = { 'mind the commas': 0.12 };
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
/** Every third example of each partition is answered alike every time. */
const noiseFree = (input: string): boolean => Number(input.split(' ').at(-1)) % 3 === 0;

function workflow(executions: Map<string, number>) {
  return (artifact: string, input: string, context: { repeat: number }): number => {
    const key = `${contentHash(artifact)}|${input}|${context.repeat}`;
    executions.set(key, (executions.get(key) ?? 0) + 1);
    const effect = artifact.split('\n').reduce((sum, line) => sum + (EFFECTS[line.trim()] ?? 0), 0);
    const base = 0.3 + 0.02 * (Number(input.split(' ').at(-1)) % 5);
    if (noiseFree(input)) return base + effect;
    const noisyOnly = artifact.split('\n').reduce((sum, line) => sum + (NOISY_ONLY[line.trim()] ?? 0), 0);
    const random = createSeededRandom(Number.parseInt(contentHash(key).slice(0, 8), 16));
    return Math.min(1, Math.max(0, base + effect + noisyOnly + 0.2 * (random() + random() + random() - 1.5)));
  };
}

const SEED_ARTIFACT = 'Answer the question.\n';
const proposer = (context: { incumbentText: string }) =>
  context.incumbentText === SEED_ARTIFACT
    ? Object.keys(EFFECTS).map((line) => ({ text: `${SEED_ARTIFACT}${line}\n`, delta: line }))
    : [];

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function run(options: { racing: boolean; adaptiveRepeats: boolean }) {
  const executions = new Map<string, number>();
  const storage = mkdtempSync(path.join(tmpdir(), 'kloop-adaptive-'));
  folders.push(storage);
  const study = await createStudy({
    storage,
    artifact: SEED_ARTIFACT,
    examples,
    score: (output: unknown) => output as number,
    execute: workflow(executions),
    executorId: 'adaptive-repeats-test@1',
    deterministic: false,
    proposer,
    candidatesPerRound: 3,
    concurrency: 1,
    seed: 5,
    gate: {
      repeats: 4,
      incumbentRepeats: 4,
      requireCalibration: false,
      racing: options.racing,
      adaptiveRepeats: options.adaptiveRepeats,
    },
    stopping: { maxExperiments: 6, plateauRounds: 1, idleRounds: 1 },
    calibration: {
      noiseSd: 0.01,
      exampleSds: Object.fromEntries(examples.map((example) => [example.id, noiseFree(example.input) ? 0 : 0.06])),
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
  return {
    executed: [...executions.values()].reduce((sum, count) => sum + count, 0),
    decisions: rows.map((row) => `${row.delta}: ${row.reason}`),
    copied: rows.map((row) => (JSON.parse(row.evidence) as { adaptiveRepeats?: unknown }).adaptiveRepeats),
  };
}

describe('adaptive repeats in the loop', () => {
  it('makes the decisions of full repeats for fewer executions, and counts the copies in the evidence', async () => {
    const off = await run({ racing: false, adaptiveRepeats: false });
    const on = await run({ racing: false, adaptiveRepeats: true });
    expect(on.decisions).toEqual(off.decisions);
    expect(off.copied.every((entry) => entry === undefined)).toBe(true);
    expect(on.decisions).toEqual([
      'use the glossary: accepted',
      'mind the commas: accepted',
      'be polite: below_margin',
    ]);
    // 'mind the commas' leaves the noise-free answers alike: one draw each on optimization (10) and anchor (3)
    // stands for 3 more repeats; 'be polite', rebased onto it, too, against an incumbent that is itself not
    // evaluated again there (the accepted candidate's one agreeing draw stands).
    expect(on.copied).toEqual([
      { copied: { candidate: 0, incumbent: 0 } },
      { copied: { candidate: 39, incumbent: 0 } },
      { copied: { candidate: 39, incumbent: 39 } },
    ]);
    expect({ off: off.executed, on: on.executed }).toEqual({ off: 1116, on: 999 });
  }, 60_000);

  it('does the same raced', async () => {
    const off = await run({ racing: true, adaptiveRepeats: false });
    const on = await run({ racing: true, adaptiveRepeats: true });
    expect(on.decisions).toEqual(['use the glossary: accepted', 'be polite: futility', 'mind the commas: accepted']);
    expect(on.copied).toEqual([
      { copied: { candidate: 0, incumbent: 0 } },
      undefined,
      { copied: { candidate: 39, incumbent: 0 } },
    ]);
    // As many executions: the race stopped 'be polite' after its first draws, and the library's final
    // score of the best artifact (src/api/study-handle.ts) evaluates its every repeat, paying the 39 back.
    expect({ off: off.executed, on: on.executed }).toEqual({ off: 708, on: 708 });
  }, 60_000);
});
