import { describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import { bigramJaccardDistance } from '../stats/index.ts';
import type { Candidate } from '../proposers/proposer.ts';
import { dedupeCandidates } from './propose.ts';

const candidate = (text: string, delta: string): Candidate => ({ text, delta, rationale: 'r' });

describe('dedupeCandidates (gate.minDeltaDistance)', () => {
  const prior = {
    history: [],
    deltas: ['appTypeCues.booking += "appointment"'],
    triedHashes: new Set([contentHash('tried')]),
    failedEvaluations: new Map(),
  };
  // The same change written again, on another text: distance 0.
  const near = candidate('new text', 'appTypeCues.booking += "appointment"');
  const far = candidate('other text', 'entityTerms.invoice = "document"');
  const distance = bigramJaccardDistance(prior.deltas[0]!, near.delta);

  it('skips a delta closer than gate.minDeltaDistance to one evaluated before, and an artifact evaluated before', () => {
    expect(distance).toBe(0);
    const { fresh, skipped } = dedupeCandidates([near, far, candidate('tried', 'x')], prior, 0.2);
    expect(fresh).toEqual([far]);
    expect(skipped.map((entry) => entry.reason)).toEqual([
      `delta too close to one already evaluated (bigram Jaccard distance ${distance.toFixed(3)} < 0.2)`,
      'same content as an artifact already evaluated',
    ]);
  });

  it('with a configured 0 skips no delta for closeness (only the same content)', () => {
    const { fresh, skipped } = dedupeCandidates([near, far, candidate('tried', 'x')], prior, 0);
    expect(fresh).toEqual([near, far]);
    expect(skipped.map((entry) => entry.reason)).toEqual(['same content as an artifact already evaluated']);
  });
});

describe('dedupeCandidates with re-trials (src/loop/retrials.ts)', () => {
  const delta = 'hint += "name the customer"';
  const prior = (reason: string, baseVersionId: number) => ({
    history: [],
    deltas: [delta],
    judged: [{ id: 4, delta, baseVersionId, decision: 'refused' as const, reason }],
    triedHashes: new Set<string>(),
    failedEvaluations: new Map(),
  });
  const again = candidate('prompt v3 + customer hint', delta);

  it('skips a delta judged on the same incumbent and says which experiment judged it', () => {
    const { fresh, skipped, retrials } = dedupeCandidates([again], prior('not_significant', 3), 0.2, {
      baseVersionId: 3,
      retrials: 2,
    });
    expect(fresh).toEqual([]);
    expect(retrials.size).toBe(0);
    expect(skipped.map((entry) => entry.reason)).toEqual([
      'delta too close to one already evaluated (bigram Jaccard distance 0.000 < 0.2): already judged on this incumbent (version 3): experiment #4, refused not_significant',
    ]);
  });

  it('judges again, as trial 2 of 3, a noisy refusal that comes back against a changed incumbent; not a specialization', () => {
    const retried = dedupeCandidates([again], prior('not_confirmed', 2), 0.2, { baseVersionId: 3, retrials: 2 });
    expect(retried.fresh).toEqual([again]);
    expect(retried.retrials.get(again)).toEqual({ kind: 'retrial', trial: 2, of: 3, earlier: [4] });
    const final = dedupeCandidates([again], prior('specialization', 2), 0.2, { baseVersionId: 3, retrials: 2 });
    expect(final.fresh).toEqual([]);
    expect(final.skipped[0]!.reason).toContain(
      'refused specialization (experiment #4), a verdict a re-trial does not reopen',
    );
  });

  it('gate.retrials 0: a noisy refusal back against a changed incumbent is not judged again', () => {
    const never = dedupeCandidates([again], prior('not_confirmed', 2), 0.2, { baseVersionId: 3, retrials: 0 });
    expect(never.fresh).toEqual([]);
    expect(never.retrials.size).toBe(0);
    expect(never.skipped).toHaveLength(1);
  });
});
