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
import { characterCount } from '../text/characters.ts';
import { capRaw, parseJsonAnswer } from '../providers/answer-text.ts';
import type { AnswerSchema, LlmClient } from '../providers/llm-client.ts';
import type { SectionReplacement } from '../artifact/markdown-sections.ts';
import { markdownSectionSpans, replaceSections } from '../artifact/markdown-sections.ts';
import { changeText, lineChanges } from '../artifact/three-way-merge.ts';
import { artifactFormatOf, describeKeyChanges, replaceKeys } from './data-edits.ts';
import type { Candidate, ProposalContext, ProposalFailure, ProposalResult, Proposer } from './proposer.ts';
import {
  buildProposalPrompt,
  dataSystemPrompt,
  findCopiedExamples,
  MARKDOWN_SYSTEM_PROMPT,
} from './reflective-prompt.ts';

export {
  DEFAULT_HISTORY_CHARACTERS,
  buildProposalPrompt,
  findCopiedExamples,
  historyText,
} from './reflective-prompt.ts';

/** Implementation version, part of the proposer id. */
export const REFLECTIVE_PROPOSER_VERSION = 'reflective@1';

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
  return {
    id: `${REFLECTIVE_PROPOSER_VERSION} ${options.client.id}`,
    propose: (context) => proposeReflective(options, context),
  };
}

/** One round of the reflective proposer: one model call, its answer read, its candidates built. */
async function proposeReflective(
  options: ReflectiveProposerOptions,
  context: ProposalContext,
): Promise<ProposalResult> {
  // An aborted run makes no model call (a cached answer would come back without looking at the signal).
  if (context.signal?.aborted === true) throw context.signal.reason;
  const format = artifactFormatOf(options.artifactFile);
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
  const answer = readAnswer(response.text);
  if (!answer.ok) return fail(answer.code, answer.reason, raw);
  return { ...collectCandidates(options, context, answer.proposals, raw), usage };
}

/** The answer's proposals, or why the answer cannot be read (a failure code and reason). */
function readAnswer(
  text: string,
):
  | { ok: true; proposals: z.output<typeof proposalAnswerSchema>['candidates'] }
  | { ok: false; code: string; reason: string } {
  const json = parseJsonAnswer(text);
  if (!json.ok) {
    const [code, reason] =
      json.problem === 'empty'
        ? ['empty', 'empty answer']
        : json.problem === 'unclosed-think'
          ? ['unclosed_think', 'unclosed <think> block']
          : json.problem === 'unclosed-fence'
            ? ['unclosed_fence', 'unclosed code fence']
            : ['broken_json', `broken JSON: ${json.message}`];
    return { ok: false, code, reason };
  }
  const parsed = proposalAnswerSchema.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    return { ok: false, code: 'schema', reason: `the answer does not fit the proposal schema: ${issues.join('; ')}` };
  }
  return { ok: true, proposals: parsed.data.candidates };
}

/**
 * Builds the answer's candidates (up to `maxCandidates`), each text once; repeats of texts tried before
 * are counted and kept apart. Every candidate unusable: the answer failed (one failure, with its raw text).
 */
function collectCandidates(
  options: ReflectiveProposerOptions,
  context: ProposalContext,
  proposals: z.output<typeof proposalAnswerSchema>['candidates'],
  raw: string,
): ProposalResult {
  const windowWords = options.copyWindowWords ?? 8;
  const candidates: Candidate[] = [];
  const failures: ProposalFailure[] = [];
  const seen = new Set<string>();
  const repeated: Candidate[] = [];
  let repeats = 0;
  proposals.slice(0, context.maxCandidates).forEach((proposal, index) => {
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
    };
  }
  return { candidates, failures, repeats, ...(repeated.length > 0 ? { repeated } : {}) };
}
