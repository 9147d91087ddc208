import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { contentHash } from '../artifact/content-hash.ts';
import type { Example, PartitionName } from '../corpus/example.ts';
import { createEvaluator } from '../evaluator/evaluator.ts';
import { createSeededRandom } from '../stats/index.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import type { Executor } from '../executors/executor.ts';
import { parsePlaybook } from '../tasks/intent/offline/playbook.ts';
import { DEFAULT_WEIGHTS } from '../tasks/intent/scorer.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import { INTENT_EXAMPLE_FORMAT } from '../corpus/intent-example.ts';
import { DEFAULT_GATE_SETTINGS } from '../gate/gate.ts';
import type { CalibrationSettings } from './calibration.ts';
import {
  ablateArtifact,
  calibrateStudy,
  latestCalibration,
  listCalibrations,
  measureNoise,
  rollingThreshold,
} from './calibration.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';

/**
 * A toy task. The artifact is YAML with a `known` word list; a goal is a few
 * words and its gold entities are exactly those words. The executor predicts
 * app type `booking` when it knows a word of the goal (else `other`) and one
 * entity per known word. With `dropProbability` > 0 it forgets each known
 * word with that probability, seeded by (example, repeat, salt): an LLM-like
 * repeat-to-repeat noise.
 */
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const INCUMBENT = 'known: [alpha, bravo, charlie, delta]\nmaxWords: 10\n';

function goalWords(index: number): string[] {
  return WORDS.filter((_, position) => (index + position) % 3 !== 0 || position === index % WORDS.length);
}

function makeExamples(): Example[] {
  const partitions: Array<[PartitionName, number]> = [
    ['optimization', 9],
    ['anchor', 3],
    ['shadow', 3],
  ];
  const examples: Example[] = [];
  let index = 0;
  for (const [partition, count] of partitions) {
    for (let position = 0; position < count; position += 1, index += 1) {
      const words = goalWords(index).slice(0, 2 + (index % 4));
      examples.push({
        id: `${partition}-${position}`,
        input: words.join(' '),
        text: words.join(' '),
        expected: { appType: 'booking', entities: words.map((name) => ({ name, role: 'party' as const })) },
        tags: [],
        partition,
      });
    }
  }
  return examples;
}

function hashSeed(text: string): number {
  return Number.parseInt(contentHash(text).slice(0, 8), 16);
}

interface ToyExecutor extends Executor {
  dropProbability: number;
}

function toyExecutor(
  options: { id?: string; dropProbability?: number; ignoreArtifact?: boolean; deterministic?: boolean } = {},
): ToyExecutor {
  const executor: ToyExecutor = {
    id: options.id ?? 'toy@1',
    deterministic: options.deterministic ?? (options.dropProbability ?? 0) === 0,
    dropProbability: options.dropProbability ?? 0,
    async execute(request) {
      const known =
        options.ignoreArtifact === true
          ? WORDS.slice(0, 3)
          : ((parse(request.artifact) as { known?: string[] } | null)?.known ?? []);
      const random = createSeededRandom(hashSeed(`${request.exampleId}|${request.repeat}|${executor.dropProbability}`));
      const words = request.text
        .split(' ')
        .filter((word) => known.includes(word) && random() >= executor.dropProbability);
      return {
        ok: true,
        output: {
          appType: words.length > 0 ? 'booking' : 'other',
          entities: words.map((name) => ({ name, role: 'party' as const })),
          relations: [],
          behaviors: [],
          projections: [],
        },
      };
    },
  };
  return executor;
}

