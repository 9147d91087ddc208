import { describe, expect, it } from 'vitest';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import {
  MIN_NOISE_FREE_REPEATS,
  agreesWith,
  calibratedNoiseFree,
  fillStanding,
  noiseFreeReferences,
  standingExamples,
} from './noise-free.ts';

const record = (exampleId: string, repeat: number, composite: number, valid = true): ExampleScoreRecord =>
  (valid
    ? {
        exampleId,
        repeat,
        valid: true,
        composite,
        components: {},
        skipped: [],
        metrics: {},
        diagnostics: {},
        feedback: '',
      }
    : {
        exampleId,
        repeat,
        valid: false,
        composite: 0,
        invalidReason: 'schema',
        message: 'off-schema',
        metrics: {},
        diagnostics: {},
      }) as ExampleScoreRecord;

const calibration = { exampleSds: { a: 0, b: 0, c: 0.1, d: 0, e: 0 }, noiseRepeats: 8 };

describe('calibratedNoiseFree', () => {
  it('needs an SD of exactly 0 over at least 3 calibration repeats', () => {
    expect(MIN_NOISE_FREE_REPEATS).toBe(3);
    expect(calibratedNoiseFree(calibration, 'a')).toBe(true);
    expect(calibratedNoiseFree(calibration, 'c')).toBe(false);
    expect(calibratedNoiseFree(calibration, 'missing')).toBe(false);
    expect(calibratedNoiseFree({ exampleSds: { a: 0 }, noiseRepeats: 2 }, 'a')).toBe(false);
    expect(calibratedNoiseFree({ exampleSds: { a: 0 }, noiseRepeats: 3 }, 'a')).toBe(true);
    expect(calibratedNoiseFree({ exampleSds: { a: 0 } }, 'a')).toBe(false);
  });
});

describe('noiseFreeReferences', () => {
  it('keeps calibrated noise-free examples whose records are all valid and equal', () => {
    const records = [
      record('a', 0, 0.75),
      record('a', 1, 0.75),
      record('b', 0, 0.5),
      record('b', 1, 0.25), // differs: not noise-free for this artifact
      record('c', 0, 1),
      record('c', 1, 1), // calibrated noisy
      record('d', 0, 0.5),
      record('d', 1, 0.5, false), // an invalid repeat
      record('e', 0, 0),
    ];
    expect([...noiseFreeReferences(calibration, records)]).toEqual([
      ['a', 0.75],
      ['e', 0],
    ]);
  });
});

describe('standingExamples and agreesWith', () => {
  it('stands where the one draw is valid with exactly the reference', () => {
    const references = new Map([
      ['a', 0.75],
      ['b', 0.5],
      ['e', 0],
    ]);
    const draws = [record('a', 0, 0.75), record('b', 0, 0.5000001), record('e', 0, 0, false), record('x', 0, 1)];
    expect([...standingExamples(references, draws)]).toEqual(['a']);
    expect(agreesWith(record('a', 0, 0.75), undefined)).toBe(false);
  });
});

describe('fillStanding', () => {
  it('copies a standing example to the repeats it lacks, ordered by repeat then by example', () => {
    const records = [record('a', 0, 0.75), record('b', 0, 0.2), record('b', 1, 0.4), record('b', 2, 0.6)];
    const filled = fillStanding(records, new Set(['a']), 3, ['b', 'a']);
    expect(filled.copied).toBe(2);
    expect(
      filled.records.map((each) => `${each.repeat}:${each.exampleId}=${each.valid ? each.composite : 'invalid'}`),
    ).toEqual(['0:b=0.2', '0:a=0.75', '1:b=0.4', '1:a=0.75', '2:b=0.6', '2:a=0.75']);
  });

  it('keeps a standing example’s evaluated repeats and copies its lowest one', () => {
    const records = [record('a', 1, 0.5), record('a', 0, 0.5)];
    const filled = fillStanding(records, new Set(['a']), 4);
    expect(filled.copied).toBe(2);
    expect(filled.records.map((each) => each.repeat)).toEqual([0, 1, 2, 3]);
  });

  it('copies nothing with nothing standing', () => {
    const records = [record('a', 0, 0.5)];
    expect(fillStanding(records, new Set(), 5)).toEqual({ records, copied: 0 });
  });
});
