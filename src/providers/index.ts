/**
 * Language-model access for kloop: providers through the AI SDK 6, the
 * response cache, rate limits and retries, usage, prices and budgets.
 *
 * This folder knows no study and no proposer: the LLM study plugins that
 * compose an executor and a proposer from these clients live in
 * `src/study/llm-plugins.ts`, and the `kloop/providers` subpath
 * (`src/providers-subpath.ts`) exports both.
 *
 * @example
 * ```ts
 * import { createLlmClient, resolveLanguageModel, parseModelSpec } from './providers/index.ts';
 * const resolved = resolveLanguageModel(parseModelSpec('openai:gpt-4.1-mini'), {});
 * const client = createLlmClient({ resolved, maxOutputTokens: 2048, timeoutMs: 60_000 });
 * ```
 */
export {
  BudgetExceededError,
  checkBudgetCoversProposals,
  createUsageMeter,
  estimateProposalCost,
  MINIMUM_PROPOSALS,
} from './budget.ts';
export type {
  BudgetCoverage,
  BudgetLimits,
  ProposalCostEstimate,
  ProposalCostInput,
  UsageMeter,
  UsageTotals,
} from './budget.ts';
export {
  DEFAULT_API_KEY_ENV,
  DEFAULT_BASE_URLS,
  redactSecrets,
  resolveLanguageModel,
} from './create-language-model.ts';
export type { LanguageModelOptions, ResolvedModel, StructuredOutputMode } from './create-language-model.ts';
export { backoffDelayMs, classifyFault, parseRetryAfter } from './faults.ts';
export type { Fault } from './faults.ts';
export { createLlmClient, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, llmSettingsId } from './llm-client.ts';
export type { AnswerSchema, LlmClient, LlmClientOptions, LlmRequest, LlmResponse, LlmSettings } from './llm-client.ts';
export { formatModelSpec, parseModelSpec, PROVIDERS } from './model-spec.ts';
export type { ModelSpec, ProviderName } from './model-spec.ts';
export { costUsd, DEFAULT_PRICES, lookupPrice } from './prices.ts';
export type { ModelPrice, PriceLookup } from './prices.ts';
export { createAdaptiveLimiter } from './rate-limiter.ts';
export type { AdaptiveLimiter } from './rate-limiter.ts';
export { createResponseCache, responseCacheKey } from './response-cache.ts';
