/**
 * Which stage of a study a model call is made for: calls are tagged where
 * they are made, not estimated afterwards. A stage is set around a piece of
 * work with {@link withCallStage} (an `AsyncLocalStorage` context, so it
 * follows every `await` and concurrent branch started inside it); the run's
 * usage meter (`budget.ts`) reads {@link currentCallStage} when it records a
 * call and counts calls per stage (`UsageTotals.callsByStage`).
 *
 * Stages (issue #34, "where the calls go"):
 *
 * - `calibration` — `kloop calibrate` / `run --calibrate`: the incumbent's
 *   noise repeats and the contrast;
 * - `proposer` — the proposer's own model calls;
 * - `screening` — evaluations the proposer asks for inside its call (the
 *   scratch evaluator);
 * - `candidates` — candidates' evaluations on optimization and anchor
 *   (screened, raced, rebased);
 * - `incumbent` — the incumbent's evaluations beyond what is stored (its
 *   top-ups, on any partition);
 * - `shadow` — candidates' shadow evaluations;
 * - `other` — anything outside a tagged stage (the report's evaluation, the
 *   power check).
 *
 * The innermost stage wins: a screening evaluation inside the proposer's
 * stage counts as `screening`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The stages a model call can be counted under. */
export const CALL_STAGES = [
  'calibration',
  'proposer',
  'screening',
  'candidates',
  'incumbent',
  'shadow',
  'other',
] as const;
export type CallStage = (typeof CALL_STAGES)[number];

const context = new AsyncLocalStorage<CallStage>();

/** Runs `work` with every model call made inside it counted under `stage` (unless an inner stage is set). */
export function withCallStage<T>(stage: CallStage, work: () => T): T {
  return context.run(stage, work);
}

/** The stage of the call being made now: the innermost {@link withCallStage}, else `other`. */
export function currentCallStage(): CallStage {
  return context.getStore() ?? 'other';
}

/** Zero calls for every stage, in {@link CALL_STAGES} order. */
export function emptyCallsByStage(): Record<CallStage, number> {
  return Object.fromEntries(CALL_STAGES.map((stage) => [stage, 0])) as Record<CallStage, number>;
}
