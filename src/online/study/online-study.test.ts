/**
 * The online study handle on both backends: sticky deterministic assignment
 * with its exposure, the context-local variant, outcomes stored once, and
 * every refusal (unknown unit or metric, bad value, clock, stopped study)
 * leaving what is stored unchanged.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.ts';
import {
  armStatistics,
  startOnlineExperiment,
  updateOnlineExperiment,
  writeOnlineState,
} from '../../storage/online-store.ts';
import { getActiveArtifactText, putVersion, setRegistryVersion } from '../../storage/registry.ts';
import { createTestSchema, postgresAvailable, type TestSchema } from '../../test-support/postgres.ts';
import { loadOnlineConfig } from '../config.ts';
import { armOf, assignmentSalt } from './assignment.ts';
import { createOnlineStudy, ONLINE_STOPPED_KEY, type OnlineStudy } from './online-study.ts';

const postgres = await postgresAvailable();
const folders: string[] = [];
const schemas: TestSchema[] = [];
const studies: OnlineStudy[] = [];
afterAll(async () => {
  for (const study of studies) await study.close().catch(() => undefined);
  for (const schema of schemas) await schema.drop();
  folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }));
});

const YAML = `mode: online
artifact: strategy.md
metrics:
  primary: reply_rate
  guardrails: [{ name: revenue, kind: continuous, direction: increase, margin: 1 }]
  attributionWindow: 1h
  ramp: [0.2, 0.5]
`;

async function openStudy(backend: 'sqlite' | 'postgres', clock: { now: Date }): Promise<OnlineStudy> {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-study-'));
  folders.push(folder);
  writeFileSync(path.join(folder, 'kloop.yaml'), YAML);
  writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- a\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  let location = path.join(folder, '.kloop', 'kloop.db');
  if (backend === 'postgres') {
    const schema = await createTestSchema();
    schemas.push(schema);
    location = schema.url;
  }
  const db = await openDatabase(location);
  const study = createOnlineStudy(loadOnlineConfig(folder), db, () => clock.now);
  studies.push(study);
  return study;
}

async function startExperiment(study: OnlineStudy, at: Date): Promise<number> {
  const seed = await putVersion(study.db, 'Seed.\n', 'seed', null, null);
  await setRegistryVersion(study.db, seed.id, 'seed');
  const candidate = await putVersion(study.db, 'Seed.\nAsk one question.\n', 'candidate', seed.id, null);
  return (
    await startOnlineExperiment(study.db, {
      kind: 'ab',
      incumbentVersionId: seed.id,
      candidateVersionId: candidate.id,
      rationale: 'r',
      proposer: 'ideas',
      at: at.toISOString(),
    })
  ).id;
}

const backends = postgres ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(backends)('the online study handle on %s', (backend) => {
  it('assigns deterministically by hash and keeps a unit in its arm when the ramp moves', async () => {
    const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
    const study = await openStudy(backend, clock);
    await expect(study.assign('u1')).rejects.toThrow(/has not started/);
    const id = await startExperiment(study, clock.now);
    study.refresh();
    const salt = assignmentSalt(1);
    const units = Array.from({ length: 400 }, (_, index) => `u${index}`);
    const first = await Promise.all(units.map((unit) => study.assign(unit)));
    first.forEach((assignment, index) => expect(assignment.arm).toBe(armOf(salt, id, units[index]!, 0.2)));
    const candidates = first.filter((assignment) => assignment.arm === 'candidate').length;
    expect(candidates).toBe(units.filter((unit) => armOf(salt, id, unit, 0.2) === 'candidate').length);
    expect(candidates).toBeGreaterThan(50);
    expect(candidates).toBeLessThan(110);
    expect(first.find((assignment) => assignment.arm === 'candidate')?.text).toBe('Seed.\nAsk one question.\n');
    await updateOnlineExperiment(study.db, id, { rampStep: 1 });
    study.refresh();
    clock.now = new Date('2026-01-05T10:00:00.000Z');
    const again = await Promise.all(units.map((unit) => study.assign(unit)));
    expect(again.map((assignment) => [assignment.arm, assignment.exposedAt])).toEqual(
      first.map((assignment) => [assignment.arm, assignment.exposedAt]),
    );
    expect(
      Number(
        (
          await study.db
            .selectFrom('exposures')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(400);
    const fresh = await study.assign('new-unit');
    expect(fresh.arm).toBe(armOf(salt, id, 'new-unit', 0.5));
  });

  it("serves the unit's variant through getActiveArtifactText inside the request only", async () => {
    const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
    const study = await openStudy(backend, clock);
    const id = await startExperiment(study, clock.now);
    study.refresh();
    const unit = Array.from({ length: 50 }, (_, index) => `v${index}`).find(
      (name) => armOf(assignmentSalt(1), id, name, 0.2) === 'candidate',
    )!;
    const inside = await study.withAssignment(unit, async () => getActiveArtifactText(study.db));
    expect(inside).toBe('Seed.\nAsk one question.\n');
    expect(await getActiveArtifactText(study.db)).toBe('Seed.\n');
  });

  it('stores each outcome once, attributes it within the window, and refuses bad lines with their numbers', async () => {
    const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
    const study = await openStudy(backend, clock);
    const id = await startExperiment(study, clock.now);
    study.refresh();
    const a = await study.assign('a');
    await study.assign('b');
    clock.now = new Date('2026-01-05T11:00:00.000Z');
    const lines = [
      '{"unit":"a","metric":"reply_rate","value":1,"at":"2026-01-05T09:30:00Z"}',
      '{"unit":"a","metric":"reply_rate","value":1,"at":"2026-01-05T09:30:00Z"}',
      'not json',
      '{"unit":"ghost","metric":"reply_rate","value":1,"at":"2026-01-05T09:30:00Z"}',
      '{"unit":"a","metric":"opens","value":1,"at":"2026-01-05T09:30:00Z"}',
      '{"unit":"b","metric":"reply_rate","value":2,"at":"2026-01-05T09:30:00Z"}',
      '{"unit":"b","metric":"revenue","value":12.5,"at":"2026-01-05T09:10:00Z"}',
      '{"unit":"b","metric":"revenue","value":7,"at":"2026-01-05T10:30:00Z"}',
      '{"unit":"b","metric":"revenue","value":3,"at":"2026-01-05T12:30:00Z"}',
      '{"unit":"b","metric":"revenue","value":3,"at":"2026-01-05T08:30:00Z"}',
      '{"unit":"b","metric":"revenue","value":3}',
    ].join('\n');
    const report = await study.recordOutcomeLines(lines, 'http');
    expect([report.stored, report.duplicates]).toEqual([3, 1]);
    expect(report.refused.map((refusal) => [refusal.line, refusal.reason.split(':')[0]])).toEqual([
      [3, 'not JSON (Unexpected token \'o\', "not json" is not valid JSON)'],
      [4, 'unit'],
      [5, 'metric'],
      [6, 'value'],
      [9, 'at'],
      [10, 'at'],
      [11, 'at'],
    ]);
    const again = await study.recordOutcomeLines(lines, 'http');
    expect([again.stored, again.duplicates, again.refused.length]).toEqual([0, 4, 7]);
    expect(
      Number(
        (
          await study.db
            .selectFrom('outcomes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(3);
    await expect(study.recordOutcome({ unit: 'ghost', metric: 'reply_rate', value: 1, at: clock.now })).rejects.toThrow(
      /unknown unit "ghost"/,
    );
    expect(
      await study.recordOutcome({ unit: 'a', metric: 'reply_rate', value: 1, at: '2026-01-05T09:30:00Z' }),
    ).toEqual({ duplicate: true });
    const closedBy = '2026-01-05T11:00:00.000Z';
    const replies = await armStatistics(study.db, { experimentId: id, metric: 'reply_rate', kind: 'binary', closedBy });
    const revenue = await armStatistics(study.db, {
      experimentId: id,
      metric: 'revenue',
      kind: 'continuous',
      closedBy,
    });
    const armA = a.arm;
    expect(replies[armA].sum).toBe(1);
    // b's revenue inside its 1 h window: 12.5 (09:10); 10:30 and 12:30 fall after it.
    const bArm = (await study.assign('b')).arm;
    expect(revenue[bArm].sum).toBe(12.5);
    expect(revenue[bArm].sumOfSquares).toBe(156.25);
    expect(replies.incumbent.units + replies.candidate.units).toBe(2);
  });

  it('refuses an assignment for a stopped study, and a clock before the experiment', async () => {
    const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
    const study = await openStudy(backend, clock);
    await startExperiment(study, clock.now);
    study.refresh();
    clock.now = new Date('2026-01-05T08:00:00.000Z');
    await expect(study.assign('early')).rejects.toThrow(/a clock that goes backwards is refused/);
    await writeOnlineState(study.db, ONLINE_STOPPED_KEY, JSON.stringify({ reason: 'max_experiments' }));
    study.refresh();
    clock.now = new Date('2026-01-05T10:00:00.000Z');
    await expect(study.assign('late')).rejects.toThrow(/the online study has stopped \(max_experiments\)/);
    expect(
      Number(
        (
          await study.db
            .selectFrom('exposures')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(0);
  });
});
