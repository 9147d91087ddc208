import { describe, expect, it } from 'vitest';
import type { EvaluateRequest, Evaluator } from '../evaluator/evaluator.ts';
import { aggregate } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import {
  adaptiveRepeatsOn,
  evaluateCandidatePartition,
  evaluateIncumbentPartition,
  referencesOf,
} from './adaptive-evaluation.ts';
import type { LoadedStudy } from './loaded-study.ts';

const IDS = ['e0', 'e1', 'e2', 'e3'];

/** A fake evaluator: composite(text, id, repeat) from `value`; counts the example-repeats it executes and caches them like the notebook. */
function fakeEvaluator(value: (text: string, id: string, repeat: number) => number) {
  const stored = new Set<string>();
  const executed: string[] = [];
  const evaluator = {
    fingerprint: 'fake',
    task: { components: [], metrics: [] },
    evaluate: async (request: EvaluateRequest): Promise<PartitionScore> => {
      const first = request.firstRepeat ?? 0;
      const results = [];
      for (let repeat = first; repeat < first + (request.repeats ?? 1); repeat += 1) {
        const wanted = request.examples.filter(
          (example) => request.storedOnly !== true || stored.has(`${request.artifactText}/${example.id}/${repeat}`),
        );
        const records: ExampleScoreRecord[] = wanted.map((example) => {
          const key = `${request.artifactText}/${example.id}/${repeat}`;
          if (!stored.has(key)) {
            stored.add(key);
            executed.push(`${request.artifactText}:${example.id}#${repeat}`);
          }
          return {
            exampleId: example.id,
            repeat,
            valid: true,
            composite: value(request.artifactText, example.id, repeat),
            components: {},
            skipped: [],
            metrics: {},
            diagnostics: {},
            feedback: '',
          } as ExampleScoreRecord;
        });
        results.push({ records, usage: { inputTokens: records.length, outputTokens: 0, costUsd: 0 }, latencyMs: 0 });
      }
      return aggregate(request.partition, request.artifactText, 'fake', results);
    },
  } as unknown as Evaluator;
  return { evaluator, executed };
}

const study = (options: { deterministic?: boolean; adaptiveRepeats?: boolean } = {}): LoadedStudy =>
  ({
    gate: {
      repeats: 3,
      ...(options.adaptiveRepeats !== undefined ? { adaptiveRepeats: options.adaptiveRepeats } : {}),
    },
    executor: { deterministic: options.deterministic ?? false },
    partitions: { optimization: IDS.map((id) => ({ id })), anchor: [], shadow: [] },
  }) as unknown as LoadedStudy;

// e0 and e1 are calibrated noise-free; e2, e3 noisy.
const calibration = { exampleSds: { e0: 0, e1: 0, e2: 0.1, e3: 0.2 }, noiseRepeats: 8 };
// The incumbent: e0 = 0.5 and e1 = 0.25 every repeat; e2, e3 vary by repeat.
// The candidate: e0 = 0.5 (agrees), e1 = 0.75 (differs), e2, e3 vary.
const value = (text: string, id: string, repeat: number): number => {
  if (id === 'e0') return 0.5;
  if (id === 'e1') return text === 'incumbent' ? 0.25 : 0.75;
  return 0.1 * (repeat + 1) + (id === 'e3' ? 0.05 : 0);
};

describe('adaptiveRepeatsOn', () => {
  it('is on by default for a stochastic executor with a calibration of ≥ 3 repeats', () => {
    expect(adaptiveRepeatsOn(study(), calibration)).toBe(true);
    expect(adaptiveRepeatsOn(study({ adaptiveRepeats: false }), calibration)).toBe(false);
    expect(adaptiveRepeatsOn(study({ deterministic: true }), calibration)).toBe(false);
    expect(adaptiveRepeatsOn(study(), { exampleSds: calibration.exampleSds })).toBe(false);
    expect(adaptiveRepeatsOn(study(), undefined)).toBe(false);
  });
});

