/** `schedule:` of `kloop.yaml` (src/config/config.ts): the two-speed schedule's cadences, shared with online studies. */
import { Cron } from 'croner';
import { z } from 'zod';
import { count } from './schema-numbers.ts';

/** A cron expression (5 or 6 fields, croner syntax), checked by parsing it; shared with online studies' `schedule`. */
export const cronExpression = z
  .string()
  .trim()
  .min(1)
  .refine((pattern) => {
    try {
      new Cron(pattern, { paused: true }).stop();
      return true;
    } catch {
      return false;
    }
  }, 'not a valid cron expression (e.g. "0 * * * *" = every hour, "0 3 * * 1" = Mondays 03:00)');

/** Default cadence of the fast loop: every hour. */
export const DEFAULT_FAST_CADENCE = '0 * * * *';
/** Default cadence of the slow loops: Mondays at 03:00. */
export const DEFAULT_SLOW_CADENCE = '0 3 * * 1';

/** An IANA time zone, e.g. "UTC" or "Europe/Paris" (checked with Intl.DateTimeFormat): `schedule.timezone` of offline and online studies. */
export const timeZoneSchema = z
  .string()
  .trim()
  .min(1)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'not an IANA time zone (e.g. "UTC", "Europe/Paris")');

/** The two-speed schedule of `kloop schedule` (see docs/loops-c-d.md). */
export const scheduleSchema = z.strictObject({
  /** Cadence of the fast loop (B, the optimization loop). Default every hour, "0 * * * *". */
  fast: cronExpression.default(DEFAULT_FAST_CADENCE),
  /** Cadence of the slow analyses (A, C, D). Default Mondays 03:00, "0 3 * * 1". */
  slow: cronExpression.default(DEFAULT_SLOW_CADENCE),
  /** Per-loop cadences overriding fast/slow; "off" disables a loop. */
  loops: z
    .strictObject({
      A: z.union([z.literal('off'), cronExpression]).optional(),
      B: z.union([z.literal('off'), cronExpression]).optional(),
      C: z.union([z.literal('off'), cronExpression]).optional(),
      D: z.union([z.literal('off'), cronExpression]).optional(),
    })
    .prefault({}),
  /** IANA time zone of the cadences, e.g. "Europe/Paris". Default the system's. */
  timezone: timeZoneSchema.optional(),
  /** Experiments each fast cycle may add (raises stopping.maxExperiments per cycle); absent = stopping as configured. */
  experimentsPerCycle: count(1).optional(),
});
