/**
 * A capped, plain-text summary of the optimization partition's scores, for
 * the reflective proposer to read, task-agnostic: the composite and the
 * component means (by the task's names), the diagnostic metrics, the invalid
 * outputs by reason, the problems the task's feedback names most often, and a
 * few worked examples (the input's text, shortened → the feedback).
 *
 * The task's feedback text (`TaskScore.feedback`) is read as problems
 * separated by `; ` and ended by a full stop, as every built-in task writes
 * it (intent: `missed entities Invoice; wrong roles: Session is commitment,
 * not transaction.`; classification: `expected billing, routed to
 * technical`); a feedback without `; ` is one problem.
 *
 * Built from a PartitionScore of the optimization partition and its examples
 * only (a ProposalContext never holds anything else).
 *
 * @example
 * ```ts
 * summarizeFeedback(context.incumbentScores, context.examples, { maxCharacters: 6000 });
 * // 'Composite 0.600 over 40 example-repeats; 0 invalid.\nComponents: accuracy 0.60.\nProblems most often named: expected billing, routed to technical (×5), …'
 * ```
 *
 * @module
 */
import type { Example } from '../corpus/example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import { characterCount, truncateText } from '../text/characters.ts';

/** Options of {@link summarizeFeedback}. */
export interface FeedbackSummaryOptions {
  /** Most characters of the whole summary. Default 6000. */
  maxCharacters?: number;
  /** Most problems in the frequency list. Default 12. */
  maxListItems?: number;
  /** Most worked examples. Default 4. */
  maxExamples?: number;
  /** Most characters of each example's text. Default 240. */
  maxTextCharacters?: number;
}

/** The text on one line, cut to at most `limit` characters on a whole character (src/text/characters.ts). */
function shorten(text: string, limit: number): string {
  return truncateText(text.replace(/\s+/g, ' ').trim(), limit);
}

/** The problems a feedback text names: its `; `-separated parts, without the final full stop. */
export function feedbackProblems(feedback: string): string[] {
  const text = feedback.trim().replace(/\.$/, '');
  return text === ''
    ? []
    : text
        .split('; ')
        .map((part) => part.trim())
        .filter((part) => part !== '');
}

function topList(counts: Map<string, number>, limit: number): string {
  return [...counts]
    .sort((left, right) => right[1] - left[1] || left[0].localeCompare(right[0]))
    .slice(0, limit)
    .map(([key, count]) => `${key} (×${count})`)
    .join(', ');
}

function describeRecord(record: ExampleScoreRecord): string {
  if (!record.valid) return `invalid output (${record.invalidReason}): ${shorten(record.message, 160)}`;
  return record.feedback.trim() === ''
    ? `scored ${record.composite.toFixed(2)}, no problem named`
    : shorten(record.feedback, 400);
}

/**
 * Summarises an optimization-partition score for a proposer.
 *
 * @param score the incumbent's score on the optimization partition
 * @param examples the optimization examples (for their texts)
 * @returns plain text of at most `maxCharacters` characters
 */
export function summarizeFeedback(
  score: PartitionScore,
  examples: readonly Example[],
  options: FeedbackSummaryOptions = {},
): string {
  const maxCharacters = options.maxCharacters ?? 6000;
  const limit = options.maxListItems ?? 12;
  const problems = new Map<string, number>();
  const invalid = new Map<string, number>();
  for (const record of score.examples) {
    if (!record.valid) {
      invalid.set(record.invalidReason, (invalid.get(record.invalidReason) ?? 0) + 1);
      continue;
    }
    for (const problem of new Set(feedbackProblems(record.feedback)))
      problems.set(problem, (problems.get(problem) ?? 0) + 1);
  }

  const lines: string[] = [];
  const composite = score.composite === null ? 'none (no valid output)' : score.composite.toFixed(3);
  lines.push(`Composite ${composite} over ${score.total} example-repeats; ${score.invalid} invalid.`);
  const components = Object.entries(score.components).map(([name, value]) => `${name} ${value.toFixed(2)}`);
  if (components.length > 0) lines.push(`Components (mean where scored, each in [0, 1]): ${components.join(', ')}.`);
  const metrics = Object.entries(score.metrics).flatMap(([name, value]) =>
    value === null ? [] : [`${name} ${value.toFixed(2)}`],
  );
  if (metrics.length > 0) lines.push(`Metrics (not in the composite): ${metrics.join(', ')}.`);
  if (invalid.size > 0) lines.push(`Invalid outputs by reason: ${topList(invalid, limit)}.`);
  if (problems.size > 0) lines.push(`Problems most often named: ${topList(problems, limit)}.`);

  const texts = new Map(examples.map((example) => [example.id, example.text]));
  const worst = [...score.examples]
    .filter((record) => !record.valid || record.composite < 1)
    .sort(
      (left, right) =>
        (left.valid ? left.composite : -1) - (right.valid ? right.composite : -1) ||
        left.exampleId.localeCompare(right.exampleId),
    );
  const shown = new Set<string>();
  const exampleLines: string[] = [];
  for (const record of worst) {
    if (exampleLines.length >= (options.maxExamples ?? 4)) break;
    if (shown.has(record.exampleId)) continue;
    shown.add(record.exampleId);
    exampleLines.push(
      `- "${shorten(texts.get(record.exampleId) ?? '', options.maxTextCharacters ?? 240)}" → ${describeRecord(record)}`,
    );
  }
  if (exampleLines.length > 0) lines.push('Examples (input shortened → what went wrong):', ...exampleLines);

  let text = '';
  for (const line of lines) {
    const next = text === '' ? line : `${text}\n${line}`;
    if (characterCount(next) > maxCharacters - 12) {
      text = `${text}\n[… cut]`;
      break;
    }
    text = next;
  }
  return truncateText(text, maxCharacters, '');
}
