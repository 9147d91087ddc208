/**
 * A **simulated** audience for a cold-email sequence strategy, on a
 * simulated clock (times are milliseconds since the epoch, chosen by the
 * caller; nothing here reads the real time): the stand-in for the world in
 * the outreach example, the tests and `npm run bench:online`.
 *
 * Each recipient (unit) who receives a variant may reply and may
 * unsubscribe. The simulated truth:
 *
 * - base rates: replies 5%, unsubscribes 0.5% per recipient
 *   ({@link SIMULATED_AUDIENCE});
 * - day-of-week seasonality of both rates, by the exposure's UTC day,
 *   shared by both arms (weekends answer less), and of the traffic;
 * - delays after the exposure, log-logistic (a long right tail): replies
 *   with a median of 18 h (94% within 72 h), unsubscribes a median of 4 h
 *   (99% within 72 h); an outcome after the attribution window exists but
 *   does not count for the exposure;
 * - the effects of the hint lines the variant contains (./hint-lines.ts):
 *   relative lifts, multiplied; a novelty line's lift fades linearly to zero
 *   over the days since the variant's first exposure in this world.
 *
 * Deterministic: a unit's uniforms come from a seeded generator
 * (src/stats/seeded-random.ts) keyed by the world's seed and the unit id
 * (FNV-1a), so the same unit gets the same outcomes every time, and the two
 * arms share each unit's uniforms (common random numbers: the same
 * recipient under a better variant replies at least as readily).
 *
 * @module
 */
import { createSeededRandom } from '../../stats/seeded-random.ts';
import { type HintLine, effectMultipliers, hintLinesIn } from './hint-lines.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** A log-logistic delay: F(t) = 1 / (1 + (t / median)^−shape). */
export interface DelayDistribution {
  readonly medianHours: number;
  readonly shape: number;
}

/** The simulated audience's truth (every default of the world, once). */
export const SIMULATED_AUDIENCE = Object.freeze({
  /** Probability that a recipient ever replies, before seasonality and hint lines. */
  baseReplyRate: 0.05,
  /** Probability that a recipient ever unsubscribes, before seasonality and hint lines. */
  baseUnsubscribeRate: 0.005,
  replyDelay: Object.freeze({ medianHours: 18, shape: 2 }) as DelayDistribution,
  unsubscribeDelay: Object.freeze({ medianHours: 4, shape: 1.5 }) as DelayDistribution,
  /** Multiplier of both rates by the exposure's UTC weekday, Sunday first (mean 1). */
  weekdayRate: Object.freeze([0.8, 1.1, 1.15, 1.1, 1.05, 0.95, 0.85]),
  /** Multiplier of the daily traffic by UTC weekday, Sunday first (mean 1). */
  weekdayTraffic: Object.freeze([0.6, 1.2, 1.2, 1.2, 1.2, 1.0, 0.6]),
});

/** Settings of a simulated audience. */
export interface AudienceWorldOptions {
  /** Seed of every unit's draws (a safe integer). */
  readonly seed: number;
  /** Default {@link SIMULATED_AUDIENCE}.baseReplyRate. */
  readonly baseReplyRate?: number;
  /** Default {@link SIMULATED_AUDIENCE}.baseUnsubscribeRate. */
  readonly baseUnsubscribeRate?: number;
}

/** One outcome of a simulated unit, as an outcome line carries it. */
export interface SimulatedOutcome {
  readonly metric: 'reply_rate' | 'unsubscribe_rate';
  /** Always 1 (the unit replied / unsubscribed). */
  readonly value: 1;
  /** When it happened, simulated ms since the epoch (after the exposure). */
  readonly at: number;
}

/** The simulated audience (see the module comment). */
export interface AudienceWorld {
  /**
   * The outcomes of unit `unitId` who received `variantText` at
   * `exposedAt` (simulated ms), sorted by time: a reply and/or an
   * unsubscribe, or nothing. The variant's first exposure in this world is
   * remembered (novelty fades from it) unless `variantFirstExposedAt` is given.
   */
  outcomesFor(
    unitId: string,
    variantText: string,
    exposedAt: number,
    variantFirstExposedAt?: number,
  ): SimulatedOutcome[];
  /** The probabilities that a unit exposed at `exposedAt` ever replies / unsubscribes. */
  probabilities(
    variantText: string,
    exposedAt: number,
    variantFirstExposedAt: number,
  ): { reply: number; unsubscribe: number };
}

/** P(delay ≤ windowMs) for a log-logistic delay. */
export function delayWithin(delay: DelayDistribution, windowMs: number): number {
  if (windowMs <= 0) return 0;
  return 1 / (1 + (windowMs / HOUR_MS / delay.medianHours) ** -delay.shape);
}

