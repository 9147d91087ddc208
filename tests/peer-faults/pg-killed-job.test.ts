/**
 * Peer fault 14: five kills of the same job (its worker SIGKILLed each time,
 * as an out-of-memory kill or a crash does) turned its candidate into
 * `evaluation_failed` ("unknown error"), with no message: a result changed by
 * the infrastructure. Now each unlock of a gone worker's job records why in
 * the job (`worker gone on N attempt(s): …`), and a job given up after kills
 * stops the run as `infrastructure_failure` (exit 1) with that reason.
 *
 * The baseline is stored first by a single-process run (`--max-experiments
 * 0`), so the coordinator's first job is a candidate's. "Mid-job" without
 * timing: the test holds `example_results` locked (readers go on, writers
 * wait), so a worker that takes the job waits to store its first result;
 * the test then kills it and starts the next one.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { queueSchemaOf } from '../../src/storage/evaluation-queue.ts';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import { runKloop } from '../reliability-fixture.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, makeSmallStudy, observer, runCleanups, start } from './pg-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

describe.runIf(postgres)('peer fault 14: the same job killed five times', () => {
  it('stops the run as infrastructure_failure with the reason, never charging the candidate', async () => {
    const study = makeSmallStudy(cleanups);
    const schema = await freshSchema(cleanups);
    const baseline = await runKloop(['run', study, '--db', schema.url, '--max-experiments', '0', '--quiet']);
    expect(baseline.code, baseline.stderr).toBe(0);

    const blocker = await observer(cleanups);
    await blocker.query(`begin; lock table ${schema.schema}.example_results in exclusive mode`);
    const coordinator = start(cleanups, [
      'run',
      study,
      '--db',
      schema.url,
      '--workers',
      '--batch-size',
      '100',
      '--json',
    ]);
    const client = await observer(cleanups);
    const queue = queueSchemaOf(schema.schema);
    const taken: string[] = [];
    for (let kill = 1; kill <= 5; kill += 1) {
      const worker = start(cleanups, ['worker', study, '--db', schema.url, '--concurrency', '1', '--quiet']);
      // The worker holds a job (its heartbeat row names its pid), blocked on storing its first result.
      const job = await vi.waitFor(
        async () => {
          const rows = await client.query<{ id: string }>(
            `select j.id from ${queue}.jobs j join ${schema.schema}.leases l on l.study_key = 'study#worker:' || j.locked_by where l.pid = $1`,
            [worker.child.pid],
          );
          expect(rows.rows).toHaveLength(1);
          return rows.rows[0]!.id;
        },
        { timeout: 90_000, interval: 100 },
      );
      taken.push(job);
      worker.child.kill('SIGKILL');
      await worker.result;
      if (kill < 5) {
        // The coordinator unlocks it (the worker's process is gone) before the next worker starts.
        await vi.waitFor(
          async () =>
            expect(
              (await client.query(`select 1 from ${queue}.jobs where id = $1 and locked_by is null`, [job])).rows,
            ).toHaveLength(1),
          { timeout: 30_000, interval: 100 },
        );
      }
    }
    expect(new Set(taken).size).toBe(1);
    await blocker.query('commit');

    const end = await coordinator.result;
    expect(end.code, end.stderr).toBe(1);
    const report = JSON.parse(end.stdout) as { stopReason: string; stopDetail: string; refused: number };
    expect(report.stopReason).toBe('infrastructure_failure');
    expect(report.stopDetail).toMatch(
      /was given up after 5 attempts: its worker was gone on 5 of them \(last: pid \d+ on [^:]+: process \d+ no longer exists on this host\); a job that ends its worker every time is an infrastructure failure/,
    );
    expect(report.stopDetail).not.toMatch(/unknown error/);
    const decisions = await client.query<{ reason: string }>(`select reason from ${schema.schema}.experiments`);
    expect(decisions.rows.map((row) => row.reason)).not.toContain('evaluation_failed');
  }, 300_000);
});
