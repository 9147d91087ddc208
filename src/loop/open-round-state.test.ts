/**
 * The stored open round (src/loop/open-round-state.ts): a candidate with
 * every data field and a re-trial reads back as it was stored, through JSON;
 * a candidate with a `rebase` function is not storable; a round without a
 * phase (an older database) reads as it was.
 */
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../proposers/proposer.ts';
import { parseOpenRound, restoreCandidate, storable, storeCandidate } from './open-round-state.ts';

const candidate: Candidate = {
  text: 'apple\npear\n',
  delta: 'pear',
  rationale: 'a fruit asked for',
  expectedNetFixes: 2,
  flags: ['copies-example-text'],
};
const retrial = { kind: 'retrial' as const, trial: 2, of: 3, earlier: [4] };

describe('the stored open round', () => {
  it('reads a candidate back with its data fields, identity and re-trial, through JSON', () => {
    const stored = storeCandidate(candidate, 'r2.c0.0123456789abcdef', retrial);
    const round = {
      round: 2,
      baseVersionId: 3,
      attempt: 1,
      phase: 'decide',
      candidates: [stored],
      distances: [1, 0.5],
    };
    const read = parseOpenRound(JSON.parse(JSON.stringify(round)));
    expect(read).toEqual(round);
    expect(read?.candidates?.[0]?.retrial).toEqual({ kind: 'retrial', trial: 2, of: 3, earlier: [4] });
    expect(restoreCandidate(read!.candidates![0]!)).toEqual(candidate);
  });

  it('reads an estimate JSON wrote as null (NaN) back as absent', () => {
    const stored = storeCandidate({ ...candidate, expectedNetFixes: Number.NaN }, 'r1.c0.0123456789abcdef', undefined);
    const read = parseOpenRound(
      JSON.parse(JSON.stringify({ round: 1, baseVersionId: 1, phase: 'screen', candidates: [stored] })),
    );
    expect(restoreCandidate(read!.candidates![0]!)).toEqual({
      text: candidate.text,
      delta: candidate.delta,
      rationale: candidate.rationale,
      flags: candidate.flags,
    });
  });

  it('stores no candidate with a rebase function', () => {
    expect(storable([candidate])).toBe(true);
    expect(storable([candidate, { ...candidate, rebase: (text) => text }])).toBe(false);
  });

  it('reads an older round (no phase, no attempt) and no round as they were', () => {
    expect(parseOpenRound({ round: 4, baseVersionId: 2 })).toEqual({ round: 4, baseVersionId: 2 });
    expect(parseOpenRound(null)).toBeNull();
    expect(parseOpenRound(undefined)).toBeUndefined();
    expect(() => parseOpenRound({ round: 0, baseVersionId: 2 })).toThrow(
      /^study_state is malformed at openRound\.round: /,
    );
  });
});
