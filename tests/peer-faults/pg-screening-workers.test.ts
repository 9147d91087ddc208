/**
 * Peer fault 15: the workers did not get the proposer's evaluations. The
 * error-driven proposer's screening (up to `proposer.maxEvaluations`
 * candidates scored per round, most of a study's executor calls) ran the
 * executor in the coordinator; workers helped only with
 * `proposer.maxEvaluations: 0`.
 *
 * One worker serves a coordinator; when it stops, its `--json` tally counts
 * the example evaluations it executed. Before, they were exactly the
 * notebook's results (the gate's evaluations); now the screening's are among
 * them too (stored under a scratch key while the coordinator reads them, and
 * removed: none is left in the notebook). One round (2 experiments) shows
 * it: its screening, its gate evaluations and the scratch rows' removal; the
 * fixture's second round repeated them (a third of the file's time).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { postgresAvailable } from '../../src/test-support/postgres.ts';
import { runKloop } from '../reliability-fixture.ts';
import type { Cleanups } from './pg-fixture.ts';
import { freshSchema, makeSmallStudy, observer, runCleanups, start, stderrOf } from './pg-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Cleanups = [];
afterAll(() => runCleanups(cleanups));

describe.runIf(postgres)("peer fault 15: the proposer's screening", () => {
  it('goes to the workers, and leaves nothing in the notebook', async () => {
    const study = makeSmallStudy(cleanups, ['stopping: { maxExperiments: 2 }']);
    const schema = await freshSchema(cleanups);
    const worker = start(cleanups, ['worker', study, '--db', schema.url, '--concurrency', '2', '--json']);
    const stderr = stderrOf(worker.child);
    await vi.waitFor(() => expect(stderr()).toMatch(/serving evaluator/), { timeout: 180_000, interval: 100 });
    const run = await runKloop(['run', study, '--db', schema.url, '--workers', '--json']);
    expect(run.code, run.stderr).toBe(0);
    worker.child.kill('SIGTERM');
    const end = await worker.result;
    expect(end.code).toBe(130);
    const tally = JSON.parse(end.stdout) as { results: number };

    const client = await observer(cleanups);
    const rows = await client.query<{ stored: string; scratch: string }>(
      `select count(*) filter (where fingerprint not like 'scratch:%') as stored, count(*) filter (where fingerprint like 'scratch:%') as scratch from ${schema.schema}.example_results`,
    );
    const stored = Number(rows.rows[0]!.stored);
    expect(Number(rows.rows[0]!.scratch)).toBe(0);
    expect(stored).toBeGreaterThan(0);
    // The worker executed the gate's evaluations (the stored results) and the screening's.
    expect(tally.results).toBeGreaterThan(stored);
  }, 300_000);
});
