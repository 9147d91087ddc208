/**
 * The reflective proposer: an LLM reads the program's instructions and
 * constraints, the incumbent artifact, a capped summary of the optimization
 * partition's scores — the task's component means and its feedback texts
 * (`feedback-summary.ts`), whatever the task — and the history of earlier
 * deltas with their outcomes, and proposes several candidates in one call.
 * It knows no task: what the artifact is for comes from the program's
 * instructions and the task's output contract (`ProposalContext.outputContract`).
 *
 * **Edit format: whole-section replacements.** The prompt artifact is
 * markdown divided into sections by `##` headings (see `prompt-sections.ts`).
 * The model answers one JSON object
 * `{ "candidates": [{ "rationale": "...", "edits": [{ "section": "<heading>", "text": "<new body>" }] }] }`;
 * each edit replaces one section's body (its heading line is kept). A
 * candidate's `delta` is what the replacement changes: per section, the lines
 * it adds (`+ `) and removes (`- `). The loop re-applies a candidate to a
 * newer incumbent by a line-based three-way merge, so two candidates that add
 * different lines to one section both still apply after either is merged. A
 * section that does not exist yet is appended, only when every section is
 * editable.
 *
 * **Defensive parsing.** An empty answer, a truncated one, an unclosed code
 * fence or `<think>` block, broken JSON or an off-schema object is a
 * {@link ProposalFailure} for the whole call (scope `answer`); a candidate
 * that edits a non-editable section, changes nothing, goes over
 * `limits.maxArtifactCharacters` or breaks the section structure is a failure
 * of its own (scope `candidate`). A candidate that was tried before is not a
 * failure: it is counted in `repeats` (the proposer running out of ideas).
 * Failures are returned with their raw answer and tokens (the loop stores
 * them), never adopted.
 *
 * **Copy flag.** A candidate whose changed text contains any 8-word window of
 * an optimization example's text (that the incumbent did not already
 * contain) is flagged: `flags: ['copies-example-text']` and a note in the
 * rationale. The gate's shadow check is what refuses specialization; the
 * flag makes it visible in the notebook.
 *
 * The proposer reads only its {@link ProposalContext}: optimization examples
 * and their scores, never anchor or shadow data.
 */
import { z } from 'zod';
import type { JSONSchema7 } from 'ai';
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import { characterCount, truncateText } from '../text/characters.ts';
import { capRaw, parseJsonAnswer } from '../providers/answer-text.ts';
import type { AnswerSchema, LlmClient } from '../providers/llm-client.ts';
import type { SectionReplacement } from '../artifact/markdown-sections.ts';
import { markdownSectionSpans, replaceSections } from '../artifact/markdown-sections.ts';
import { changeText, lineChanges } from '../artifact/three-way-merge.ts';
import { summarizeFeedback } from './feedback-summary.ts';
import { artifactFormatOf, artifactSectionNames, describeKeyChanges, replaceKeys } from './data-edits.ts';
import type {
  Candidate,
  HistoryEntry,
  ProposalContext,
  ProposalFailure,
  ProposalResult,
  Proposer,
} from './proposer.ts';

/** Implementation version, part of the proposer id. */
export const REFLECTIVE_PROPOSER_VERSION = 'reflective@1';

/** Default of `maxHistoryCharacters`. */
export const DEFAULT_HISTORY_CHARACTERS = 6000;

/** Flag set on a candidate that pastes optimization-example text into the artifact. */
export const COPIES_EXAMPLE_TEXT_FLAG = 'copies-example-text';

export interface ReflectiveProposerOptions {
  /** The proposer's model. */
  client: LlmClient;
  /** Most characters of the score summary (component means, feedback, worked examples). Default 6000. */
  maxDiagnosticsCharacters?: number;
  /**
   * Characters the history of earlier deltas should fit in: every delta is
   * kept, each cut shorter until the whole fits (see {@link historyText}).
   * Default {@link DEFAULT_HISTORY_CHARACTERS}.
   */
  maxHistoryCharacters?: number;
  /** Most candidates asked for in one call (also capped by `maxCandidates`). Default 4. */
  maxCandidatesPerCall?: number;
  /** Words in the copy-detection window. Default 8. */
  copyWindowWords?: number;
  /**
   * The artifact's file name (e.g. `rules.json`): its extension says how it is
   * edited (`.json`, `.yaml`, `.yml`: the values of its top-level keys,
   * `data-edits.ts`; anything else: markdown `##` sections), and messages name
   * it. Default: a markdown prompt, named `the artifact`.
   */
  artifactFile?: string;
}

const proposalAnswerSchema = z.object({
  candidates: z
    .array(
      z.object({
        rationale: z.string().trim().min(1).max(2000),
        edits: z
          .array(z.object({ section: z.string().trim().min(1).max(200), text: z.string().max(200_000) }))
          .min(1)
          .max(30),
      }),
    )
    .min(1)
    .max(16),
});
type ProposalAnswer = z.infer<typeof proposalAnswerSchema>;

