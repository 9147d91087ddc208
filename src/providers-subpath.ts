/**
 * The `kloop/providers` subpath: language-model access (src/providers/:
 * providers through the AI SDK 6, the response cache, rate limits and
 * retries, usage, prices and budgets), the LLM study plugins that plug a
 * model into `loadStudy` (src/study/llm-plugins.ts), and the LLM intent
 * executor and reflective proposer.
 *
 * A module of its own, above `src/providers/`, so that the providers folder
 * imports neither the study nor the proposers (composition happens in
 * src/study/compose.ts).
 *
 * @example
 * ```ts
 * import { createLlmStudyPlugins } from 'kloop/providers';
 * const plugins = createLlmStudyPlugins({ model: 'openai:gpt-4.1-mini', maxCostUsd: 5, getDatabase: () => undefined });
 * const study = loadStudy('examples/intent-llm', plugins);
 * ```
 *
 * @module
 */
export * from './providers/index.ts';
export {
  createLlmStudyPlugins,
  DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS,
  DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS,
} from './study/llm-plugins.ts';
export type { LlmStudyPluginOptions, LlmStudyPlugins } from './study/llm-plugins.ts';
export { createLlmIntentExecutor } from './tasks/intent/llm/llm-executor.ts';
export { markdownSections, replaceSections } from './artifact/markdown-sections.ts';
export { createReflectiveProposer } from './proposers/reflective-proposer.ts';
