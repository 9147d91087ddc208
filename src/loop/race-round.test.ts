/**
 * Raced rounds in the loop, in-process: a sampled workflow whose artifact
 * lines have known effects, four candidates in one round (one good, one
 * harmful, two neutral), `gate.racing` on. The harmful and neutral ones are
 * stopped for futility with their evidence, the good one is evaluated in full
 * and accepted, fewer executions are paid than with racing off, and a raced
 * round interrupted mid-batch and resumed executes no example-repeat twice
 * and decides exactly as the uninterrupted one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import { createStudy, type StudyExample } from '../api/create-study.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import { parseStoredEvidence } from '../gate/evidence-schema.ts';
import { createSeededRandom } from '../stats/index.ts';

const EFFECTS: Record<string, number> = {
  'use the glossary': 0.15,
  'answer in one word': -0.25,
  'be polite': 0,
  'mind the commas': 0,
};
const examples: StudyExample<string, null>[] = [
  ...Array.from({ length: 40 }, (_, index) => ({
    id: `o${String(index).padStart(2, '0')}`,
    input: `question ${index}`,
    expected: null,
    partition: 'optimization' as const,
  })),
  ...Array.from({ length: 10 }, (_, index) => ({
    id: `a${index}`,
    input: `anchor question ${index}`,
    expected: null,
    partition: 'anchor' as const,
  })),
  ...Array.from({ length: 20 }, (_, index) => ({
    id: `s${String(index).padStart(2, '0')}`,
    input: `shadow question ${index}`,
    expected: null,
    partition: 'shadow' as const,
  })),
];

/** A sampled workflow: 0.5 + the effects of the artifact's lines + seeded noise of SD ≈ 0.06 per example-repeat. */
function workflow(executions: Map<string, number>, onCall?: (count: number) => void) {
  let calls = 0;
  return (artifact: string, input: string, context: { repeat: number }): number => {
    const key = `${contentHash(artifact)}|${input}|${context.repeat}`;
    executions.set(key, (executions.get(key) ?? 0) + 1);
    calls += 1;
    onCall?.(calls);
    const effect = artifact.split('\n').reduce((sum, line) => sum + (EFFECTS[line.trim()] ?? 0), 0);
    const random = createSeededRandom(Number.parseInt(contentHash(key).slice(0, 8), 16));
    const noise = 0.2 * (random() + random() + random() - 1.5);
    return Math.min(1, Math.max(0, 0.5 + effect + noise));
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

async function run(
  racing: boolean | { earlyAcceptance: 'obrien-fleming' | 'haybittle-peto' },
  options: {
    executions: Map<string, number>;
    storage?: string;
    signal?: AbortSignal;
    onCall?: (count: number) => void;
  },
) {
  const storage = options.storage ?? mkdtempSync(path.join(tmpdir(), 'kloop-race-round-'));
  if (options.storage === undefined) folders.push(storage);
  const study = await createStudy({
    storage,
    artifact: SEED_ARTIFACT,
    examples,
    score: (output: unknown) => output as number,
    execute: workflow(options.executions, options.onCall),
    executorId: 'race-round-test@1',
    deterministic: false,
    proposer,
    candidatesPerRound: 4,
    concurrency: 2,
    seed: 3,
    gate: { repeats: 5, incumbentRepeats: 5, requireCalibration: false, racing },
    stopping: { maxExperiments: 10, plateauRounds: 1, idleRounds: 1 },
    // σ of one run's composite over 40 examples at SD 0.06, per example 0.06.
    calibration: { noiseSd: 0.0095, exampleSds: Object.fromEntries(examples.map((example) => [example.id, 0.06])) },
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  const outcome = await study.optimize();
  await study.close();
  const db = await openDatabase(studyDatabasePath(storage), { readonly: true });
  const experiments = await db
    .selectFrom('experiments')
    .select(['delta', 'decision', 'reason', 'evidence'])
    .orderBy('id')
    .execute();
  await db.destroy();
  return {
    storage,
    outcome,
    experiments: experiments.map((row) => ({
      delta: row.delta,
      decision: row.decision,
      reason: row.reason,
      evidence: JSON.parse(row.evidence) as Record<string, unknown>,
    })),
  };
}

const total = (executions: Map<string, number>): number =>
  [...executions.values()].reduce((sum, count) => sum + count, 0);

describe('a raced round', () => {
  it('stops harmful and neutral candidates for futility with their evidence and accepts the good one, raced in full, nothing executed twice', async () => {
    const racedExecutions = new Map<string, number>();
    const raced = await run(true, { executions: racedExecutions });
    const byDelta = new Map(raced.experiments.map((row) => [row.delta, row]));
    expect(byDelta.get('use the glossary')).toMatchObject({ decision: 'accepted', reason: 'accepted' });
    const harmful = byDelta.get('answer in one word')!;
    expect(harmful).toMatchObject({ decision: 'refused', reason: 'futility' });
    const evidence = harmful.evidence.racing as Record<string, number | string>;
    expect(evidence).toMatchObject({
      stop: 'futility',
      rule: 'predictive_power',
      batches: 1,
      of: 10,
      batchSize: 20,
      evaluated: 20,
      planned: 200,
      examples: 20,
      repeats: 1,
    });
    const checks = harmful.evidence.checks as Array<{ name: string; passed: boolean; detail: string }>;
    expect(checks.map((check) => [check.name, check.passed])).toEqual([
      ['constraints', true],
      ['racing', false],
    ]);
    expect(checks[1]!.detail).toMatch(
      /^stopped for futility after 20 of 200 example-repeats \(1 of 10 batches of 20; 20 examples, 1 repeat\(s\)\)/,
    );
    for (const neutral of ['be polite', 'mind the commas']) expect(byDelta.get(neutral)!.decision).toBe('refused');
    // The accepted one was raced in full: its race evidence is stored beside the gate's checks.
    const good = byDelta.get('use the glossary')!;
    expect(good.evidence.racing).toMatchObject({ stop: 'complete', evaluated: 200, planned: 200 });
    expect((good.evidence.checks as Array<{ name: string }>).map((check) => check.name)).toEqual([
      'constraints',
      'racing',
      'validity',
      'margin',
      'significance',
      'anchors',
      'shadow',
    ]);
    expect([...racedExecutions.values()].every((count) => count === 1)).toBe(true);
  }, 60_000);

  it('pays fewer executions than the same study with racing off, for the same accepted change', async () => {
    const racedExecutions = new Map<string, number>();
    await run(true, { executions: racedExecutions });
    const fullExecutions = new Map<string, number>();
    const full = await run(false, { executions: fullExecutions });
    expect(full.experiments.find((row) => row.delta === 'use the glossary')!.decision).toBe('accepted');
    expect(full.experiments.filter((row) => row.decision === 'accepted')).toHaveLength(1);
    expect(total(racedExecutions)).toBeLessThan(total(fullExecutions) - 400);
  }, 60_000);

  it('with early acceptance, accepts the good one at an interim look on its first repeats: its anchors and shadow in full; the rest paid as the next incumbent', async () => {
    const racedExecutions = new Map<string, number>();
    await run(true, { executions: racedExecutions });
    const earlyExecutions = new Map<string, number>();
    const early = await run({ earlyAcceptance: 'obrien-fleming' }, { executions: earlyExecutions });
    const good = early.experiments.find((row) => row.delta === 'use the glossary')!;
    expect(good).toMatchObject({ decision: 'accepted', reason: 'accepted' });
    const racing = good.evidence.racing as {
      stop: string;
      evaluated: number;
      early: { rule: string; test: string; looks: Array<{ repeats: number; level: number; passed: boolean }> };
    };
    // Two complete repeats of the 40 optimization examples, then the first look (t = 2/5) passed at α*(0.4).
    expect(racing).toMatchObject({ stop: 'early', evaluated: 80 });
    expect(racing.early).toMatchObject({ rule: 'obrien-fleming', test: 'shared-variance' });
    expect(racing.early.looks.map((look) => [look.repeats, look.passed])).toEqual([[2, true]]);
    expect(racing.early.looks[0]!.level).toBeCloseTo(0.0019419129967408466, 10);
    const checks = good.evidence.checks as Array<{ name: string; passed: boolean; threshold: number; detail: string }>;
    expect(checks.map((check) => check.name)).toEqual([
      'constraints',
      'racing',
      'validity',
      'margin',
      'significance',
      'anchors',
      'shadow',
    ]);
    expect(checks[1]!.detail).toMatch(/^accepted early on optimization after 80 of 200 example-repeats/);
    expect(checks[4]!.threshold).toBeCloseTo(0.0019419129967408466, 10);
    expect(checks[4]!.detail).toMatch(/2 vs 5 runs/);
    // The stored evidence reads back (kloop show): the looks under the racing check's data.
    const stored = parseStoredEvidence(JSON.stringify(good.evidence), 1);
    expect(stored.checks.find((check) => check.name === 'racing')?.data).toMatchObject({ stop: 'early' });
    // The decision paid 2 repeats of optimization and the anchors and shadow in full (5 each); the accepted candidate is
    // the next round's incumbent, evaluated then with its 5 repeats: the 3 left out are paid there, not saved.
    const goodHash = contentHash(`${SEED_ARTIFACT}use the glossary\n`);
    const ofGood = [...earlyExecutions.keys()].filter((key) => key.startsWith(`${goodHash}|`));
    expect(ofGood).toHaveLength(40 * 5 + 10 * 5 + 20 * 5);
    // So the study pays exactly what racing alone pays (840 executions both ways): early acceptance saves only on
    // candidates that pass early and are refused after (anchors, shadow), or on a study's last acceptance.
    expect(total(earlyExecutions)).toBe(840);
    expect(total(racedExecutions)).toBe(840);
    expect([...earlyExecutions.values()].every((count) => count === 1)).toBe(true);
  }, 60_000);

  it('resumed after an interruption in the middle of a batch, executes no example-repeat twice and decides as the uninterrupted run', async () => {
    const referenceExecutions = new Map<string, number>();
    const reference = await run(true, { executions: referenceExecutions });
    const executions = new Map<string, number>();
    const controller = new AbortController();
    // optimize() scores the seed first (70 examples × 5 repeats = 350 executions); abort inside the race's first batches.
    const first = await run(true, {
      executions,
      signal: controller.signal,
      onCall: (count) => (count === 380 ? controller.abort() : undefined),
    });
    expect(first.outcome.stopReason).toBe('interrupted');
    const paidBeforeTheInterruption = executions.size;
    expect(paidBeforeTheInterruption).toBeGreaterThanOrEqual(380);
    expect(first.experiments.filter((row) => row.decision !== 'skipped').length).toBeLessThan(
      reference.experiments.length,
    );
    const resumed = await run(true, { executions, storage: first.storage });
    expect([...executions.entries()].filter(([, count]) => count > 1)).toEqual([]);
    // The same example-repeats as the uninterrupted run, no more: the resumed race evaluated the same batches.
    expect([...executions.keys()].sort()).toEqual([...referenceExecutions.keys()].sort());
    expect(resumed.experiments.map(({ delta, decision, reason }) => ({ delta, decision, reason }))).toEqual(
      reference.experiments.map(({ delta, decision, reason }) => ({ delta, decision, reason })),
    );
  }, 60_000);
});
