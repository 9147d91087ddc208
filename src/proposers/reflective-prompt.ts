/**
 * The prompt of the reflective proposer (./reflective-proposer.ts): its
 * system prompts (Markdown sections, or a JSON/YAML file's top-level keys),
 * the history of earlier attempts within a character budget, the user prompt
 * with the failing examples, and the detection of example text copied into a
 * candidate.
 */
import type { Example } from '../corpus/example.ts';
import { characterCount, truncateText } from '../text/characters.ts';
import { summarizeFeedback } from './feedback-summary.ts';
import type { HistoryEntry, ProposalContext } from './proposer.ts';
import { artifactFormatOf, artifactSectionNames } from './data-edits.ts';
import type { ReflectiveProposerOptions } from './reflective-proposer.ts';

/** Default of `maxHistoryCharacters`. */
export const DEFAULT_HISTORY_CHARACTERS = 6000;

export const MARKDOWN_SYSTEM_PROMPT = [
  'You improve a text artifact (a prompt, rules, a configuration) that a program or a model follows on every example, one careful experiment at a time.',
  'The artifact is a document divided into sections by "## " headings. You change it by replacing the whole text of one or more sections.',
  'Every candidate is measured on labelled examples and kept only if it also improves held-out examples you never see, so propose general improvements, not fixes for particular examples.',
  'Reply with exactly one JSON object and nothing else:',
  '{"candidates": [{"rationale": "one or two sentences: what the change fixes and why it generalizes", "edits": [{"section": "<exact heading text, without ##>", "text": "<the complete new text of that section, without its heading line>"}]}]}',
].join('\n');

/** The system prompt for a JSON or YAML artifact: edits replace top-level keys' values, written as JSON. */
export function dataSystemPrompt(format: 'json' | 'yaml'): string {
  return [
    MARKDOWN_SYSTEM_PROMPT.split('\n')[0]!,
    `The artifact is a ${format === 'json' ? 'JSON' : 'YAML'} file holding one object. You change it by replacing the whole value of one or more of its top-level keys.`,
    MARKDOWN_SYSTEM_PROMPT.split('\n')[2]!,
    'Reply with exactly one JSON object and nothing else:',
    '{"candidates": [{"rationale": "one or two sentences: what the change fixes and why it generalizes", "edits": [{"section": "<top-level key>", "text": "<the complete new value of that key, as JSON text>"}]}]}',
    'Each "text" must parse as JSON by itself (a regular expression inside a JSON string doubles its backslashes).',
  ].join('\n');
}

/** Words of a text for copy detection: lower case, letters and digits only. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

export function windows(tokens: readonly string[], size: number): Set<string> {
  const result = new Set<string>();
  for (let index = 0; index + size <= tokens.length; index += 1)
    result.add(tokens.slice(index, index + size).join(' '));
  return result;
}

/**
 * Ids of the examples whose text (the task's text of the input) shares a
 * `windowWords`-word window with `changedText` that `previousText` did not
 * already contain.
 *
 * @example
 * ```ts
 * findCopiedExamples('Sellers open a shop and create listings with photos and prices', '', examples); // ['marketplace-handmade-01']
 * ```
 */
export function findCopiedExamples(
  changedText: string,
  previousText: string,
  examples: readonly Example[],
  windowWords = 8,
): string[] {
  const fresh = windows(words(changedText), windowWords);
  for (const old of windows(words(previousText), windowWords)) fresh.delete(old);
  if (fresh.size === 0) return [];
  const copied: string[] = [];
  for (const example of examples) {
    for (const window of windows(words(example.text), windowWords)) {
      if (fresh.has(window)) {
        copied.push(example.id);
        break;
      }
    }
  }
  return copied;
}

/** The text on one line, cut to at most `limit` characters on a whole character (src/text/characters.ts). */
export function shorten(text: string, limit: number): string {
  return truncateText(text.replace(/\s+/g, ' ').trim(), limit);
}

/** Shortest a delta is cut to in the history before it is kept whole-line anyway. */
const HISTORY_FLOOR_CHARACTERS = 60;

/**
 * The history as the proposer reads it: EVERY tried delta, oldest first, in a
 * compact form — identical deltas on one line with each outcome
 * (`×3: refused not_significant, refused not_confirmed, ACCEPTED`), each
 * delta cut to the longest length (from 300 characters down to
 * {@link HISTORY_FLOOR_CHARACTERS}) at which the whole history fits in
 * `maxCharacters`. Nothing scrolls out of view: past the floor the history is
 * longer than `maxCharacters` rather than shorter by an entry.
 */
