/**
 * A capped, plain-text summary of the optimization partition's diagnostics,
 * for the reflective proposer to read: which entities go missing, which roles
 * are confused, which app types and behaviours are missed, what the invalid
 * outputs were, and a few short examples.
 *
 * Built from a PartitionScore of the optimization partition and its examples
 * only (a ProposalContext never holds anything else).
 */
import type { Example } from '../../../corpus/example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../../../evaluator/partition-score.ts';
import type { ExampleDiagnostics } from '../scorer.ts';

export interface DiagnosticsSummaryOptions {
  /** Most characters of the whole summary. Default 6000. */
  maxCharacters?: number;
  /** Most items per frequency list. Default 10. */
  maxListItems?: number;
  /** Most worked examples. Default 4. */
  maxExamples?: number;
  /** Most characters of each example's goal. Default 240. */
  maxGoalCharacters?: number;
}

function countInto(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function topList(counts: Map<string, number>, limit: number): string {
  return [...counts]
    .sort((left, right) => right[1] - left[1] || left[0].localeCompare(right[0]))
    .slice(0, limit)
    .map(([key, count]) => `${key} (×${count})`)
    .join(', ');
}

function shorten(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

function describeRecord(record: ExampleScoreRecord): string {
  if (!record.valid) return `invalid output (${record.invalidReason}): ${shorten(record.message, 120)}`;
  const parts: string[] = [];
  const diagnostics = record.diagnostics as ExampleDiagnostics;
  if (diagnostics.appTypeMismatch !== undefined) parts.push(`app type ${diagnostics.appTypeMismatch.predicted} instead of ${diagnostics.appTypeMismatch.expected.join('/')}`);
  if (diagnostics.missedEntities.length > 0) parts.push(`missed ${diagnostics.missedEntities.join(', ')}`);
  if (diagnostics.wrongRoles.length > 0) parts.push(`roles ${diagnostics.wrongRoles.map((wrong) => `${wrong.entity} ${wrong.predicted}→${wrong.expected}`).join(', ')}`);
  if (diagnostics.missingBehaviors.length > 0) parts.push(`no ${diagnostics.missingBehaviors.join(', ')}`);
  if (diagnostics.spuriousEntities.length > 0) parts.push(`extra ${diagnostics.spuriousEntities.join(', ')}`);
  return parts.length === 0 ? 'no error' : parts.join('; ');
}

/**
 * Summarises the diagnostics of an optimization-partition score.
 *
 * @param score the incumbent's score on the optimization partition
 * @param examples the optimization examples (for goal texts)
 * @returns plain text of at most `maxCharacters` characters
 */
export function summarizeDiagnostics(score: PartitionScore, examples: readonly Example[], options: DiagnosticsSummaryOptions = {}): string {
  const maxCharacters = options.maxCharacters ?? 6000;
  const limit = options.maxListItems ?? 10;
  const missed = new Map<string, number>();
  const roles = new Map<string, number>();
  const appTypes = new Map<string, number>();
  const behaviors = new Map<string, number>();
  const spurious = new Map<string, number>();
  const invalid = new Map<string, number>();
  for (const record of score.examples) {
    if (!record.valid) {
      countInto(invalid, record.invalidReason);
      continue;
    }
    const diagnostics = record.diagnostics as ExampleDiagnostics;
    for (const name of diagnostics.missedEntities) countInto(missed, name);
    for (const wrong of diagnostics.wrongRoles) countInto(roles, `${wrong.entity} given ${wrong.predicted}, should be ${wrong.expected}`);
    if (diagnostics.appTypeMismatch !== undefined) {
      countInto(appTypes, `${diagnostics.appTypeMismatch.expected[0] ?? '?'} read as ${diagnostics.appTypeMismatch.predicted}`);
    }
    for (const behavior of diagnostics.missingBehaviors) countInto(behaviors, behavior);
    for (const name of diagnostics.spuriousEntities) countInto(spurious, name);
  }

  const lines: string[] = [];
  const composite = score.composite === null ? 'none (no valid output)' : score.composite.toFixed(3);
  lines.push(`Composite ${composite} over ${score.total} example-repeats; ${score.invalid} invalid.`);
  const components = Object.entries(score.components).map(([name, value]) => `${name} ${value.toFixed(2)}`);
  if (components.length > 0) lines.push(`Components: ${components.join(', ')}.`);
  if (invalid.size > 0) lines.push(`Invalid outputs by reason: ${topList(invalid, limit)}.`);
  if (missed.size > 0) lines.push(`Entities most often missed: ${topList(missed, limit)}.`);
  if (roles.size > 0) lines.push(`Roles most often confused: ${topList(roles, limit)}.`);
  if (appTypes.size > 0) lines.push(`App types confused: ${topList(appTypes, limit)}.`);
  if (behaviors.size > 0) lines.push(`Behaviours most often absent: ${topList(behaviors, limit)}.`);
  if (spurious.size > 0) lines.push(`Entities predicted but not in the gold: ${topList(spurious, limit)}.`);

  const goals = new Map(examples.map((example) => [example.id, example.text]));
  const worst = [...score.examples]
    .filter((record) => !record.valid || record.composite < 1)
    .sort((left, right) => (left.valid ? left.composite : -1) - (right.valid ? right.composite : -1) || left.exampleId.localeCompare(right.exampleId));
  const shown = new Set<string>();
  const exampleLines: string[] = [];
  for (const record of worst) {
    if (exampleLines.length >= (options.maxExamples ?? 4)) break;
    if (shown.has(record.exampleId)) continue;
    shown.add(record.exampleId);
    const goal = goals.get(record.exampleId);
    exampleLines.push(`- "${shorten(goal ?? '', options.maxGoalCharacters ?? 240)}" → ${describeRecord(record)}`);
  }
  if (exampleLines.length > 0) lines.push('Examples (goal shortened → what went wrong):', ...exampleLines);

  let text = '';
  for (const line of lines) {
    const next = text === '' ? line : `${text}\n${line}`;
    if (next.length > maxCharacters - 12) {
      text = `${text}\n[… cut]`;
      break;
    }
    text = next;
  }
  return text.slice(0, maxCharacters);
}