function makeStudy(executor: Executor, artifactText = INCUMBENT): LoadedStudy {
  const corpus = makeExamples();
  const byPartition = (name: PartitionName): Example[] => corpus.filter((example) => example.partition === name);
  return {
    dir: '/tmp/toy-study',
    artifactPath: '/tmp/toy-study/artifact.yaml',
    artifactText,
    instructions: '',
    constraintsText: '',
    constraints: {
      editableSections: [],
      maxArtifactCharacters: 10_000,
      check: () => ({ passed: true, violations: [] }),
    },
    corpus,
    partitions: {
      optimization: byPartition('optimization'),
      anchor: byPartition('anchor'),
      shadow: byPartition('shadow'),
    },
    task: intentTask,
    exampleFormat: INTENT_EXAMPLE_FORMAT,
    executor,
    proposer: { id: 'none', propose: async () => ({ candidates: [], failures: [] }) },
    weights: DEFAULT_WEIGHTS,
    gate: {
      ...DEFAULT_GATE_SETTINGS,
      repeats: 1,
      minDeltaDistance: 0.2,
      requireCalibration: false,
      calibrationWindow: 5,
    },
    stopping: { maxExperiments: 1, plateauRounds: 1, maxConsecutiveFailures: 1 },
    candidatesPerRound: 1,
    concurrency: 2,
    seed: 1,
  };
}

const SETTINGS: CalibrationSettings = {
  noiseRepeats: 6,
  signalRepeats: 2,
  thresholdK: 2,
  calibrationWindow: 5,
  minCohensD: 0.5,
};
const fixedNow = () => new Date('2026-01-01T00:00:00Z');

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

