/**
 * The two-speed schedule with a fake clock: on a copy of the reference study,
 * from Monday 01:30 to 03:30 (UTC) the fast loop (B, hourly) runs twice (02:00,
 * 03:00) and the slow analyses (A, C, D, Mondays 03:00) once each; every run
 * is recorded with its outcome. The in-flight guard refuses overlapping runs
 * of one loop (fake clock), and the real croner scheduler never overlaps
 * either (real time, a short test).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudyConfig } from '../src/config/config.ts';
import { loadStudy } from '../src/study/load-study.ts';
import type { LoopJobResult, ScheduledLoop } from '../src/schedule/schedule.ts';
import {
  createCronScheduler,
  createManualScheduler,
  createStudyLoops,
  listScheduleRuns,
  resolveLoopCadences,
  startSchedule,
} from '../src/schedule/schedule.ts';

const repo = path.resolve(import.meta.dirname, '..');
let dir: string;
let db: StudyDatabase;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-schedule-'));
  cpSync(path.join(repo, 'examples', 'intent'), dir, {
    recursive: true,
    filter: (source) => !source.includes('.kloop'),
  });
  const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8');
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    `${config}\nschedule:\n  fast: "0 * * * *"\n  slow: "0 3 * * 1"\n  timezone: UTC\n  experimentsPerCycle: 2\n`,
  );
  db = await openDatabase(studyDatabasePath(dir));
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('cadences', () => {
  it('fast drives B, slow drives A, C and D; per-loop overrides and "off" win', () => {
    expect(resolveLoopCadences(undefined)).toEqual({ A: '0 3 * * 1', B: '0 * * * *', C: '0 3 * * 1', D: '0 3 * * 1' });
    expect(
      resolveLoopCadences({ fast: '*/5 * * * *', slow: '0 4 * * *', loops: { A: 'off', D: '0 0 * * *' } }),
    ).toEqual({
      A: null,
      B: '*/5 * * * *',
      C: '0 4 * * *',
      D: '0 0 * * *',
    });
  });

  it('kloop.yaml refuses a bad cron expression with its line', () => {
    const other = mkdtempSync(path.join(tmpdir(), 'kloop-schedule-bad-'));
    try {
      cpSync(path.join(repo, 'examples', 'intent'), other, {
        recursive: true,
        filter: (source) => !source.includes('.kloop'),
      });
      const config = readFileSync(path.join(other, 'kloop.yaml'), 'utf8');
      writeFileSync(path.join(other, 'kloop.yaml'), `${config}\nschedule:\n  fast: "every hour"\n`);
      expect(() => loadStudyConfig(other)).toThrow(/schedule\.fast: not a valid cron expression/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('kloop schedule on the reference study, fake clock', () => {
  it('runs two fast cycles and one slow cycle between Monday 01:30 and 03:30, each recorded', async () => {
    const config = loadStudyConfig(dir);
    const scheduler = createManualScheduler(new Date('2025-03-03T01:30:00.000Z'), { timezone: 'UTC' });
    const loops = createStudyLoops({ db, loadStudy: () => loadStudy(dir) }, config.schedule);
    const schedule = startSchedule({ db, loops, scheduler });
    expect(schedule.nextRuns()).toEqual({
      A: '2025-03-03T03:00:00.000Z',
      B: '2025-03-03T02:00:00.000Z',
      C: '2025-03-03T03:00:00.000Z',
      D: '2025-03-03T03:00:00.000Z',
    });
    const fired = await scheduler.advanceTo(new Date('2025-03-03T03:30:00.000Z'));
    await schedule.stop();
    expect(fired).toBe(5);
    const runs = await listScheduleRuns(db);
    const summary = runs.map((run) => `${run.loop}@${run.scheduledAt.slice(11, 16)}:${run.outcome}`);
    expect(summary.filter((entry) => entry.startsWith('B'))).toEqual(['B@02:00:ok', 'B@03:00:ok']);
    for (const loop of ['A', 'C', 'D'])
      expect(summary.filter((entry) => entry.startsWith(loop))).toEqual([`${loop}@03:00:ok`]);
    // The fast loop added at most experimentsPerCycle experiments per cycle, in the fake time.
    const fast = runs.filter((run) => run.loop === 'B');
    for (const run of fast) expect((run.detail as { newExperiments: number }).newExperiments).toBeLessThanOrEqual(2);
    expect(fast.map((run) => run.startedAt)).toEqual(['2025-03-03T02:00:00.000Z', '2025-03-03T03:00:00.000Z']);
    const experiments = await db.selectFrom('experiments').select(['created_at']).execute();
    expect(experiments.length).toBeGreaterThan(0);
    for (const experiment of experiments) expect(experiment.created_at.startsWith('2025-03-03T0')).toBe(true);
    // Slow loops report what they did.
    const d = runs.find((run) => run.loop === 'D')!;
    expect(d.detail).toMatchObject({ signals: 0, lowConfidence: 0, clusters: 0 });
    // Runs of one loop never overlap.
    for (const loop of ['A', 'B', 'C', 'D']) {
      const ofLoop = runs.filter((run) => run.loop === loop);
      for (let index = 1; index < ofLoop.length; index += 1)
        expect(ofLoop[index]!.startedAt >= ofLoop[index - 1]!.endedAt!).toBe(true);
    }
    // The lease is released after each fast run.
    expect(await db.selectFrom('leases').selectAll().execute()).toEqual([]);
  }, 600_000);
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('no overlapping runs of the same loop', () => {
  it('the in-flight guard records a tick that comes while the loop still runs as overlap (fake clock)', async () => {
    const memory = await openDatabase(':memory:');
    try {
      const scheduler = createManualScheduler(new Date('2025-03-03T00:00:30.000Z'), { timezone: 'UTC' });
      const gate = deferred();
      let running = 0;
      let maxRunning = 0;
      const slowJob = async (): Promise<LoopJobResult> => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await gate.promise;
        running -= 1;
        return { outcome: 'ok', detail: {} };
      };
      const loops: ScheduledLoop[] = [{ name: 'B', pattern: '* * * * *', run: slowJob }];
      const schedule = startSchedule({ db: memory, loops, scheduler });
      await scheduler.advanceTo(new Date('2025-03-03T00:03:30.000Z'), { waitForJobs: false });
      while (running === 0) await new Promise((resolve) => setTimeout(resolve, 5)); // the job has started (state, not time)
      const during = await schedule.runNow('B');
      expect(during.outcome).toBe('overlap');
      gate.resolve();
      await scheduler.settle();
      await schedule.stop();
      expect(maxRunning).toBe(1);
      const runs = await listScheduleRuns(memory);
      expect(runs.filter((run) => run.loop === 'B').map((run) => run.outcome)).toEqual([
        'ok',
        'overlap',
        'overlap',
        'overlap',
      ]);
      expect(await schedule.runNow('B')).toMatchObject({ outcome: 'ok' });
    } finally {
      await memory.destroy();
    }
  });

  it('a failing job is recorded as failed and the schedule goes on', async () => {
    const memory = await openDatabase(':memory:');
    try {
      const scheduler = createManualScheduler(new Date('2025-03-03T00:00:30.000Z'), { timezone: 'UTC' });
      let calls = 0;
      const schedule = startSchedule({
        db: memory,
        scheduler,
        loops: [
          {
            name: 'C',
            pattern: '* * * * *',
            run: async () => {
              calls += 1;
              if (calls === 1) throw new Error('boom');
              return { outcome: 'ok', detail: { calls } };
            },
          },
        ],
      });
      await scheduler.advanceTo(new Date('2025-03-03T00:02:00.000Z'));
      await schedule.stop();
      const runs = await listScheduleRuns(memory, { loop: 'C' });
      expect(runs.map((run) => [run.outcome, run.detail])).toEqual([
        ['failed', { error: 'boom' }],
        ['ok', { calls: 2 }],
      ]);
    } finally {
      await memory.destroy();
    }
  });

  it('the croner scheduler (protect: true) never starts a run while the previous one runs (real time)', async () => {
    // The first run holds until the test releases it, and the test releases it only
    // after the clock has passed the next two per-second ticks. Node fires timers in
    // the order they are due, so croner's ticks (due 1 s and 2 s after the run
    // started) come before the test's check (due 2.5 s after): under any load they
    // have come and gone while the run held, and none may have started a run.
    const memory = await openDatabase(':memory:');
    try {
      let running = 0;
      let maxRunning = 0;
      let started = 0;
      let firstStartedAt = 0;
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const schedule = startSchedule({
        db: memory,
        scheduler: createCronScheduler(),
        loops: [
          {
            name: 'B',
            pattern: '* * * * * *',
            run: async () => {
              started += 1;
              if (started === 1) firstStartedAt = Date.now();
              running += 1;
              maxRunning = Math.max(maxRunning, running);
              await held;
              running -= 1;
              return { outcome: 'ok', detail: {} };
            },
          },
        ],
      });
      while (started === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      while (Date.now() < firstStartedAt + 2_500) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started).toBe(1);
      expect(running).toBe(1);
      // croner itself skipped the ticks (protect: true): none reached the schedule's own guard
      const overlaps = await memory.selectFrom('schedule_runs').select('id').where('outcome', '=', 'overlap').execute();
      expect(overlaps).toEqual([]);
      release();
      await schedule.stop();
      expect(maxRunning).toBe(1);
    } finally {
      await memory.destroy();
    }
  });
});

describe('kloop schedule on a study another schedule holds', () => {
  it('exits 3 with advice it can follow (schedule has no --wait)', async () => {
    const { kloop, makeSmallStudy } = await import('./small-intent-study.ts');
    const { acquireLease, releaseLease } = await import('../src/storage/lease.ts');
    const study = makeSmallStudy({ optimization: 4, anchor: 1, shadow: 2, config: [] });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(path.join(study.dir, '.kloop'), { recursive: true });
    const db = await openDatabase(studyDatabasePath(study.dir));
    try {
      const held = await acquireLease(db, { studyKey: `${study.dir}#schedule` });
      const result = await kloop('schedule', study.dir, '--once', 'D', '--json');
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(
        /^kloop: study is being run by pid \d+ on host \S+ since \S+; one schedule per study: stop that one first \(Ctrl-C or SIGTERM\)$/m,
      );
      expect(result.stderr).not.toContain('--wait');
      await releaseLease(db, held);
    } finally {
      await db.destroy();
      study.cleanup();
    }
  }, 60_000);
});
