/**
 * Reading a program's answer from its stdout: the whole stdout as one JSON
 * value, or else its last non-empty line (so a program may log lines before
 * its answer). Every problem is returned, never thrown.
 *
 * | stdout | result |
 * |---|---|
 * | blank | `empty` |
 * | JSON (whole, or the last non-empty line) | the value |
 * | anything else | `unparsable` |
 *
 * @module
 */
import { capRaw } from '../cap-raw.ts';

export type ProgramOutput =
  | { ok: true; output: unknown; raw: string }
  | { ok: false; reason: 'empty' | 'unparsable'; message: string; raw: string };

/**
 * Reads the JSON value a program printed.
 *
 * @param stdout the program's stdout, decoded as UTF-8
 * @example
 * ```ts
 * readProgramOutput('loading rules\n{"label":"billing"}\n'); // { ok: true, output: { label: 'billing' }, raw: … }
 * readProgramOutput('billing\n'); // { ok: false, reason: 'unparsable', … }
 * ```
 */
export function readProgramOutput(stdout: string): ProgramOutput {
  const raw = capRaw(stdout);
  const whole = stdout.trim();
  if (whole === '') return { ok: false, reason: 'empty', message: 'the program printed nothing on stdout', raw };
  try {
    return { ok: true, output: JSON.parse(whole) as unknown, raw };
  } catch (error) {
    const lines = whole.split(/\r?\n/).filter((line) => line.trim() !== '');
    const last = lines[lines.length - 1]!.trim();
    if (lines.length > 1) {
      try {
        return { ok: true, output: JSON.parse(last) as unknown, raw };
      } catch {
        // fall through: report the whole stdout's error
      }
    }
    return {
      ok: false,
      reason: 'unparsable',
      message: `the program's stdout is not JSON, neither as a whole nor its last line (${(error as Error).message})`,
      raw,
    };
  }
}
