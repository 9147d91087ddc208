import { describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import { bigramJaccardDistance } from '../stats/index.ts';
import type { Candidate } from '../proposers/proposer.ts';
import { dedupeCandidates } from './propose.ts';

const candidate = (text: string, delta: string): Candidate => ({ text, delta, rationale: 'r' });

describe('dedupeCandidates (gate.minDeltaDistance)', () => {
  const prior = { history: [], deltas: ['appTypeCues.booking += "appointment"'], triedHashes: new Set([contentHash('tried')]) };
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
