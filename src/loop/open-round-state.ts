/**
 * The open round as the notebook stores it (`study_state.openRound`,
 * src/loop/study-state.ts): the round, the version its candidates are
 * proposed against, the proposer attempt, and the engine state the round is
 * in — so a run that resumes it loads the state and continues.
 *
 * Phases (src/loop/engine.ts):
 *
 * - `ask`: the round is open and the proposer has not answered (or its
 *   answer is not kept: see below). A resumed round asks the proposer again
 *   with the same seed (study seed, round, attempt).
 * - `screen`: the proposer answered with fresh candidates; they are stored
 *   here with what the later states read (identities, re-trials, distances)
 *   and are being evaluated. A resumed round takes them from here and does
 *   not ask the proposer again.
 * - `decide`: the candidates are screened (or being raced) and the decisions
 *   are being recorded. Resumed as `screen`: the evaluations paid are stored
 *   results, the decided candidates are skipped by identity.
 *
 * A candidate with a `rebase` function (the built-in proposers' structured
 * edits) cannot be stored as JSON: a round with one moves through the same
 * phases with `reask: true` instead of its candidates, and a resumed round
 * asks the proposer again with the same seed, as before phases were
 * recorded (those proposers answer the same to the same seed; the decisions
 * already recorded are skipped by identity). A round stored without a phase
 * (an older database) is resumed as `ask`.
 *
 * @module
 */
import { z } from 'zod';
import { StorageError } from '../errors.ts';
import type { Candidate } from '../proposers/proposer.ts';

/** The engine state an open round is in; see the module's docstring. */
export type RoundPhase = 'ask' | 'screen' | 'decide';

const retrialSchema = z.object({
  kind: z.literal('retrial'),
  trial: z.number().int(),
  of: z.number().int(),
  earlier: z.array(z.number().int()),
  /** A re-trial on the incumbent it was judged on before: its repeats are this × `gate.repeats`. */
  repeatsFactor: z.number().int().min(2).optional(),
});

const storedCandidateSchema = z.object({
  /** The candidate's identity (src/loop/candidate-id.ts). */
  id: z.string().min(1),
  text: z.string(),
  delta: z.string(),
  rationale: z.string(),
  /** JSON has no NaN: a NaN estimate is stored as null and read back as absent. */
  expectedNetFixes: z.number().nullable().optional(),
  flags: z.array(z.string()).optional(),
  /** Its re-trial (src/loop/retrials.ts), when it is one. */
  retrial: retrialSchema.optional(),
});

/** The schema of `study_state.openRound` (null between rounds; absent in the oldest databases). */
export const openRoundSchema = z
  .object({
    round: z.number().int().positive(),
    baseVersionId: z.number().int().positive(),
    /** The proposer attempt of the round (absent in older databases = 0). */
    attempt: z.number().int().nonnegative().optional(),
    /** Absent in older databases: resumed as `ask`. */
    phase: z.enum(['ask', 'screen', 'decide']).optional(),
    /** Past `ask`: the fresh candidates of the answer, in the proposer's order. */
    candidates: z.array(storedCandidateSchema).optional(),
    /** Past `ask`: the delta distances of the answer's dedupe (the round's diversity). */
    distances: z.array(z.number()).optional(),
    /** Past `ask`, instead of `candidates`: the answer is not JSON (a `rebase` function); a resumed round asks again. */
    reask: z.literal(true).optional(),
  })
  .refine(
    (value) =>
      value.phase === undefined || value.phase === 'ask' || value.candidates !== undefined || value.reask === true,
    { message: 'a round past ask stores its candidates (or reask: true)', path: ['candidates'] },
  )
  .nullable()
  .optional();

/** A candidate as stored with the open round. */
export type StoredCandidate = z.infer<typeof storedCandidateSchema>;
/** `study_state.openRound`, as read and written. */
export type OpenRoundState = NonNullable<z.infer<typeof openRoundSchema>>;

/**
 * Reads a stored `openRound` value (parsed JSON).
 *
 * @throws StorageError (field `openRound.<path>`) when it does not fit the
 *   schema, e.g. `study_state is malformed at openRound.candidates.0.text:
 *   Invalid input: expected string, received undefined`; never a default.
 */
export function parseOpenRound(value: unknown): OpenRoundState | null | undefined {
  const parsed = openRoundSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = ['openRound', ...issue.path.map(String)].join('.');
  throw new StorageError(`study_state is malformed at ${field}: ${issue.message}`, { field });
}

/** True when every candidate can be stored as JSON (none carries a `rebase` function). */
export function storable(candidates: readonly Candidate[]): boolean {
  return candidates.every((candidate) => candidate.rebase === undefined);
}

/**
 * A fresh candidate as stored: its data fields, its identity and its
 * re-trial (none when undefined).
 */
export function storeCandidate(candidate: Candidate, id: string, retrial: StoredCandidate['retrial']): StoredCandidate {
  return {
    id,
    text: candidate.text,
    delta: candidate.delta,
    rationale: candidate.rationale,
    ...(candidate.expectedNetFixes !== undefined ? { expectedNetFixes: candidate.expectedNetFixes } : {}),
    ...(candidate.flags !== undefined ? { flags: [...candidate.flags] } : {}),
    ...(retrial !== undefined ? { retrial } : {}),
  };
}

/** The candidate a stored one was (without its identity and re-trial, which the engine keeps beside it). */
export function restoreCandidate(stored: StoredCandidate): Candidate {
  return {
    text: stored.text,
    delta: stored.delta,
    rationale: stored.rationale,
    ...(typeof stored.expectedNetFixes === 'number' ? { expectedNetFixes: stored.expectedNetFixes } : {}),
    ...(stored.flags !== undefined ? { flags: [...stored.flags] } : {}),
  };
}
