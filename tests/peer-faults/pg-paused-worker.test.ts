/**
 * Peer fault 9 (pg-boss #555, BullMQ #439): a worker paused past the stale
 * delay (SIGSTOP/SIGCONT, as a long GC pause or a suspended VM does) was
 * declared dead: the coordinator deleted its heartbeat row and gave its job
 * to another worker (its executor calls ran twice), and as the worker wrote
 * that row only once, every later job of it looked abandoned too.
 *
 * Two `kloop worker` processes (one job at a time each) serve an in-process
 * coordinator evaluating one artifact on 40 examples (10 jobs of 4) with an
 * `llm` executor on a loopback model server. The server pauses worker A
 * (SIGSTOP) at its first call for 6 s — past the coordinator's stale delay,
 * set to 4 s here (`staleAfterMs`; the product's is 15 s, and the pause was
 * 20 s: 14 s of the file's time spent waiting) — then resumes it (SIGCONT)
 * and answers. Every executor call is counted by its
 * (prompt, ticket): each must be made once. Then A's heartbeat rows are
 * removed (as a coordinator on another host does when it judges A gone): A
 * writes them again at its next beat.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/storage/database.ts';
import { openEvaluationQueue } from '../../src/storage/evaluation-queue.ts';
import { createLlmStudyPlugins } from '../../src/study/llm-plugins.ts';
import { loadStudyAsync } from '../../src/study/load-study.ts';
import { createStudyEvaluator } from '../../src/loop/evaluate-partition.ts';
import { makeLlmWorkerStudy, simulatedLabel } from '../../src/test-support/llm-worker-study.ts';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import { startFakeOpenAiServer } from '../llm-fake-openai-server.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, observer, runCleanups, start, stderrOf } from './pg-fixture.ts';
import { openNotebook } from '../../src/storage/notebook/index.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

/** The coordinator's stale delay in this test (the product's LEASE_STALE_AFTER_MS is 15 s), in milliseconds. */
const STALE_AFTER_MS = 4_000;
/** How long worker A is paused: past {@link STALE_AFTER_MS}. */
const PAUSE_MS = 6_000;
const KEY_ENV = 'KLOOP_TEST_MODEL_KEY';

describe.runIf(postgres)('peer fault 9: a worker paused past the stale delay', () => {
  it('keeps its job (no executor call runs twice) and registers again when its heartbeat row was removed', async () => {
    const pids = new Map<string, number>();
    let paused = false;
    const server = await startFakeOpenAiServer(async (request) => {
      const key = String(request.headers.authorization ?? '');
      const pid = pids.get(key);
      if (key === 'Bearer worker-a' && pid !== undefined && !paused) {
        paused = true;
        process.kill(pid, 'SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        process.kill(pid, 'SIGCONT');
      }
      return { content: JSON.stringify({ label: simulatedLabel(request.user) }) };
    });
    cleanups.push(() => server.close());
    const dir = await makeLlmWorkerStudy(server.baseURL, KEY_ENV);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const schema = await freshSchema(cleanups);
    const db = await openDatabase(schema.url);
    cleanups.push(() => db.destroy());

    const workers = ['worker-a', 'worker-b'].map((key) => {
      const worker = start(cleanups, ['worker', dir, '--db', schema.url, '--concurrency', '1', '--no-cache'], {
        [KEY_ENV]: key,
      });
      pids.set(`Bearer ${key}`, worker.child.pid!);
      return { ...worker, stderr: stderrOf(worker.child) };
    });
    await vi.waitFor(() => workers.forEach((worker) => expect(worker.stderr()).toMatch(/serving evaluator/)), {
      timeout: 180_000,
      interval: 100,
    });

    const study = await loadStudyAsync(
      dir,
      createLlmStudyPlugins({
        getDatabase: () => undefined,
        noCache: true,
        env: { ...process.env, [KEY_ENV]: 'coordinator' },
      }),
    );
    const unlocked: string[] = [];
    const queue = await openEvaluationQueue(schema.url, db, {
      batchSize: 4,
      staleAfterMs: STALE_AFTER_MS,
      onUnlocked: (gone) => unlocked.push(...gone.map((worker) => worker.reason)),
    });
    cleanups.push(() => queue.close());
    const score = await createStudyEvaluator(study, openNotebook(db), { remote: queue }).evaluate({
      artifactText: study.artifactText,
      partition: 'optimization',
      examples: study.partitions.optimization,
    });

    expect(paused).toBe(true);
    expect(score.total).toBe(40);
    expect(score.invalid).toBe(0);
    expect(unlocked).toEqual([]);
    const calls = server.requests.map((request) => `${request.system}\u0000${request.user}`);
    expect(calls.length - new Set(calls).size).toBe(0); // duplicate executor calls
    expect(calls.length).toBe(40);

    // A's rows removed (a coordinator elsewhere judged it gone): A registers again.
    const client = await observer(cleanups);
    const rowsOf = async (pid: number): Promise<number> =>
      Number(
        (
          await client.query<{ n: string }>(
            `select count(*) as n from ${schema.schema}.leases where study_key like 'study#worker:%' and pid = $1`,
            [pid],
          )
        ).rows[0]!.n,
      );
    const pidA = workers[0]!.child.pid!;
    expect(await rowsOf(pidA)).toBe(1);
    await client.query(`delete from ${schema.schema}.leases where study_key like 'study#worker:%' and pid = $1`, [
      pidA,
    ]);
    await vi.waitFor(async () => expect(await rowsOf(pidA)).toBe(1), { timeout: 15_000, interval: 200 });
    await vi.waitFor(() => expect(workers[0]!.stderr()).toMatch(/declared this worker gone .*registered again/), {
      timeout: 5_000,
      interval: 100,
    });

    for (const worker of workers) worker.child.kill('SIGTERM');
    expect((await Promise.all(workers.map((worker) => worker.result))).map((end) => end.code)).toEqual([130, 130]);
  }, 300_000);
});