export function historyText(history: readonly HistoryEntry[], maxCharacters: number): string {
  if (history.length === 0) return 'None yet.';
  const groups = new Map<string, string[]>();
  for (const entry of history) {
    const key = entry.delta.replace(/\s+/g, ' ').trim();
    const outcome = entry.decision === 'accepted' ? 'ACCEPTED' : `${entry.decision.toUpperCase()} (${entry.reason})`;
    groups.set(key, [...(groups.get(key) ?? []), outcome]);
  }
  const render = (limit: number): string[] =>
    [...groups].map(
      ([delta, outcomes]) =>
        `- ${outcomes.length === 1 ? outcomes[0] : `×${outcomes.length}: ${outcomes.join(', ')}`}: ${shorten(delta, limit)}`,
    );
  let limit = 300;
  let lines = render(limit);
  const length = (candidate: readonly string[]): number =>
    candidate.reduce((sum, line) => sum + characterCount(line) + 1, 0);
  while (length(lines) > maxCharacters && limit > HISTORY_FLOOR_CHARACTERS) {
    limit = Math.max(HISTORY_FLOOR_CHARACTERS, Math.floor(limit * 0.8));
    lines = render(limit);
  }
  return lines.join('\n');
}

/** Builds the user message of a proposal call (exported for tests and inspection). */
export function buildProposalPrompt(
  context: ProposalContext,
  options: ReflectiveProposerOptions,
  count: number,
): string {
  const format = artifactFormatOf(options.artifactFile);
  const file = options.artifactFile ?? 'the artifact';
  const sections = artifactSectionNames(context.incumbentText, format, file);
  const editable = context.limits.editableSections.length > 0 ? context.limits.editableSections : sections;
  const fixed = sections.filter((name) => !editable.includes(name));
  const unit = format === 'markdown' ? 'Sections' : 'Top-level keys';
  return [
    '# Program instructions',
    context.instructions.trim() || '(none)',
    '',
    '# Constraints',
    context.constraints.trim() || '(none)',
    '',
    'Checked by code:',
    `- ${unit} you may replace: ${editable.map((name) => `"${name}"`).join(', ') || '(none)'}.`,
    ...(fixed.length > 0
      ? [`- ${unit} that must stay exactly as they are: ${fixed.map((name) => `"${name}"`).join(', ')}.`]
      : []),
    `- The whole ${format === 'markdown' ? 'prompt' : 'file'} must stay at most ${context.limits.maxArtifactCharacters} characters (now ${characterCount(context.incumbentText)}).`,
    ...(format === 'markdown'
      ? []
      : [
          `- Each edit's "text" is the key's complete new value as JSON; the result must be a valid ${format === 'json' ? 'JSON' : 'YAML'} file (${file}), or the candidate is dropped.`,
        ]),
    '',
    '# How the artifact is used',
    "It is applied to each example's input (for a model: the artifact is the system message and the input the user message) and must produce the answer the task scores.",
    ...(context.outputContract !== undefined && context.outputContract.trim() !== ''
      ? [
          'kloop appends this fixed output contract after the artifact; you cannot change it:',
          shorten(context.outputContract, 1500),
        ]
      : []),
    '',
    format === 'markdown' ? '# Current prompt' : `# Current artifact (${file})`,
    '<<<PROMPT',
    context.incumbentText,
    'PROMPT>>>',
    '',
    '# What goes wrong on the labelled examples',
    "Scores are in [0, 1] (1 is right); each problem is the scorer's own words.",
    summarizeFeedback(context.incumbentScores, context.examples, {
      maxCharacters: options.maxDiagnosticsCharacters ?? 6000,
    }),
    '',
    '# Earlier attempts (oldest first, every one) and what happened to them',
    historyText(context.history, options.maxHistoryCharacters ?? DEFAULT_HISTORY_CHARACTERS),
    '',
    ...(context.repeatedDeltas !== undefined && context.repeatedDeltas.length > 0
      ? [
          '# Your last answer repeated earlier attempts',
          'These were tried before on this prompt; they were not evaluated again. Propose something different from every earlier attempt:',
          ...context.repeatedDeltas.map((delta) => `- ${shorten(delta, 300)}`),
          '',
        ]
      : []),
    '# Your task',
    `Propose ${count} different candidate${count === 1 ? '' : 's'}. Each is one coherent change that should help on inputs like these in general.`,
    'Do not copy sentences, names or phrases from the example inputs into the artifact; do not repeat an earlier attempt.',
    'Keep every section you do not replace unchanged by leaving it out of "edits".',
  ].join('\n');
}