describe('evaluateIncumbentPartition', () => {
  it('evaluates everything when nothing is stored, then tops up only the examples that are not noise-free', async () => {
    const { evaluator, executed } = fakeEvaluator(value);
    const input = { text: 'incumbent', partition: 'optimization' as const };
    const first = await evaluateIncumbentPartition(evaluator, study(), calibration, { ...input, repeats: 3 });
    expect(executed).toHaveLength(12);
    expect(first.copied).toBeUndefined();
    const score = await evaluateIncumbentPartition(evaluator, study(), calibration, { ...input, repeats: 6 });
    // The top-up repeats 3..5 of e2 and e3 only.
    expect(executed.slice(12)).toEqual([
      'incumbent:e2#3',
      'incumbent:e3#3',
      'incumbent:e2#4',
      'incumbent:e3#4',
      'incumbent:e2#5',
      'incumbent:e3#5',
    ]);
    expect(score.copied).toBe(6);
    expect(score.total).toBe(24);
    expect(score.repeats).toBe(6);
    // Usage of each example-repeat read once: 6 stored (e0, e1) + 12 of e2, e3 (6 stored, 6 new).
    expect(score.usage.inputTokens).toBe(18);
    // Run composite of repeat 4: (0.5 + 0.25 + 0.5 + 0.55) / 4.
    expect(score.runComposites[4]).toBeCloseTo(0.45, 12);
    expect(score.examples.slice(0, 4).map((record) => record.exampleId)).toEqual(IDS);
  });

  it('evaluates a freshly accepted candidate only where its one agreeing draw is not all it has', async () => {
    const { evaluator, executed } = fakeEvaluator(value);
    const references = new Map([
      ['e0', 0.5],
      ['e1', 0.25],
    ]);
    await evaluateCandidatePartition(evaluator, study(), references, { text: 'candidate', partition: 'optimization' });
    expect(executed).toHaveLength(10);
    // Now the incumbent: e0's one stored draw stands for repeats 1 and 2; e1 (3 alike), e2, e3 are read back.
    const score = await evaluateIncumbentPartition(evaluator, study(), calibration, {
      text: 'candidate',
      partition: 'optimization',
      repeats: 3,
    });
    expect(executed).toHaveLength(10);
    expect(score.copied).toBe(2);
    expect(score.total).toBe(12);
  });

  it('evaluates every top-up with the setting off', async () => {
    const { evaluator, executed } = fakeEvaluator(value);
    const input = { text: 'incumbent', partition: 'optimization' as const, repeats: 6 };
    const score = await evaluateIncumbentPartition(evaluator, study({ adaptiveRepeats: false }), calibration, input);
    expect(executed).toHaveLength(24);
    expect(score.copied).toBeUndefined();
  });
});

describe('evaluateCandidatePartition', () => {
  it('evaluates a candidate once where it agrees with the incumbent, every repeat where it differs', async () => {
    const { evaluator, executed } = fakeEvaluator(value);
    const incumbent = await evaluateIncumbentPartition(evaluator, study(), calibration, {
      text: 'incumbent',
      partition: 'optimization',
      repeats: 3,
    });
    const references = referencesOf(study(), calibration, incumbent);
    expect([...references]).toEqual([
      ['e0', 0.5],
      ['e1', 0.25],
    ]);
    executed.length = 0;
    const score = await evaluateCandidatePartition(evaluator, study(), references, {
      text: 'candidate',
      partition: 'optimization',
    });
    expect(executed.sort()).toEqual(
      [
        'candidate:e0#0',
        'candidate:e1#0',
        'candidate:e1#1',
        'candidate:e1#2',
        'candidate:e2#0',
        'candidate:e2#1',
        'candidate:e2#2',
        'candidate:e3#0',
        'candidate:e3#1',
        'candidate:e3#2',
      ].sort(),
    );
    expect(score.copied).toBe(2);
    expect(score.total).toBe(12);
    // Run composite of repeat 2: (0.5 + 0.75 + 0.3 + 0.35) / 4.
    expect(score.runComposites[2]).toBeCloseTo(0.475, 12);
  });

  it('evaluates every repeat without references', async () => {
    const { evaluator, executed } = fakeEvaluator(value);
    await evaluateCandidatePartition(evaluator, study(), new Map(), { text: 'candidate', partition: 'optimization' });
    expect(executed).toHaveLength(12);
  });
});
