/**
 * The reflective proposer of online studies (`proposer.kind: reflective`):
 * a model reads program.md's Instructions and Constraints, the incumbent's
 * text and the decided A/B experiments — for each, its variant, its verdict
 * (accepted, or refused and why), and the primary metric on its **decision
 * window**: units and means per arm, relative lift, Δ and its anytime-valid
 * interval — and writes the next variant in one call. It never reads a
 * confirmation window: the summaries it is given (src/online/study/slow-loop.ts)
 * hold the decision window frozen when the confirmation window opened.
 *
 * The model answers one JSON object `{ "rationale": "...", "text": "..." }`,
 * `text` the whole new artifact (parsed defensively: a fenced or reasoned
 * answer is read, src/providers/answer-text.ts). An answer that is not such
 * an object, or a call that fails, is an error of the step (exit 1; nothing
 * starts); a variant identical to the incumbent or to one tried before means
 * the model has nothing new: it proposes nothing (the study stops as
 * `no_new_proposals`). Its calls go through the providers' client (retries,
 * rate limits, usage and price: src/providers/), the same as the offline
 * reflective proposer's.
 */
import { z } from 'zod';
import { contentHash } from '../../artifact/content-hash.ts';
import { KloopError } from '../../errors.ts';
import { parseJsonAnswer } from '../../providers/answer-text.ts';
import type { LlmClient, LlmResponse } from '../../providers/llm-client.ts';
import type { OnlineProposalContext, OnlineProposer } from './ideas-proposer.ts';

/** Most characters of a variant the model may write. */
export const MAX_VARIANT_CHARACTERS = 20_000;

const answerSchema = z.object({
  rationale: z.string().trim().min(1).max(2000),
  text: z.string().min(1).max(MAX_VARIANT_CHARACTERS),
});

const SYSTEM = [
  'You improve a strategy text that a live product uses, by randomized online experiments: each variant you write is served to fresh units beside the incumbent, and the world answers (replies, clicks, purchases).',
  'Learn from the decided experiments: which changes won or lost, by how much, and with what uncertainty. Propose ONE new variant: a change not tried before, respecting the constraints.',
  'Answer with one JSON object and nothing else: {"rationale": "<why this change, in one or two sentences>", "text": "<the whole new strategy text>"}.',
].join('\n');

const percent = (value: number): string => `${(value * 100).toFixed(2)}%`;

/** The user message: the program, the incumbent and every decided experiment's decision-window outcome. */
export function onlineProposalPrompt(context: OnlineProposalContext, metric: string): string {
  const lines = [
    '## Instructions',
    context.program.instructions.trim(),
    '',
    '## Constraints',
    context.program.constraints.trim(),
    '',
    '## The incumbent (served to most units now)',
    context.incumbentText.trim(),
    '',
    `## Decided experiments (primary metric: ${metric}; Δ = candidate − incumbent, positive is better)`,
  ];
  if (context.decided.length === 0) lines.push('None yet: this is the first experiment.');
  for (const experiment of context.decided) {
    const window = experiment.decisionWindow;
    lines.push(
      '',
      `### Experiment ${experiment.id}: ${experiment.status}${experiment.reason === null || experiment.reason === experiment.status ? '' : ` (${experiment.reason})`}`,
      `Change: ${experiment.rationale}`,
    );
    if (experiment.candidateText !== undefined) lines.push('Variant text:', experiment.candidateText.trim());
    if (window === null) lines.push('Outcome: no analysed unit.');
    else {
      const lift =
        window.incumbentMean === 0
          ? 'n/a'
          : `${window.candidateMean >= window.incumbentMean ? '+' : ''}${(((window.candidateMean - window.incumbentMean) / window.incumbentMean) * 100).toFixed(1)}%`;
      const interval =
        experiment.interval === undefined || experiment.interval === null
          ? 'not computed (decided before the metric was judged)'
          : `[${experiment.interval.lower ?? '-inf'}, ${experiment.interval.upper ?? '+inf'}] at ${experiment.interval.level}`;
      lines.push(
        `Outcome on ${window.units} analysed units: incumbent ${percent(window.incumbentMean)}, candidate ${percent(window.candidateMean)}, relative lift ${lift}; Δ interval ${interval}.`,
      );
    }
  }
  lines.push('', 'Write the next variant as the JSON object described.');
  return lines.join('\n');
}

/** Options of {@link createReflectiveOnlineProposer}. */
export interface ReflectiveOnlineProposerOptions {
  client: LlmClient;
  /** The primary metric's name, for the prompt. */
  metric: string;
  /** Called with each call's usage (the study counts its cost against `stopping.maxCostUsd`). */
  onUsage?: (usage: LlmResponse['usage']) => Promise<void>;
}

/** The reflective proposer of online studies (see the module's description). */
export function createReflectiveOnlineProposer(options: ReflectiveOnlineProposerOptions): OnlineProposer {
  const { client } = options;
  return {
    name: 'reflective',
    async propose(context) {
      const response = await client.generate({
        system: SYSTEM,
        prompt: onlineProposalPrompt(context, options.metric),
        repeat: context.decided.length,
      });
      await options.onUsage?.(response.usage);
      if (!response.ok)
        throw new KloopError(`the reflective proposer's model failed: ${response.message}`, {
          code: 'online.proposer',
          exitCode: 1,
        });
      const parsed = parseJsonAnswer(response.text);
      const answer = parsed.ok ? answerSchema.safeParse(parsed.value) : undefined;
      if (answer === undefined || !answer.success) {
        throw new KloopError(
          `the reflective proposer's answer is not {"rationale", "text"}: ${parsed.ok ? answer!.error!.issues[0]!.message : parsed.message}`,
          { code: 'online.proposer', exitCode: 1 },
        );
      }
      const text = answer.data.text.endsWith('\n') ? answer.data.text : `${answer.data.text}\n`;
      const tried = new Set([
        contentHash(context.incumbentText),
        ...context.decided.map((experiment) => experiment.candidateHash),
      ]);
      if (tried.has(contentHash(text))) return undefined;
      return { text, rationale: answer.data.rationale };
    },
  };
}