/** The structured-output schema of the proposer's answer. */
export const PROPOSAL_ANSWER_SCHEMA: AnswerSchema = (() => {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(proposalAnswerSchema) as Record<string, unknown>;
  return { name: 'proposal', jsonSchema: schema as JSONSchema7 };
})();

const MARKDOWN_SYSTEM_PROMPT = [
  'You improve a text artifact (a prompt, rules, a configuration) that a program or a model follows on every example, one careful experiment at a time.',
  'The artifact is a document divided into sections by "## " headings. You change it by replacing the whole text of one or more sections.',
  'Every candidate is measured on labelled examples and kept only if it also improves held-out examples you never see, so propose general improvements, not fixes for particular examples.',
  'Reply with exactly one JSON object and nothing else:',
  '{"candidates": [{"rationale": "one or two sentences: what the change fixes and why it generalizes", "edits": [{"section": "<exact heading text, without ##>", "text": "<the complete new text of that section, without its heading line>"}]}]}',
].join('\n');

/** The system prompt for a JSON or YAML artifact: edits replace top-level keys' values, written as JSON. */
function dataSystemPrompt(format: 'json' | 'yaml'): string {
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
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

function windows(tokens: readonly string[], size: number): Set<string> {
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
function shorten(text: string, limit: number): string {
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

const NO_CHANGE = 'it changes nothing';

interface BuiltCandidate {
  candidate?: Candidate;
  failure?: ProposalFailure;
  /** Tried before (same content): not a failure. */
  repeat?: boolean;
  /** The repeated candidate, when it is one (same content as a tried artifact). */
  repeated?: Candidate;
}

function buildCandidate(
  proposal: ProposalAnswer['candidates'][number],
  index: number,
  context: ProposalContext,
  windowWords: number,
  file: string | undefined,
): BuiltCandidate {
  const label = `candidate ${index + 1}`;
  const format = artifactFormatOf(file);
  const editable = context.limits.editableSections;
  const replacements: SectionReplacement[] = proposal.edits.map((edit) => ({
    section: edit.section.replace(/^#+\s*/, '').trim(),
    body: edit.text,
  }));
  const blocked = replacements.filter((replacement) => editable.length > 0 && !editable.includes(replacement.section));
  if (blocked.length > 0) {
    return {
      failure: {
        code: 'frozen_section',
        scope: 'candidate',
        reason: `${label} edits a section that may not change: ${blocked.map((item) => `"${item.section}"`).join(', ')}`,
      },
    };
  }
  const allowNew = editable.length === 0;
  const apply = (incumbentText: string): { ok: true; text: string } | { ok: false; message: string } => {
    const replaced =
      format === 'markdown'
        ? replaceSections(incumbentText, replacements, allowNew)
        : replaceKeys(
            incumbentText,
            replacements.map((replacement) => ({ key: replacement.section, value: replacement.body })),
            format,
            file ?? 'the artifact',
            allowNew,
          );
    if (!replaced.ok) return replaced;
    if (replaced.text === incumbentText) return { ok: false, message: NO_CHANGE };
    const length = characterCount(replaced.text);
    if (length > context.limits.maxArtifactCharacters) {
      return {
        ok: false,
        message: `it has ${length} characters, over the ceiling of ${context.limits.maxArtifactCharacters}`,
      };
    }
    return replaced;
  };
  const applied = apply(context.incumbentText);
  // Proposing the incumbent as it is, is proposing nothing new: the proposer running out of ideas, not a failure.
  if (!applied.ok && applied.message === NO_CHANGE) return { repeat: true };
  if (!applied.ok)
    return {
      failure: { code: 'unusable_candidate', scope: 'candidate', reason: `${label} is not usable: ${applied.message}` },
    };
  const sections = replacements.map((replacement) => replacement.section);
  const delta =
    format === 'markdown'
      ? describeChange(context.incumbentText, applied.text, sections)
      : describeKeyChanges(context.incumbentText, applied.text, sections, format);
  if (context.triedHashes.has(contentHash(applied.text)))
    return { repeat: true, repeated: { text: applied.text, delta, rationale: proposal.rationale.trim() } };
  const copied = findCopiedExamples(delta, context.incumbentText, context.examples, windowWords);
  const flags = copied.length > 0 ? [COPIES_EXAMPLE_TEXT_FLAG] : [];
  const note =
    copied.length > 0
      ? ` [flag ${COPIES_EXAMPLE_TEXT_FLAG}: pastes ${windowWords}+ words from optimization example(s) ${copied.join(', ')}]`
      : '';
  return {
    candidate: {
      text: applied.text,
      delta,
      rationale: `${proposal.rationale.trim()}${note}`,
      ...(flags.length > 0 ? { flags } : {}),
      // A data file's edit is its keys' values: re-applied to a newer incumbent as such, not merged line by line.
      ...(format === 'markdown' ? {} : { rebase: (incumbentText: string) => rebased(apply(incumbentText)) }),
    },
  };
}

function rebased(result: { ok: true; text: string } | { ok: false; message: string }): string | null {
  return result.ok ? result.text : null;
}

/** Per replaced section, the lines the candidate adds (`+ `) and removes (`- `). */
function describeChange(before: string, after: string, sections: readonly string[]): string {
  const spans = (text: string): Map<string, string> => {
    try {
      return new Map(markdownSectionSpans(text).map((span) => [span.name, text.slice(span.start, span.end)]));
    } catch {
      return new Map();
    }
  };
  const old = spans(before);
  const next = spans(after);
  const parts = sections.map((name) => {
    const change = changeText(lineChanges(old.get(name) ?? '', next.get(name) ?? ''));
    return `## ${name}\n${change === '' ? '(reworded, same lines)' : change}`;
  });
  return parts.join('\n\n');
}

/**
 * Creates the reflective proposer.
 *
 * `propose` throws only what must stop the run (InfrastructureError,
 * BudgetExceededError, an abort); every unusable answer is a failure in the
 * result.
 *
 * @example
 * ```ts
 * const proposer = createReflectiveProposer({ client });
 * const { candidates, failures } = await proposer.propose(context);
 * ```
 */
export function createReflectiveProposer(options: ReflectiveProposerOptions): Proposer {
  const windowWords = options.copyWindowWords ?? 8;
  const format = artifactFormatOf(options.artifactFile);
  return {
    id: `${REFLECTIVE_PROPOSER_VERSION} ${options.client.id}`,
    async propose(context: ProposalContext): Promise<ProposalResult> {
      // An aborted run makes no model call (a cached answer would come back without looking at the signal).
      if (context.signal?.aborted === true) throw context.signal.reason;
      const count = Math.max(1, Math.min(context.maxCandidates, options.maxCandidatesPerCall ?? 4));
      const prompt = buildProposalPrompt(context, options, count);
      // A seeded nonce (study seed, round, attempt): a resumed round gets its cached answer; a retried
      // round (after a failed answer) or a new one draws a fresh sample.
      const nonce = Math.floor(context.random() * 2 ** 31);
      const response = await options.client.generate({
        system: format === 'markdown' ? MARKDOWN_SYSTEM_PROMPT : dataSystemPrompt(format),
        prompt,
        schema: PROPOSAL_ANSWER_SCHEMA,
        repeat: nonce,
        ...(context.signal !== undefined ? { signal: context.signal } : {}),
      });
      const usage = response.usage;
      const fail = (code: string, reason: string, raw?: string): ProposalResult => ({
        candidates: [],
        failures: [{ code, scope: 'answer', reason, ...(raw !== undefined ? { raw } : {}) }],
        usage,
      });
      if (!response.ok)
        return fail('call_failed', `the proposer's model call failed (${response.reason}): ${response.message}`);
      const raw = capRaw(response.text);
      if (response.finishReason === 'length')
        return fail('truncated', 'the answer was cut off at the output token limit', raw);
      if (response.finishReason === 'content-filter')
        return fail('refused', 'the model refused or the provider filtered the answer', raw);
      const json = parseJsonAnswer(response.text);
      if (!json.ok) {
        const [code, reason] =
          json.problem === 'empty'
            ? ['empty', 'empty answer']
            : json.problem === 'unclosed-think'
              ? ['unclosed_think', 'unclosed <think> block']
              : json.problem === 'unclosed-fence'
                ? ['unclosed_fence', 'unclosed code fence']
                : ['broken_json', `broken JSON: ${json.message}`];
        return fail(code, reason, raw);
      }
      const parsed = proposalAnswerSchema.safeParse(json.value);
      if (!parsed.success) {
        const issues = parsed.error.issues
          .slice(0, 3)
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
        return fail('schema', `the answer does not fit the proposal schema: ${issues.join('; ')}`, raw);
      }
      const candidates: Candidate[] = [];
      const failures: ProposalFailure[] = [];
      const seen = new Set<string>();
      const repeated: Candidate[] = [];
      let repeats = 0;
      parsed.data.candidates.slice(0, context.maxCandidates).forEach((proposal, index) => {
        const built = buildCandidate(proposal, index, context, windowWords, options.artifactFile);
        if (built.repeated !== undefined && !seen.has(contentHash(built.repeated.text))) {
          seen.add(contentHash(built.repeated.text));
          repeated.push(built.repeated);
        }
        if (built.repeat === true) repeats += 1;
        else if (built.failure !== undefined) failures.push(built.failure);
        else if (built.candidate !== undefined) {
          const hash = contentHash(built.candidate.text);
          if (seen.has(hash)) repeats += 1;
          else {
            seen.add(hash);
            candidates.push(built.candidate);
          }
        }
      });
      // Every candidate of the answer unusable: the answer failed (one failure, with its raw text).
      if (candidates.length === 0 && repeats === 0 && failures.length > 0) {
        return {
          candidates,
          failures: [
            {
              code: 'no_usable_candidate',
              scope: 'answer',
              reason: `no usable candidate in the answer: ${failures.map((failure) => failure.reason).join('; ')}`,
              raw,
            },
          ],
          usage,
        };
      }
      return { candidates, failures, repeats, ...(repeated.length > 0 ? { repeated } : {}), usage };
    },
  };
}
