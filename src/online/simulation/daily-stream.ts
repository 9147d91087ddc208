/**
 * A **simulated** online experiment at the level of per-day counts: for
 * each simulated day, the units assigned to each arm and, of those, the
 * units whose reply / unsubscribe falls within the attribution window. The
 * counts are exact binomial draws from the same per-unit probabilities as
 * {@link AudienceWorld.outcomesFor} (a unit exposed at noon of the day; the
 * window's share of each delay distribution), so an online gate fed from
 * them sees what it would see from unit-level outcomes, a hundred times
 * faster (`npm run bench:online`).
 *
 * @module
 */
import type { RandomSource } from '../../stats/seeded-random.ts';
import { type AudienceWorld, DAY_MS, delayWithin, SIMULATED_AUDIENCE, unitsOnDay } from './audience-world.ts';

/**
 * One exact draw of Binomial(trials, probability): successes counted by
 * geometric skips between them, O(trials · min(p, 1 − p)) uniforms (the
 * first waiting time method of Devroye, "Non-Uniform Random Variate
 * Generation", 1986, chapter X).
 */
export function binomialDraw(random: RandomSource, trials: number, probability: number): number {
  if (trials <= 0 || probability <= 0) return 0;
  if (probability >= 1) return trials;
  if (probability > 0.5) return trials - binomialDraw(random, trials, 1 - probability);
  const logFailure = Math.log1p(-probability);
  let successes = 0;
  let position = 0;
  for (;;) {
    position += Math.floor(Math.log(1 - random()) / logFailure) + 1;
    if (position > trials) return successes;
    successes += 1;
  }
}

/** Per-day counts of one arm (index = day of the experiment). */
export interface ArmDays {
  /** Units assigned and logged (exposures). */
  readonly units: number[];
  /** Of those, units with a reply within the attribution window. */
  readonly replies: number[];
  /** Of those, units with an unsubscribe within the attribution window. */
  readonly unsubscribes: number[];
}

/** A simulated experiment's days. */
export interface DailyStream {
  readonly incumbent: ArmDays;
  readonly candidate: ArmDays;
  /** Simulated start of day 0 (ms, UTC midnight). */
  readonly start: number;
}

/** What to simulate. */
export interface DailyStreamOptions {
  readonly world: AudienceWorld;
  readonly incumbentText: string;
  readonly candidateText: string;
  /** Simulated UTC midnight of day 0; both variants are first exposed then. */
  readonly start: number;
  readonly days: number;
  /** Mean recipients per day (weekday traffic applies). */
  readonly meanDailyUnits: number;
  /** The candidate's share of assignments, in (0, 1). */
  readonly split: number;
  readonly attributionWindowMs: number;
  /** Share of the candidate's exposures lost before logging (a broken pipeline): neither counted nor analysed. Default 0. */
  readonly droppedCandidateShare?: number;
  readonly random: RandomSource;
}

/** Draws a simulated experiment's per-day counts (see the module comment). */
export function simulateDailyStream(options: DailyStreamOptions): DailyStream {
  const replyWithin = delayWithin(SIMULATED_AUDIENCE.replyDelay, options.attributionWindowMs);
  const unsubscribeWithin = delayWithin(SIMULATED_AUDIENCE.unsubscribeDelay, options.attributionWindowMs);
  const empty = (): ArmDays => ({ units: [], replies: [], unsubscribes: [] });
  const stream: DailyStream = { incumbent: empty(), candidate: empty(), start: options.start };
  for (let day = 0; day < options.days; day += 1) {
    const dayStart = options.start + day * DAY_MS;
    const total = unitsOnDay(dayStart, options.meanDailyUnits);
    let candidates = binomialDraw(options.random, total, options.split);
    const incumbents = total - candidates;
    if ((options.droppedCandidateShare ?? 0) > 0)
      candidates -= binomialDraw(options.random, candidates, options.droppedCandidateShare!);
    const noon = dayStart + DAY_MS / 2;
    for (const [arm, units, text] of [
      [stream.incumbent, incumbents, options.incumbentText],
      [stream.candidate, candidates, options.candidateText],
    ] as const) {
      const chances = options.world.probabilities(text, noon, options.start);
      arm.units.push(units);
      arm.replies.push(binomialDraw(options.random, units, chances.reply * replyWithin));
      arm.unsubscribes.push(binomialDraw(options.random, units, chances.unsubscribe * unsubscribeWithin));
    }
  }
  return stream;
}
