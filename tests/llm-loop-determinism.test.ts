/**
 * Issue #34, item 5: the same seed, study and world give the same decisions,
 * whatever the concurrency and whatever order concurrent calls complete in.
 *
 * Two runs of `kloop run --calibrate` (the CLI, as a user runs it) on one
 * seed of the simulated LLM world (tests/simulated-llm-world.ts), racing on
 * as shipped: one with `proposer.concurrency` 2 (the shipped value), one
 * with 1; the world delays every answer by an unseeded random 0–4 ms, so
 * concurrent calls complete in a different order in each run. Every
 * decision — its round, the hint it carried, accepted or refused and why,
 * each check's statistic — and the final prompt must be the same.
 *
 * Kept fast: a 6-proposal budget, 3 repeats and 3 noise repeats (the loop's
 * machinery is the shipped one; only the sizes are smaller).
 */
import { describe, expect, it } from 'vitest';
import { runLoopWorld, type LoopWorldRun } from './llm-loop-world.ts';

const WORLD = { counts: { good: 4, neutral: 3, harmful: 2 }, latencyJitterMs: 4 };
const GATE = { repeats: 3, noiseRepeats: 3, signalRepeats: 2 };

/** What a decision is, without the time it was made. */
function decisionsOf(run: LoopWorldRun): unknown[] {
  return run.decisions.map((decision) => ({
    ...decision,
    checks: decision.checks.map((check) => ({
      name: check.name,
      passed: check.passed,
      statistic: check.statistic,
      threshold: check.threshold,
    })),
  }));
}

describe('the LLM loop is reproducible per seed', () => {
  it('two runs of one seed, at concurrency 2 and 1 and with answers completing in a random order, make the same decisions', async () => {
    const first = await runLoopWorld(2, 6, WORLD, [], { concurrency: 2, gate: GATE });
    const second = await runLoopWorld(2, 6, WORLD, [], { concurrency: 1, gate: GATE });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(second.exitCode, second.stderr).toBe(0);
    // Something to compare: candidates were judged, some passed the optimization checks, and the runs spent the same calls.
    expect(first.evaluated).toBeGreaterThanOrEqual(4);
    expect(decisionsOf(second)).toEqual(decisionsOf(first));
    expect(second.stopReason).toBe(first.stopReason);
    expect(second.finalPrompt).toBe(first.finalPrompt);
    expect(second.executorCalls + second.proposerCalls).toBe(first.executorCalls + first.proposerCalls);
  }, 180_000);
});
