/**
 * Durations as kloop.yaml writes them: a positive number and a unit, `ms`,
 * `s`, `m` (minutes), `h` or `d` (24 h), e.g. `90m`, `72h`, `3d`, `1.5h`.
 */
import { z } from 'zod';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration to milliseconds.
 *
 * @returns the duration in ms, or undefined when `text` is not a duration
 *   (no unit, an unknown unit, zero or a negative number)
 */
export function parseDurationMs(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  const milliseconds = Number(match[1]) * UNIT_MS[match[2]!]!;
  return milliseconds > 0 ? Math.round(milliseconds) : undefined;
}

/** A duration in kloop.yaml (`72h`), parsed to milliseconds. */
export const durationSchema = z.string().transform((text, context) => {
  const milliseconds = parseDurationMs(text);
  if (milliseconds === undefined) {
    context.addIssue({
      code: 'custom',
      message: 'a duration: a positive number and a unit, ms, s, m, h or d (e.g. 72h, 3d, 90m)',
    });
    return z.NEVER;
  }
  return milliseconds;
});
