/**
 * The race driver: runs a round's candidates through the race (`race.ts`),
 * batch by batch, and hands each outcome to the caller — the loop
 * (`src/loop/race-round.ts`, which evaluates through the frozen evaluator and
 * records every decision) and the gate benchmark's simulation
 * (`src/test-support/simulation/race-trial.ts`) drive the same code.
 *
 * One step: the due candidates' next batch is evaluated (`concurrency` at a
 * time); then the verdicts: futile candidates are refused (`onFutile`),
 * complete ones are decided by the gate best first (`onComplete`). After an
 * acceptance every candidate still in the race is rebased onto the new
 * incumbent (`rebase`) and a new race starts against it (`start`).
 *
 * @module
 */
import type { ExampleScoreRecord } from '../../evaluator/partition-score.ts';
import { dueLook, recordLook } from './early-looks.ts';
import type { Race, RaceEntry, RaceEvidence } from './race.ts';
import { byStanding, nextBatch, observe, raceEvidence, settle, verdicts } from './race.ts';
import type { RaceSlot } from './race-plan.ts';

/** What the driver needs from its caller. `C` is the caller's candidate; `key` names it in the race. */
export interface RaceCallbacks<C extends { key: string }> {
  /** A race of these candidates against the incumbent as it stands now. */
  start(candidates: readonly C[]): Promise<Race> | Race;
  /** The candidate's scores on these example-repeats (one batch). */
  evaluateBatch(
    candidate: C,
    slots: readonly RaceSlot[],
  ): Promise<
    ReadonlyArray<Pick<ExampleScoreRecord, 'exampleId' | 'repeat' | 'valid'> & { composite?: number; transient?: true }>
  >;
  /** Records a futility refusal; false stops the driver (a budget spent, an abort). */
  onFutile(candidate: C, evidence: RaceEvidence): Promise<boolean>;
  /** The gate decides a complete candidate (its full evaluation); `proceed` false stops the driver. */
  onComplete(candidate: C, evidence: RaceEvidence): Promise<{ accepted: boolean; proceed: boolean }>;
  /**
   * An interim look of early acceptance (early-looks.ts): judge the
   * candidate's first `repeats` complete repeats at `level` (the gate's
   * margin and significance check, src/gate/sequential.ts). Required when
   * `gate.racing.earlyAcceptance` is on; without it no look is taken.
   */
  look?(
    candidate: C,
    request: { repeats: number; of: number; level: number },
  ): Promise<{ passed: boolean; pValue: number; delta: number; margin: number }>;
  /** After an acceptance: the candidates still racing, rebased onto the new incumbent (the caller drops and records those it already contains). */
  rebase(candidates: readonly C[]): Promise<C[]>;
  /** Candidates evaluated at once in a step. Default 1. */
  concurrency?: number;
  /** Checked before each step: true stops the driver (an abort). */
  stopped?(): boolean;
}

/** Runs the race to the end (or until a callback stops it). */
export async function runRace<C extends { key: string }>(
  candidates: readonly C[],
  callbacks: RaceCallbacks<C>,
): Promise<void> {
  let pool = [...candidates];
  let race = await callbacks.start(pool);
  const concurrency = Math.max(1, callbacks.concurrency ?? 1);
  for (;;) {
    if (callbacks.stopped?.() === true) return;
    const due = nextBatch(race);
    if (due === null) return;
    const slots = race.plan.batches[due.batch]!;
    const byKey = new Map(pool.map((candidate) => [candidate.key, candidate]));
    const results = new Map<string, Awaited<ReturnType<RaceCallbacks<C>['evaluateBatch']>>>();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, due.keys.length) }, async () => {
        while (next < due.keys.length) {
          const key = due.keys[next]!;
          next += 1;
          results.set(key, await callbacks.evaluateBatch(byKey.get(key)!, slots));
        }
      }),
    );
    for (const key of due.keys) observe(race, key, results.get(key)!);
    const step = verdicts(race);
    const early = await takeLooks(race, due.keys, byKey, callbacks);
    const complete = [...step.complete, ...early].sort(byStanding);
    for (const entry of step.futile) {
      const proceed = await callbacks.onFutile(byKey.get(entry.key)!, raceEvidence(race, entry.key, 'futility'));
      settle(race, entry.key, 'refused');
      if (!proceed) return;
    }
    for (const entry of complete) {
      const { accepted, proceed } = await callbacks.onComplete(
        byKey.get(entry.key)!,
        raceEvidence(race, entry.key, entry.early ? 'early' : 'complete'),
      );
      settle(race, entry.key, accepted ? 'accepted' : 'refused');
      if (!proceed) return;
      if (accepted) {
        const remaining = race.entries
          .filter((other) => other.status === 'racing' || other.status === 'set_aside' || other.status === 'complete')
          .map((other) => byKey.get(other.key)!);
        pool = await callbacks.rebase(remaining);
        race = await callbacks.start(pool);
        break;
      }
    }
  }
}

/** The interim looks due after a batch, one candidate at a time; returns the entries that passed (complete, early). */
async function takeLooks<C extends { key: string }>(
  race: Race,
  keys: readonly string[],
  byKey: ReadonlyMap<string, C>,
  callbacks: RaceCallbacks<C>,
): Promise<RaceEntry[]> {
  const passed: RaceEntry[] = [];
  if (callbacks.look === undefined) return passed;
  for (const key of keys) {
    const due = dueLook(race, key);
    if (due === null) continue;
    const outcome = await callbacks.look(byKey.get(key)!, due);
    const entry = recordLook(race, key, { repeats: due.repeats, of: due.of, level: due.level, ...outcome });
    if (entry.early) passed.push(entry);
  }
  return passed;
}
