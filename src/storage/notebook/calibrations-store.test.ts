import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../study-database.ts';
import { openDatabase } from '../database.ts';
import type { NewCalibration } from './calibrations-store.ts';
import { insertCalibration, listCalibrations, listValidCalibrations, recentNoiseSds } from './calibrations-store.ts';

let db: StudyDatabase | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

const calibration = (overrides: Partial<NewCalibration>): NewCalibration => ({
  fingerprint: 'f1',
  model: 'offline',
  artifactHash: 'a1',
  noiseRepeats: 8,
  signalRepeats: 3,
  noiseSd: 0.01,
  exampleSds: { e1: 0.02 },
  partitionSds: { optimization: 0.01 },
  cohensD: 1.2,
  threshold: 0.01,
  valid: true,
  message: 'calibrated',
  createdAt: '2026-03-01T10:00:00.000Z',
  ...overrides,
});

describe('the calibrations store', () => {
  it('stores a calibration and gives back its frozen record', async () => {
    db = await openDatabase(':memory:');
    const record = await insertCalibration(db, calibration({}));
    expect(record).toEqual({ id: record.id, ...calibration({}) });
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen(record.exampleSds)).toBe(true);
    expect(await listCalibrations(db)).toEqual([record]);
  });

  it('lists valid calibrations of a fingerprint newest first, by model and up to a limit; a limit of 0 gives none', async () => {
    db = await openDatabase(':memory:');
    await insertCalibration(db, calibration({ noiseSd: 0.01 }));
    await insertCalibration(db, calibration({ noiseSd: 0.02, model: 'other' }));
    await insertCalibration(db, calibration({ noiseSd: 0.5, valid: false }));
    await insertCalibration(db, calibration({ noiseSd: 0.03 }));
    await insertCalibration(db, calibration({ noiseSd: 0.9, fingerprint: 'f2' }));

    expect(await recentNoiseSds(db, 'f1', 5)).toEqual([0.03, 0.02, 0.01]);
    expect(await recentNoiseSds(db, 'f1', 2)).toEqual([0.03, 0.02]);
    expect(await recentNoiseSds(db, 'f1', 0)).toEqual([]);
    const offline = await listValidCalibrations(db, 'f1', { model: 'offline', limit: 5 });
    expect(offline.map((record) => record.noiseSd)).toEqual([0.03, 0.01]);
    expect((await listValidCalibrations(db, 'f1', { limit: 1 })).map((record) => record.noiseSd)).toEqual([0.03]);
    expect((await listCalibrations(db, 'f1')).map((record) => [record.noiseSd, record.valid])).toEqual([
      [0.03, true],
      [0.5, false],
      [0.02, true],
      [0.01, true],
    ]);
  });
});
