/**
 * The identity of a proposed candidate within its study: what a resumed
 * round looks decided experiments up by.
 *
 * `r<round>.c<position>.<hash>`: the round, the candidate's 0-based position
 * in the proposer's answer, and the first 16 hex digits of the SHA-256 of
 * its proposed text. A resumed round reads its candidates with their
 * identities from the stored open round (src/loop/open-round-state.ts), or,
 * at phase `ask`, asks the proposer again with the same seed (study seed,
 * round, attempt) and gets the same answer (a model's answer comes back from
 * the response cache), so each candidate gets the identity it had before the
 * crash. Two candidates of one round are never
 * the same identity, whatever their delta text: a delta describes a change,
 * and two different texts can describe theirs alike (the same line added in
 * two places, two rewordings of one section).
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Candidate } from '../proposers/proposer.ts';

/** Hex digits of the content hash kept in an identity (64 bits: a collision within one round is not a concern). */
const HASH_DIGITS = 16;

/**
 * The identity of the candidate at `position` (0-based) of round `round`'s
 * proposer answer, proposed as `text`.
 *
 * @example
 * ```ts
 * candidateId(3, 1, 'playbook text'); // 'r3.c1.<16 hex digits>'
 * ```
 */
export function candidateId(round: number, position: number, text: string): string {
  return `r${round}.c${position}.${contentHash(text).slice(0, HASH_DIGITS)}`;
}

/** The identities of an answer's candidates, by object (the engine hands these objects on to screen, race and tell). */
export function candidateIds(round: number, candidates: readonly Candidate[]): Map<Candidate, string> {
  return new Map(candidates.map((candidate, position) => [candidate, candidateId(round, position, candidate.text)]));
}