/** The delay (ms) at quantile u ∈ (0, 1): median · (u / (1 − u))^(1/shape) hours. */
export function delayQuantile(delay: DelayDistribution, u: number): number {
  return delay.medianHours * (u / (1 - u)) ** (1 / delay.shape) * HOUR_MS;
}

/** The weekday multiplier of both rates for an exposure at `at` (simulated ms). */
export function weekdayRateFactor(at: number): number {
  return SIMULATED_AUDIENCE.weekdayRate[new Date(at).getUTCDay()]!;
}

/** The simulated number of recipients on the UTC day that contains `dayStart`, for a mean of `meanPerDay`. */
export function unitsOnDay(dayStart: number, meanPerDay: number): number {
  return Math.round(meanPerDay * SIMULATED_AUDIENCE.weekdayTraffic[new Date(dayStart).getUTCDay()]!);
}

/** FNV-1a, 32 bits, of a string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Creates a simulated audience (see the module comment).
 *
 * @throws RangeError on a seed that is not a safe integer or a rate outside [0, 1]
 *
 * @example
 * ```ts
 * const world = createAudienceWorld({ seed: 7 });
 * const monday = Date.UTC(2026, 0, 5, 9);
 * world.outcomesFor('recipient-1', 'Keep the first email under 80 words.', monday);
 * // [] or e.g. [{ metric: 'reply_rate', value: 1, at: monday + 17.2 h }]
 * ```
 */
export function createAudienceWorld(options: AudienceWorldOptions): AudienceWorld {
  if (!Number.isSafeInteger(options.seed)) throw new RangeError(`seed must be a safe integer; got ${options.seed}.`);
  const baseReply = options.baseReplyRate ?? SIMULATED_AUDIENCE.baseReplyRate;
  const baseUnsubscribe = options.baseUnsubscribeRate ?? SIMULATED_AUDIENCE.baseUnsubscribeRate;
  for (const [name, rate] of [
    ['baseReplyRate', baseReply],
    ['baseUnsubscribeRate', baseUnsubscribe],
  ] as const) {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`${name} must be in [0, 1]; got ${rate}.`);
  }
  const firstExposures = new Map<string, number>();
  // A variant's hint lines, read once per text (a study asks for every unit exposed to it).
  const hintsByText = new Map<string, readonly HintLine[]>();
  const hintsOf = (variantText: string): readonly HintLine[] => {
    let hints = hintsByText.get(variantText);
    if (hints === undefined) hintsByText.set(variantText, (hints = hintLinesIn(variantText)));
    return hints;
  };
  const probabilities = (variantText: string, exposedAt: number, variantFirstExposedAt: number) => {
    const multipliers = effectMultipliers(hintsOf(variantText), (exposedAt - variantFirstExposedAt) / DAY_MS);
    const season = weekdayRateFactor(exposedAt);
    return {
      reply: Math.min(1, baseReply * season * multipliers.reply),
      unsubscribe: Math.min(1, baseUnsubscribe * season * multipliers.unsubscribe),
    };
  };
  return {
    probabilities,
    outcomesFor(unitId, variantText, exposedAt, variantFirstExposedAt) {
      if (!Number.isFinite(exposedAt)) throw new RangeError(`exposedAt must be a finite time in ms; got ${exposedAt}.`);
      let first = variantFirstExposedAt ?? firstExposures.get(variantText);
      if (first === undefined) {
        first = exposedAt;
        firstExposures.set(variantText, exposedAt);
      }
      const chances = probabilities(variantText, exposedAt, first);
      const random = createSeededRandom((fnv1a(`${options.seed}\u0000${unitId}`) ^ options.seed) >>> 0);
      const [replyDraw, replyDelayDraw, unsubscribeDraw, unsubscribeDelayDraw] = [
        random(),
        random(),
        random(),
        random(),
      ];
      const outcomes: SimulatedOutcome[] = [];
      // A uniform of exactly 0 would give a zero delay: nudge it into (0, 1).
      const open = (u: number): number => Math.min(1 - 1e-12, Math.max(1e-12, u));
      if (replyDraw! < chances.reply)
        outcomes.push({
          metric: 'reply_rate',
          value: 1,
          at: exposedAt + Math.round(delayQuantile(SIMULATED_AUDIENCE.replyDelay, open(replyDelayDraw!))),
        });
      if (unsubscribeDraw! < chances.unsubscribe)
        outcomes.push({
          metric: 'unsubscribe_rate',
          value: 1,
          at: exposedAt + Math.round(delayQuantile(SIMULATED_AUDIENCE.unsubscribeDelay, open(unsubscribeDelayDraw!))),
        });
      return outcomes.sort((left, right) => left.at - right.at);
    },
  };
}
