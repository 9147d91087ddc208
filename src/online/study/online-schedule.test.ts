/**
 * The two loops of an online study on a manual clock (src/schedule/schedule.ts's
 * ManualScheduler, croner's own fire times): the slow loop (daily at 00:00)
 * starts and decides experiments; the fast loop (hourly) stops a harmful
 * variant the hour its guardrail turns significantly worse and takes a ramp
 * step once `rampEvery` has passed, without waiting for the slow loop, and
 * leaves every other decision (calibration, acceptance) to the slow loop.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.ts';
import { createManualScheduler, listScheduleRuns, startSchedule } from '../../schedule/schedule.ts';
import { loadOnlineConfig } from '../config.ts';
import { createIdeasProposer } from '../proposers/ideas-proposer.ts';
import { createOnlineLoops } from './online-schedule.ts';
import { createOnlineStudy } from './online-study.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
const HOUR = 3_600_000;

/** mulberry32. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('kloop schedule on an online study, manual clock', () => {
  it('the fast loop stops harm and ramps within hours; the slow loop calibrates, starts and decides at midnight', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-loops-'));
    folders.push(folder);
    writeFileSync(
      path.join(folder, 'kloop.yaml'),
      `mode: online
artifact: strategy.md
metrics:
  primary: reply_rate
  guardrails: [{ name: unsubscribe_rate, direction: decrease, margin: 0.02 }]
  attributionWindow: 1h
  ramp: [0.2, 0.5]
  rampEvery: 3h
  windows: { minUnitsPerArm: 300, confirmationUnits: 300 }
schedule: { fast: "0 * * * *", slow: "0 0 * * *", timezone: UTC }
`,
    );
    writeFileSync(path.join(folder, 'strategy.md'), 'Write short emails.\n');
    writeFileSync(
      path.join(folder, 'program.md'),
      '# Instructions\n- Add a discount link.\n- Ask one question.\n# Constraints\nnone\n# Stopping criteria\nwhen the ideas run out\n',
    );
    const scheduler = createManualScheduler(new Date('2026-01-04T23:30:00.000Z'), { timezone: 'UTC' });
    const db = await openDatabase(path.join(folder, '.kloop', 'kloop.db'));
    const study = createOnlineStudy(loadOnlineConfig(folder), db, () => scheduler.now());
    const running = startSchedule({ db, loops: createOnlineLoops(study, createIdeasProposer()), scheduler });
    const draw = random(5);
    try {
      await scheduler.advanceTo(new Date('2026-01-05T00:00:00.000Z'));
      // 200 recipients every hour for three days, each answering within the hour; outcomes sent as they come.
      for (let hour = 0; hour < 72; hour += 1) {
        const start = Date.parse('2026-01-05T00:00:00.000Z') + hour * HOUR;
        await scheduler.advanceTo(new Date(start + 60_000));
        const units = Array.from({ length: 200 }, (_, index) => `h${hour}-r${index}`);
        const assigned = await study.assignMany(units).catch(() => []);
        await scheduler.advanceTo(new Date(start + 40 * 60_000));
        const lines = assigned.flatMap((assignment, index) => {
          const harmful = assignment.text.includes('discount');
          const reply = assignment.text.includes('question') ? 0.3 : 0.1;
          const at = new Date(start + 30 * 60_000).toISOString();
          return [
            ...(draw() < reply ? [{ unit: units[index], metric: 'reply_rate', value: 1, at }] : []),
            ...(draw() < (harmful ? 0.3 : 0.01)
              ? [{ unit: units[index], metric: 'unsubscribe_rate', value: 1, at }]
              : []),
          ];
        });
        if (lines.length > 0)
          expect(
            (await study.recordOutcomeLines(lines.map((line) => JSON.stringify(line)).join('\n'), 'test')).refused,
          ).toEqual([]);
      }
      await scheduler.advanceTo(new Date('2026-01-08T00:30:00.000Z'));
    } finally {
      await running.stop();
    }
    const experiments = await db
      .selectFrom('online_experiments')
      .select(['id', 'kind', 'status', 'reason', 'started_at', 'decided_at'])
      .orderBy('id')
      .execute();
    const runs = await listScheduleRuns(db);
    const looks = await db
      .selectFrom('online_looks')
      .select(['experiment_id', 'at', 'outcome', 'reason'])
      .orderBy('id')
      .execute();
    await study.close();
    // The slow loop started the A/A at midnight and calibrated it the next midnight (the fast loop left it: ripe).
    expect(experiments[0]).toMatchObject({
      kind: 'aa',
      status: 'calibrated',
      started_at: '2026-01-05T00:00:00.000Z',
      decided_at: '2026-01-06T00:00:00.000Z',
    });
    expect(
      runs.some(
        (run) =>
          run.loop === 'fast' &&
          (run.detail as { looked: number; action: string }).looked === 1 &&
          (run.detail as { action: string }).action === 'ripe',
      ),
    ).toBe(true);
    // The harmful variant: stopped by the fast loop within hours of its start, not at a midnight.
    expect(experiments[1]).toMatchObject({
      kind: 'ab',
      status: 'refused',
      reason: 'harm',
      started_at: '2026-01-06T00:00:00.000Z',
    });
    expect(
      experiments[1]!.decided_at! < '2026-01-06T12:00:00.000Z' &&
        !experiments[1]!.decided_at!.endsWith('T00:00:00.000Z'),
    ).toBe(true);
    const harmRun = runs.find((run) => run.loop === 'fast' && (run.detail as { action: string }).action === 'harm')!;
    expect(harmRun.scheduledAt).toBe(experiments[1]!.decided_at);
    // The next experiment waits for the slow loop: started at the next midnight; the fast loop took its ramp step.
    expect(experiments[2]).toMatchObject({ kind: 'ab', started_at: '2026-01-07T00:00:00.000Z' });
    const ramps = runs
      .filter((run) => run.loop === 'fast' && (run.detail as { action: string }).action === 'ramp')
      .map((run) => [run.scheduledAt, (run.detail as { looked: number }).looked]);
    expect(ramps).toEqual([
      ['2026-01-06T03:00:00.000Z', 2],
      ['2026-01-07T03:00:00.000Z', 3],
    ]);
    const shares = await openDatabase(path.join(folder, '.kloop', 'kloop.db'), { readonly: true });
    try {
      const firstAtHalf = await shares
        .selectFrom('exposures')
        .select((eb) => eb.fn.min('exposed_at').as('first'))
        .where('experiment_id', '=', 3)
        .where('share', '=', 0.5)
        .executeTakeFirstOrThrow();
      expect(firstAtHalf.first).toBe('2026-01-07T03:01:00.000Z');
    } finally {
      await shares.destroy();
    }
    // Every look the fast loop acted on is stored; the two loops never ran at once.
    expect(looks.filter((look) => look.experiment_id === 2).at(-1)).toMatchObject({
      outcome: 'refuse',
      reason: 'harm',
    });
    expect(runs.every((run) => run.outcome === 'ok')).toBe(true);
    const sorted = [...runs].sort((left, right) => left.startedAt.localeCompare(right.startedAt) || left.id - right.id);
    for (let index = 1; index < sorted.length; index += 1)
      expect(sorted[index]!.startedAt >= sorted[index - 1]!.endedAt!).toBe(true);
  }, 60_000);
});
