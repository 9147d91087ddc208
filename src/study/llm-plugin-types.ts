/** The options and the shape of the LLM study plugins (src/study/llm-plugins.ts). */
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { BudgetCoverage, UsageMeter, UsageTotals } from '../providers/budget.ts';
import type { StructuredOutputMode } from '../providers/create-language-model.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import type { ModelPrice } from '../providers/prices.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { CompositionContext, StudyPlugins } from './load-study.ts';
import type { StudyConfig } from '../config/config.ts';
import type { Executor } from '../executors/executor.ts';
import type { Proposer } from '../proposers/proposer.ts';

/** Options of {@link createLlmStudyPlugins}. Every member but `getDatabase` is optional. */
export interface LlmStudyPluginOptions {
  /** `--model`: replaces `executor.model` (and is the proposer's model unless `proposer.model` is set). */
  model?: string;
  /**
   * `--base-url`: the server of whichever role calls a model: replaces
   * `executor.baseURL` (an llm executor), and `proposer.baseURL` when the
   * proposer's provider is the executor's or the executor calls no model
   * (a command study).
   */
  baseURL?: string;
  /** `--proposer-base-url`: replaces `proposer.baseURL` (and `--base-url`, for the proposer). */
  proposerBaseURL?: string;
  /** `--no-cache`: read nothing from the response cache; each new answer replaces the stored one. Default false. */
  noCache?: boolean;
  /** `--max-cost-usd`: replaces `stopping.maxCostUsd`. */
  maxCostUsd?: number;
  /** `--max-tokens`: most tokens (input + output) of the run. */
  maxTokens?: number;
  /**
   * Which models the command may call, so whose API keys it needs:
   * `all` (the executor's and the proposer's: `kloop run`), `executor`
   * (evaluations only: `kloop eval`, `calibrate`, `build`) or `none` (it reads
   * the notebook: `kloop status`, `corpus`, `review`). A model the command
   * does not call is resolved without its key; a call to it would fail with
   * the missing-key error and never go out. Default `all`.
   */
  modelCalls?: ModelCalls;
  /** The study database (for the response cache), looked up at each call; undefined = no cache. */
  getDatabase: () => StudyDatabase | undefined;
  /** Environment for API keys. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** fetch implementation (tests). */
  fetch?: typeof fetch;
  /** Price overrides, USD per million tokens, keyed by `provider:model`. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** `--deterministic`: the model answers identically at temperature 0 (taken into account only then). Default false. */
  deterministic?: boolean;
  /** Structured-output mode; default per provider (`auto` for openai-compatible). */
  structuredOutput?: StructuredOutputMode;
  /**
   * Most model calls in flight per provider (the rate limiter's ceiling),
   * replacing `providers.<name>.maxInFlight` for every provider. Default the
   * config's, else {@link DEFAULT_MAX_IN_FLIGHT} (8).
   */
  maxConcurrency?: number;
  /** Per-call timeout (ms); replaces `executor.timeoutMs`. Default 60 000. */
  timeoutMs?: number;
  /** Retries on 408, 409, 5xx and timeouts. Default 3. */
  maxRetries?: number;
  /** Most output tokens of a proposer answer. Default 8192. */
  proposerMaxOutputTokens?: number;
  /** Sampling temperature of the proposer; absent = the provider's default. */
  proposerTemperature?: number;
  /** Random source for backoff jitter. Default `Math.random`. */
  random?: () => number;
  /** Backoff sleep (tests). */
  sleep?: (_ms: number, _signal?: AbortSignal) => Promise<void>;
  /** Progress and notes (retries, unknown prices, fallbacks); secrets redacted. */
  log?: (_message: string) => void;
}

/** Which models a command may call (see {@link LlmStudyPluginOptions.modelCalls}). */
export type ModelCalls = 'all' | 'executor' | 'none';

/** The plugins, plus usage and the budget check. */
export interface LlmStudyPlugins extends StudyPlugins {
  createExecutor(config: StudyConfig, context?: CompositionContext): Executor;
  createProposer(config: StudyConfig, context?: CompositionContext): Proposer;
  sectionsOf(text: string): Record<string, string>;
  /** The run's usage meter (every call of executor and proposer). */
  readonly meter: UsageMeter;
  /** Usage so far. */
  usage(): UsageTotals;
  /** Clients created so far (executor first), e.g. for reporting model ids. */
  clients(): readonly LlmClient[];
  /**
   * Estimates one full proposal for `study` and checks that the caps cover at
   * least 3. Call after `loadStudy` and before the run.
   *
   * @throws InputError (code `input.budget`) when they do not
   */
  checkBudget(study: LoadedStudy): BudgetCoverage;
}