describe('calibrateStudy', () => {
  it('fails on a flat landscape: the contrast scores exactly like the incumbent', async () => {
    db = await openDatabase(':memory:');
    const study = makeStudy(toyExecutor({ ignoreArtifact: true }));
    const result = await calibrateStudy({ study, db, settings: SETTINGS, model: 'toy', now: fixedNow });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('flat_landscape');
    expect(result.signal?.cohensD).toBe(0);
    expect(result.signal?.contrast).toBe('ablation');
    expect(result.message).toContain('cannot tell artifacts apart');
    expect(result.record.valid).toBe(false);
    expect(result.record.cohensD).toBe(0);
    const rows = await listCalibrations(db);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      valid: false,
      model: 'toy',
      noiseRepeats: 6,
      signalRepeats: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(rows[0]!.message).toContain('cannot tell artifacts apart');
    expect(await latestCalibration(db, result.record.fingerprint)).toBeUndefined();
  });

  it('stops at the first partition whose every call fails in the infrastructure, storing nothing', async () => {
    db = await openDatabase(':memory:');
    let calls = 0;
    const down: Executor = {
      id: 'down@1',
      deterministic: false,
      execute: async () => {
        calls += 1;
        return { ok: false, reason: 'error', message: 'HTTP 500: upstream down', transient: true };
      },
    };
    const study = makeStudy(down);
    // Before, it evaluated every partition, stored an invalid calibration and blamed "the executor or the artifact".
    await expect(calibrateStudy({ study, db, settings: SETTINGS, model: 'toy', now: fixedNow })).rejects.toThrow(
      new RegExp(
        `^calibration stopped: all ${study.partitions.optimization.length * SETTINGS.noiseRepeats} example-repeats of the optimization partition failed in the infrastructure after the retries \\(.*HTTP 500: upstream down.*\\); nothing was stored$`,
      ),
    );
    expect(calls).toBeLessThanOrEqual(2 * study.partitions.optimization.length * SETTINGS.noiseRepeats);
    expect(await listCalibrations(db)).toEqual([]);
  });

  it('records zero noise and τ = 0 for a deterministic executor, and the paired test carries the decision', async () => {
    db = await openDatabase(':memory:');
    const study = makeStudy(toyExecutor());
    const result = await calibrateStudy({ study, db, settings: SETTINGS, model: 'toy', now: fixedNow });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.deterministic).toBe(true);
    expect(result.record.noiseSd).toBe(0);
    expect(result.record.threshold).toBe(0);
    expect(result.record.partitionSds).toEqual({ optimization: 0, anchor: 0, shadow: 0 });
    expect(Object.keys(result.record.exampleSds)).toHaveLength(15);
    expect(Object.values(result.record.exampleSds).every((sd) => sd === 0)).toBe(true);
    expect(result.signal.cohensD).toBeGreaterThan(SETTINGS.minCohensD); // the ablation (known: []) scores 0 everywhere
    expect(result.signal.contrastComposite).toBe(0);
    expect(result.message).toContain('the paired test on per-example scores carries the decision');
    // The incumbent was created from the seed artifact.
    expect(result.record.artifactHash).toBe(contentHash(INCUMBENT));
    const latest = await latestCalibration(db, result.record.fingerprint);
    expect(latest?.calibration.noiseSd).toBe(0);
    expect(latest?.record.id).toBe(result.record.id);
    expect(await latestCalibration(db, result.record.fingerprint, 'another-model')).toBeUndefined();
  });

  it('uses a given contrasting artifact instead of the ablation', async () => {
    db = await openDatabase(':memory:');
    const study = makeStudy(toyExecutor());
    const same = await calibrateStudy({
      study,
      db,
      settings: SETTINGS,
      model: 'toy',
      contrastText: 'known: [alpha, bravo, charlie, delta]\nmaxWords: 11\n',
    });
    expect(same).toMatchObject({ ok: false, reason: 'flat_landscape', signal: { contrast: 'given' } });
    await expect(
      calibrateStudy({ study, db, settings: SETTINGS, model: 'toy', contrastText: INCUMBENT }),
    ).rejects.toThrow(/identical to the incumbent/);
  });

  it('takes τ from the rolling maximum: one noisy calibration raises τ for W calibrations, then falls out', async () => {
    db = await openDatabase(':memory:');
    const executor = toyExecutor({ dropProbability: 0.5 });
    const study = makeStudy(executor);
    // No stored results: every calibration draws fresh repeats at the executor's current noise.
    const evaluator = createEvaluator({ task: study.task, executor, corpus: study.corpus, weights: study.weights });
    const calibrate = () => calibrateStudy({ study, db: db!, evaluator, settings: SETTINGS, model: 'toy' });
    const other = toyExecutor({ id: 'toy@2', dropProbability: 0.9 });
    const otherEvaluator = createEvaluator({
      task: study.task,
      executor: other,
      corpus: study.corpus,
      weights: study.weights,
    });

    const noisy = await calibrate();
    expect(noisy.ok).toBe(true);
    const results = [noisy];
    executor.dropProbability = 0.05;
    for (let index = 0; index < 5; index += 1) {
      results.push(await calibrate());
      if (index === 1) {
        // A calibration of another fingerprint in between does not enter this window.
        const foreign = await calibrateStudy({
          study,
          db,
          evaluator: otherEvaluator,
          settings: { ...SETTINGS, minCohensD: 0 },
          model: 'toy',
        });
        expect(foreign.record.fingerprint).not.toBe(noisy.record.fingerprint);
      }
    }
    const records = results.map((result) => {
      expect(result.ok).toBe(true);
      return result.record;
    });
    const sds = records.map((record) => record.noiseSd);
    const quietMax = Math.max(...sds.slice(1));
    expect(sds[0]!).toBeGreaterThan(quietMax);
    expect(quietMax).toBeGreaterThan(0);
    // Calibrations 1..5 (this one and the 4 before) all see the noisy one.
    for (let index = 0; index < 5; index += 1) {
      expect(records[index]!.threshold).toBeCloseTo(SETTINGS.thresholdK * sds[0]!, 12);
    }
    // The sixth's window is calibrations 2..6: the noisy one has fallen out.
    expect(records[5]!.threshold).toBeCloseTo(SETTINGS.thresholdK * quietMax, 12);
    expect(records[5]!.threshold).toBeLessThan(records[4]!.threshold);
    const sixth = results[5]!;
    if (sixth.ok) expect(sixth.threshold.noiseSds).toEqual([...sds.slice(1)].reverse());
    // The gate reads the newest valid calibration of the fingerprint.
    const latest = await latestCalibration(db, noisy.record.fingerprint);
    expect(latest?.record.id).toBe(records[5]!.id);
    expect(latest?.calibration.noiseSd).toBeCloseTo(quietMax, 12);
    expect(Object.keys(latest?.calibration.exampleSds ?? {})).toHaveLength(15);
    expect((await listCalibrations(db, noisy.record.fingerprint)).map((record) => record.id)).toEqual(
      records.map((record) => record.id).reverse(),
    );
    expect(await listCalibrations(db)).toHaveLength(7);
  });

  it('refuses settings out of range', async () => {
    db = await openDatabase(':memory:');
    const study = makeStudy(toyExecutor());
    await expect(
      calibrateStudy({ study, db, settings: { ...SETTINGS, noiseRepeats: 1 }, model: 'toy' }),
    ).rejects.toThrow(RangeError);
  });
});

