/**
 * The budget check of an LLM study (src/study/llm-plugins.ts): what one full
 * proposal is expected to cost with the study's clients, against the run's caps.
 */
import { llmRequestCharacters } from '../executors/llm/llm-executor.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { BudgetCoverage, UsageMeter } from '../providers/budget.ts';
import { checkBudgetCoversProposals, estimateProposalCost } from '../providers/budget.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import { estimateTokens } from '../providers/prices.ts';
import { buildExecutorSystemPrompt } from '../tasks/intent/llm/output-contract.ts';
import { DEFAULT_LLM_MAX_OUTPUT_TOKENS } from '../config/config.ts';
import { isIntentTask } from './compose.ts';

/** Output tokens the budget check expects of one intent answer (an intent object: a few hundred tokens). */
export const INTENT_ANSWER_TOKENS = 500;

/** Fewest output tokens the budget check expects of one answer of any other task. */
export const MIN_ANSWER_TOKENS = 16;

/**
 * Output tokens the budget check expects of one answer of a task other than
 * intent: twice the longest gold answer as compact JSON (≈ 4 characters a
 * token; twice for the model's whitespace, key order and extra fields), at
 * least {@link MIN_ANSWER_TOKENS}. A classification answer (`{"label":
 * "billing"}`) is a few tokens, not the hundreds an intent takes.
 *
 * @param expected the gold of the examples a candidate is evaluated on
 */
export function typicalAnswerTokens(expected: readonly unknown[]): number {
  const longest = expected.reduce<number>(
    (most, value) => Math.max(most, estimateTokens(JSON.stringify(value) ?? '')),
    0,
  );
  return Math.max(MIN_ANSWER_TOKENS, 2 * longest);
}

/** Default most output tokens of one executor answer (`executor.maxOutputTokens`). */
export const DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS = DEFAULT_LLM_MAX_OUTPUT_TOKENS;
/** Default most output tokens of one proposer answer (several candidates). */
export const DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS = 8192;

/**
 * Estimates one full proposal for `study` with the clients made, and checks
 * that the meter's caps cover at least 3.
 *
 * @throws InputError (code `input.budget`) when they do not
 */
export function checkStudyBudget(
  study: LoadedStudy,
  made: { meter: UsageMeter | undefined; executorClient: LlmClient | undefined; proposerClient: LlmClient | undefined },
): BudgetCoverage {
  const { meter, executorClient, proposerClient } = made;
  const limits = meter?.limits ?? {};
  const executorPrice = executorClient?.settings.price.price ?? { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };
  const proposerPrice = proposerClient?.settings.price.price ?? { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };
  const executorMaxOutput = executorClient?.settings.maxOutputTokens ?? DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS;
  const proposerMaxOutput = proposerClient?.settings.maxOutputTokens ?? DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS;
  const artifactTokens = estimateTokens(study.artifactText);
  const evaluated = [...study.partitions.optimization, ...study.partitions.anchor];
  const intent = isIntentTask(study.task);
  const estimate = estimateProposalCost({
    executorPrice,
    proposerPrice: proposerClient !== undefined ? proposerPrice : { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
    // The messages as the study's executor lays them out: the intent executor's own system prompt, or the prompt and the task's output contract.
    executorSystemCharacters:
      executorClient !== undefined
        ? intent
          ? buildExecutorSystemPrompt(study.artifactText).length
          : llmRequestCharacters(study.task, study.artifactText)
        : 0,
    goalCharacters: executorClient !== undefined ? evaluated.map((example) => example.text.length) : [],
    repeats: study.gate.repeats,
    // A typical answer: an intent is a few hundred tokens; any other task's, the size of its gold answers. The cap bounds both.
    executorOutputTokens: Math.min(
      executorMaxOutput,
      intent ? INTENT_ANSWER_TOKENS : typicalAnswerTokens(evaluated.map((example) => example.expected)),
    ),
    proposerInputCharacters:
      proposerClient !== undefined
        ? study.artifactText.length + study.instructions.length + study.constraintsText.length + 6000 + 3000 + 2500
        : 0,
    proposerOutputTokens:
      proposerClient !== undefined
        ? Math.min(proposerMaxOutput, Math.ceil((study.candidatesPerRound * artifactTokens) / 2) + 300)
        : 0,
  });
  const spent = meter?.totals();
  return checkBudgetCoversProposals(
    limits,
    estimate,
    spent !== undefined ? { costUsd: spent.costUsd, tokens: spent.inputTokens + spent.outputTokens } : undefined,
  );
}
