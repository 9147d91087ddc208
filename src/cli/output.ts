/**
 * Output helpers of the CLI: numbers, tables and the JSON channel.
 * Human text goes to stdout, progress to stderr, `--json` prints exactly one
 * JSON object on stdout.
 */

/** Formats a score in [0, 1] with 4 decimals; "—" for null (nothing valid). */
export function formatScore(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toFixed(4);
}

/** Formats a signed difference with 4 decimals. */
export function formatDelta(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
}

/** Left-aligned text table. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => cell.padEnd(widths[index]!)).join('  ').trimEnd()).join('\n');
}

/** Writes one JSON object to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes a line to stdout. */
export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Writes a progress line to stderr (silent when `quiet`). */
export function progress(line: string, quiet = false): void {
  if (!quiet) process.stderr.write(`${line}\n`);
}