describe('noise helpers', () => {
  it('rollingThreshold is k × the maximum', () => {
    expect(rollingThreshold(2, [0.01, 0.03, 0.02])).toBeCloseTo(0.06, 15);
    expect(() => rollingThreshold(2, [])).toThrow(RangeError);
  });

  it('measureNoise gives exactly 0 for identical repeats', () => {
    const record = (exampleId: string, repeat: number, composite: number) => ({
      exampleId,
      repeat,
      valid: true as const,
      composite,
      components: {},
      skipped: [],
      metrics: {},
      diagnostics: {},
      feedback: '',
    });
    const runs = [0, 1, 2].map((repeat) => [record('a', repeat, 0.1), record('b', repeat, 0.7)]);
    const noise = measureNoise([
      {
        partition: 'optimization',
        artifactHash: 'h',
        fingerprint: 'f',
        repeats: 3,
        composite: 0.4,
        components: {},
        metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
        invalid: 0,
        transient: 0,
        total: 6,
        runComposites: [0.4, 0.4, 0.4],
        examples: runs.flat(),
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        latencyMs: 0,
      },
    ]);
    expect(noise).toEqual({ partitionSds: { optimization: 0 }, exampleSds: { a: 0, b: 0 } });
  });
});

describe('ablateArtifact', () => {
  it('empties cue lists and maps of a YAML artifact, keeping scalars and settings blocks', () => {
    const text =
      'defaultAppType: other\nstopList: [app]\nentityTerms:\n  customer: party\nextraction: { maxEntities: 12, knownModifiers: false }\n';
    expect(ablateArtifact(text)).toBe(
      'defaultAppType: other\nstopList: []\nentityTerms: {}\nextraction: { maxEntities: 12, knownModifiers: false }\n',
    );
  });

  it('turns the seed playbook into a valid playbook with no cues', () => {
    const seed = readFileSync(new URL('../../examples/intent/playbook.yaml', import.meta.url), 'utf8');
    const ablated = ablateArtifact(seed, 'yaml');
    const parsed = parsePlaybook(ablated);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.playbook.appTypeCues).toEqual({});
    expect(parsed.playbook.entityTerms).toEqual({});
    expect(parsed.playbook.defaultAppType).toBe('other');
    expect(parsed.playbook.extraction.maxEntities).toBe(10);
  });

  it('keeps markdown headings and drops section bodies (a heading inside a code fence is body)', () => {
    const text = 'Intro line.\n\n# Role\nYou extract intents.\n\n## Output\n```\n# not a heading\n```\nReturn JSON.\n';
    expect(ablateArtifact(text)).toBe('# Role\n\n## Output\n');
    expect(ablateArtifact('No headings at all.', 'markdown')).toBe('');
  });

  it('returns the text unchanged when there is nothing to drop', () => {
    expect(ablateArtifact('defaultAppType: other\n')).toBe('defaultAppType: other\n');
  });
});
