/**
 * Peer fault 12: a new study in the same database stopped every other
 * study's workers. graphile-worker announces the migrations of a queue schema
 * on the database-wide channel `worker:migrate`; the first coordinator of a
 * new study installs its queue schema (breaking migrations among them), and
 * every worker of every other study shut down ("detected breaking
 * migration", exit 57) while its coordinator waited for ever.
 *
 * A worker serves study A; a coordinator of a new study B opens its queue
 * (installing B's queue schema); then A's evaluation goes through A's queue:
 * A's worker must still be there to run it (src/storage/queue-notices.ts).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/storage/database.ts';
import { openEvaluationQueue, queueSchemaOf } from '../../src/storage/evaluation-queue.ts';
import { loadStudyAsync } from '../../src/study/load-study.ts';
import { createStudyEvaluator } from '../../src/loop/evaluate-partition.ts';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, makeSmallStudy, observer, runCleanups, start, stderrOf } from './pg-fixture.ts';
import { openNotebook } from '../../src/storage/notebook/index.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

describe.runIf(postgres)('peer fault 12: a new study in the same database', () => {
  it("does not stop another study's workers", async () => {
    const studyA = makeSmallStudy(cleanups);
    const [schemaA, schemaB] = [await freshSchema(cleanups), await freshSchema(cleanups)];
    const worker = start(cleanups, ['worker', studyA, '--db', schemaA.url, '--concurrency', '1']);
    const stderr = stderrOf(worker.child);
    await vi.waitFor(() => expect(stderr()).toMatch(/serving evaluator/), { timeout: 180_000, interval: 100 });

    // Study B's first coordinator installs B's queue schema.
    const dbB = await openDatabase(schemaB.url);
    cleanups.push(() => dbB.destroy());
    const queueB = await openEvaluationQueue(schemaB.url, dbB);
    await queueB.close();
    const client = await observer(cleanups);
    const installed = await client.query<{ breaking: number }>(
      `select count(*) filter (where breaking) as breaking from ${queueSchemaOf(schemaB.schema)}.migrations`,
    );
    expect(Number(installed.rows[0]!.breaking)).toBeGreaterThan(0);

    // Study A's evaluation, through A's queue: A's worker runs it.
    const dbA = await openDatabase(schemaA.url);
    cleanups.push(() => dbA.destroy());
    const queueA = await openEvaluationQueue(schemaA.url, dbA);
    cleanups.push(() => queueA.close());
    const study = await loadStudyAsync(studyA);
    const evaluation = createStudyEvaluator(study, openNotebook(dbA), { remote: queueA }).evaluate({
      artifactText: study.artifactText,
      partition: 'optimization',
      examples: study.partitions.optimization,
    });
    const outcome = await Promise.race([
      evaluation.then((score) => ({ score })),
      worker.result.then((end) => ({ end })),
    ]);
    expect('end' in outcome ? `worker exited ${outcome.end.code}: ${outcome.end.stderr}` : 'evaluated').toBe(
      'evaluated',
    );
    expect('score' in outcome && outcome.score.total).toBe(study.partitions.optimization.length);
    expect(stderr()).not.toMatch(/breaking migration/);

    worker.child.kill('SIGTERM');
    expect((await worker.result).code).toBe(130);
  }, 300_000);
});
