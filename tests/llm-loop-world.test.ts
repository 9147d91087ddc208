/**
 * The whole LLM loop, as a user runs it, against a world whose truth we know
 * (tests/simulated-llm-world.ts): `kloop run --calibrate` on a copy of
 * examples/intent-llm with its shipped gate, repeats, proposer and corpus,
 * the model a prompt-sensitive simulation on loopback HTTP with hint lines
 * of known good, neutral, harmful and overfitting effect and malformed
 * proposer answers. Everything is seeded: the run is deterministic.
 *
 * The full measurement (3 seeds, a 40-proposal budget) is `npm run
 * bench:llm-loop`; this test runs one seed on a 12-proposal budget.
 */
import { describe, expect, it } from 'vitest';
import { runLoopWorld } from './llm-loop-world.ts';

describe('the LLM loop in a simulated world of known truth', () => {
  it('keeps the good hints and refuses neutral, harmful and overfitting ones; malformed answers neither adopted nor fatal', async () => {
    const run = await runLoopWorld(1, 12, { malformedFirst: 2 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(['max_experiments', 'plateau', 'no_new_proposals']).toContain(run.stopReason);
    expect(run.evaluated).toBe(12);
    expect(run.accepted).toMatchObject({ neutral: 0, harmful: 0, overfit: 0 });
    expect(run.acceptedUnknown).toBe(0);
    expect(run.accepted.good).toBeGreaterThanOrEqual(2);
    expect(run.offered.overfit + run.offered.harmful + run.offered.neutral).toBeGreaterThan(0);
    // Candidates of one round that edit the same section were rebased onto the merged incumbent and judged again.
    expect(run.rebasedDecisions).toBeGreaterThan(0);
    // The malformed answers (the first two, and any drawn later) were recorded as failures and
    // retried with a fresh sample: none stopped the study, none was adopted.
    expect(run.malformedAnswers).toBeGreaterThanOrEqual(2);
    expect(run.proposalFailures).toBe(run.malformedAnswers);
    expect((run.report.proposalFailures as Record<string, number>) ?? {}).not.toEqual({});
  }, 240_000);
});
