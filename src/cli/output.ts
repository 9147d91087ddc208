/**
 * Output helpers of the CLI: numbers, tables and the JSON channel.
 * Human text goes to stdout, progress to stderr, `--json` prints exactly one
 * JSON object on stdout.
 */
import { createRequire } from 'node:module';

/** Formats a score in [0, 1] with 4 decimals; "—" for null (nothing valid). */
export function formatScore(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toFixed(4);
}

/** Formats a signed difference with 4 decimals. */
export function formatDelta(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
}

type CliTable = new (options: object) => { push(...rows: string[][]): number; toString(): string };
let CliTable3: CliTable | undefined;

/** cli-table3's characters for a borderless table: columns two spaces apart, nothing else. */
const BORDERLESS = Object.fromEntries(
  [
    'top',
    'top-mid',
    'top-left',
    'top-right',
    'bottom',
    'bottom-mid',
    'bottom-left',
    'bottom-right',
    'left',
    'left-mid',
    'mid',
    'mid-mid',
    'right',
    'right-mid',
  ].map((name) => [name, '']),
);

/**
 * Left-aligned text table, the first row as its header, columns two spaces
 * apart (cli-table3, which measures cells by their width on a terminal: wide
 * and combining characters line up). Loaded on the first table.
 */
export function table(rows: string[][]): string {
  CliTable3 ??= createRequire(import.meta.url)('cli-table3') as CliTable;
  const rendered = new CliTable3({
    chars: { ...BORDERLESS, middle: '  ' },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
  });
  rendered.push(...rows);
  return rendered
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
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

/** A camelCase name in words, lower case: `entityPrecision` → `entity precision`. */
export function nameInWords(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

/**
 * The line of diagnostic metrics printed under a score table, by the task's
 * metric names: `diagnostics: entity precision 0.401, relation recall 0.269`;
 * empty when the task reports no metric.
 */
export function metricsLine(metrics: Readonly<Record<string, number | null>>): string {
  const entries = Object.entries(metrics);
  return entries.length === 0
    ? ''
    : `diagnostics: ${entries.map(([name, value]) => `${nameInWords(name)} ${formatScore(value)}`).join(', ')}`;
}

/**
 * The component columns of a score table: the task's component names (in its
 * order) that at least one of the scores holds, then any other the scores
 * hold, in the order first seen.
 */
export function componentColumns(
  order: readonly string[],
  scores: ReadonlyArray<{ components: Readonly<Record<string, number>> }>,
): string[] {
  const present = new Set(scores.flatMap((score) => Object.keys(score.components)));
  const columns = order.filter((name) => present.has(name));
  for (const name of present) if (!columns.includes(name)) columns.push(name);
  return columns;
}
