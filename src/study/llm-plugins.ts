/**
 * The LLM study plugins: {@link createLlmStudyPlugins} gives `loadStudy` the
 * model clients an `llm` executor and a `reflective` proposer need (through
 * the providers, src/providers/), and the executor and proposer themselves
 * are composed by `src/study/compose.ts` — the one place that knows which
 * executor and proposer go with which task.
 *
 * @example
 * ```ts
 * import { createLlmStudyPlugins } from './study/llm-plugins.ts';
 * let db: StudyDatabase | undefined;
 * const plugins = createLlmStudyPlugins({ model: 'openai:gpt-4.1-mini', maxCostUsd: 5, getDatabase: () => db });
 * const study = loadStudy('examples/intent-llm', plugins); // a missing key throws InputError here
 * db = await openDatabase(studyDatabasePath(study.dir));
 * plugins.checkBudget(study); // throws InputError when the budget covers fewer than 3 proposals
 * ```
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../errors.ts';
import type { Executor } from '../executors/executor.ts';
import { llmRequestCharacters } from '../executors/llm/llm-executor.ts';
import type { Proposer } from '../proposers/proposer.ts';
import type { BudgetCoverage, UsageMeter, UsageTotals } from '../providers/budget.ts';
import { checkBudgetCoversProposals, createUsageMeter, estimateProposalCost } from '../providers/budget.ts';
import { emptyCallsByStage } from '../providers/call-stage.ts';
import type { StructuredOutputMode } from '../providers/create-language-model.ts';
import { resolveLanguageModel } from '../providers/create-language-model.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import { createLlmClient, DEFAULT_TIMEOUT_MS } from '../providers/llm-client.ts';
import { parseModelSpec } from '../providers/model-spec.ts';
import type { ModelPrice } from '../providers/prices.ts';
import { estimateTokens } from '../providers/prices.ts';
import type { AdaptiveLimiter } from '../providers/rate-limiter.ts';
import { createAdaptiveLimiter } from '../providers/rate-limiter.ts';
import { createResponseCache } from '../providers/response-cache.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { buildExecutorSystemPrompt } from '../tasks/intent/llm/output-contract.ts';
import { markdownSectionSpans } from '../artifact/markdown-sections.ts';
import type { Task } from '../tasks/task.ts';
import { composeExecutor, composeProposer, composeSectionsOf, composeTask, isIntentTask } from './compose.ts';
import type { StudyConfig } from '../config/config.ts';
import { DEFAULT_LLM_MAX_OUTPUT_TOKENS, DEFAULT_MAX_IN_FLIGHT } from '../config/config.ts';
import type { CompositionContext, StudyPlugins } from './load-study.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';

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
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Progress and notes (retries, unknown prices, fallbacks); secrets redacted. */
  log?: (message: string) => void;
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

/**
 * Creates the {@link StudyPlugins} for LLM studies. Safe to pass for offline
 * studies too: every executor and proposer is composed by
 * `src/study/compose.ts` (`executor.kind: offline` gets the offline executor
 * and playbook sections, `proposer.kind: error-driven` the error-driven
 * proposer); these plugins add the model clients.
 *
 * - `createExecutor(config, { task })`: for `executor.kind: llm`, the
 *   executor compose.ts gives the task (the LLM intent executor for intent) on `options.model ?? executor.model`, `options.baseURL ??
 *   executor.baseURL`, `executor.apiKeyEnv`, `executor.temperature`,
 *   `executor.maxOutputTokens` (default 2048) and `options.timeoutMs ??
 *   executor.timeoutMs` (default 60 000). Reads the key now: a missing key is
 *   an InputError before any work starts. Checks that the prompt artifact has
 *   readable `##` sections.
 * - `createProposer(config)`: for `proposer.kind: reflective`, the reflective
 *   proposer on `proposer.model ?? options.model ?? executor.model`, at
 *   `options.proposerBaseURL ?? options.baseURL` (the latter when it shares
 *   the executor's provider or the executor calls no model) `??
 *   proposer.baseURL`, and `proposer.apiKeyEnv`; else it uses the executor's
 *   base URL and key variable when it is on the same provider, else the
 *   provider's variables (`OPENAI_BASE_URL`, ...; `create-language-model.ts`),
 *   at most `proposerMaxOutputTokens` (default 8192) output tokens and a
 *   timeout of at least 120 s (a proposal is a long answer).
 * - `sectionsOf(text)`: markdown `##` sections for LLM studies, playbook
 *   sections for offline ones.
 * - Every client of one provider shares one limiter of
 *   `options.maxConcurrency ?? providers.<name>.maxInFlight ?? 8` requests
 *   in flight: the executor's and the proposer's calls together. Each
 *   client's `maxInFlight` (and the llm executor's) is that number, which
 *   the evaluator issues at once per artifact.
 *
 * @throws InputError from the factories: unknown provider, missing key or base URL, `--model` on an offline study
 */
export function createLlmStudyPlugins(options: LlmStudyPluginOptions): LlmStudyPlugins {
  const cache = createResponseCache(options.getDatabase);
  const limiters = new Map<string, AdaptiveLimiter>();
  const created: LlmClient[] = [];
  let meter: UsageMeter | undefined;
  let lastConfig: StudyConfig | undefined;
  let executorClient: LlmClient | undefined;
  let proposerClient: LlmClient | undefined;
  const notes = new Set<string>();
  const modelCalls: ModelCalls = options.modelCalls ?? 'all';

  const meterFor = (config: StudyConfig): UsageMeter => {
    if (meter === undefined) {
      const maxCostUsd = options.maxCostUsd ?? config.stopping.maxCostUsd;
      meter = createUsageMeter({
        ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
        ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      });
    }
    return meter;
  };

  const makeClient = (
    config: StudyConfig,
    modelName: string,
    field: string,
    settings: {
      baseURL?: string;
      apiKeyEnv?: string;
      section?: 'executor' | 'proposer';
      temperature?: number;
      maxOutputTokens: number;
      timeoutMs: number;
    },
  ): LlmClient => {
    const spec = parseModelSpec(modelName, { file: config.configPath, field });
    const resolved = resolveLanguageModel(spec, {
      ...(settings.section !== undefined ? { section: settings.section } : {}),
      ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      ...(settings.apiKeyEnv !== undefined ? { apiKeyEnv: settings.apiKeyEnv } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      ...(options.structuredOutput !== undefined ? { structuredOutput: options.structuredOutput } : {}),
      file: config.configPath,
      field,
      requireKey: field === 'proposer.model' ? modelCalls === 'all' : modelCalls !== 'none',
    });
    // One limiter per provider: the executor's and the proposer's calls to it share its maxInFlight.
    const provider = resolved.spec.provider;
    let limiter = limiters.get(provider);
    if (limiter === undefined) {
      limiter = createAdaptiveLimiter({
        maxConcurrency: options.maxConcurrency ?? config.providers?.[provider]?.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
      });
      limiters.set(provider, limiter);
    }
    const client = createLlmClient({
      resolved,
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      maxOutputTokens: settings.maxOutputTokens,
      timeoutMs: settings.timeoutMs,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      limiter,
      meter: meterFor(config),
      cache,
      ...(options.noCache !== undefined ? { noCache: options.noCache } : {}),
      ...(options.prices !== undefined ? { prices: options.prices } : {}),
      ...(options.random !== undefined ? { random: options.random } : {}),
      ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
      ...(options.log !== undefined ? { log: options.log } : {}),
    });
    const note = client.settings.price.note;
    if (note !== undefined && !notes.has(note)) {
      notes.add(note);
      options.log?.(note);
    }
    created.push(client);
    return client;
  };

  const taskOf = (config: StudyConfig, context: CompositionContext | undefined): Task =>
    context?.task ?? composeTask(config).task;

  const createExecutor = (config: StudyConfig, context?: CompositionContext): Executor => {
    lastConfig = config;
    const task = taskOf(config, context);
    if (config.executor.kind !== 'llm') {
      if (options.model !== undefined) {
        throw new InputError(
          '--model needs an LLM study: set executor.kind: llm (and a prompt artifact) in kloop.yaml',
          {
            file: config.configPath,
            field: 'executor.kind',
            code: 'input.model',
          },
        );
      }
      if (
        (options.baseURL !== undefined || options.proposerBaseURL !== undefined) &&
        config.proposer.kind !== 'reflective'
      ) {
        throw new InputError(
          `${options.baseURL !== undefined ? '--base-url' : '--proposer-base-url'} names a model server, but this study calls no model (executor.kind: ${config.executor.kind}, proposer.kind: ${config.proposer.kind}); a reflective proposer (proposer.kind: reflective, proposer.model) would use it`,
          { file: config.configPath, field: 'proposer.kind', code: 'input.base-url' },
        );
      }
      return composeExecutor(config, task);
    }
    const modelName = options.model ?? config.executor.model;
    if (modelName === undefined)
      throw new InputError('an llm executor needs a model (executor.model or --model)', {
        file: config.configPath,
        field: 'executor.model',
      });
    checkPromptArtifact(config);
    const baseURL = options.baseURL ?? config.executor.baseURL;
    executorClient = makeClient(config, modelName, 'executor.model', {
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(config.executor.apiKeyEnv !== undefined ? { apiKeyEnv: config.executor.apiKeyEnv } : {}),
      ...(config.executor.temperature !== undefined ? { temperature: config.executor.temperature } : {}),
      maxOutputTokens: config.executor.maxOutputTokens ?? DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS,
      timeoutMs: options.timeoutMs ?? config.executor.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    return composeExecutor(config, task, {
      llmClient: executorClient,
      ...(options.deterministic !== undefined ? { deterministic: options.deterministic } : {}),
    });
  };

  const createProposer = (config: StudyConfig, context?: CompositionContext): Proposer => {
    lastConfig = config;
    const task = taskOf(config, context);
    if (config.proposer.kind !== 'reflective') return composeProposer(config, task);
    const executorModel = config.executor.kind === 'llm' ? (options.model ?? config.executor.model) : undefined;
    const modelName = config.proposer.model ?? executorModel;
    if (modelName === undefined) {
      throw new InputError('a reflective proposer needs a model: set proposer.model or use an llm executor', {
        file: config.configPath,
        field: 'proposer.model',
      });
    }
    const spec = parseModelSpec(modelName, { file: config.configPath, field: 'proposer.model' });
    const executorSpec =
      executorModel !== undefined
        ? parseModelSpec(executorModel, { file: config.configPath, field: 'executor.model' })
        : undefined;
    const sameProvider = executorSpec?.provider === spec.provider;
    // --base-url serves whichever role calls a model: the proposer too when it shares the executor's provider, or is the only model.
    const flag = options.proposerBaseURL ?? (sameProvider || executorSpec === undefined ? options.baseURL : undefined);
    const baseURL = flag ?? config.proposer.baseURL ?? (sameProvider ? config.executor.baseURL : undefined);
    const apiKeyEnv = config.proposer.apiKeyEnv ?? (sameProvider ? config.executor.apiKeyEnv : undefined);
    proposerClient = makeClient(config, modelName, 'proposer.model', {
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}),
      section: 'proposer',
      ...(options.proposerTemperature !== undefined ? { temperature: options.proposerTemperature } : {}),
      maxOutputTokens: options.proposerMaxOutputTokens ?? DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS,
      timeoutMs: Math.max(options.timeoutMs ?? config.executor.timeoutMs ?? DEFAULT_TIMEOUT_MS, 120_000),
    });
    return composeProposer(config, task, { proposerClient });
  };

  // Before the executor is built (the editable sections are checked first), the config is not known here: markdown sections, as for any LLM study.
  const sectionsOf = (text: string): Record<string, string> =>
    composeSectionsOf(lastConfig ?? { executor: { kind: 'llm' } as StudyConfig['executor'] })(text);

  return {
    createExecutor,
    createProposer,
    sectionsOf,
    get meter() {
      return meter ?? createUsageMeter();
    },
    usage: () =>
      meter?.totals() ?? {
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        calls: 0,
        cachedCalls: 0,
        callsByStage: emptyCallsByStage(),
      },
    clients: () => [...created],
    checkBudget(study: LoadedStudy): BudgetCoverage {
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
    },
  };
}

/** Refuses a prompt artifact whose `##` sections cannot be read (two sections with one name, an empty heading). */
function checkPromptArtifact(config: StudyConfig): void {
  let text: string;
  try {
    text = readFileSync(config.artifact, 'utf8');
  } catch {
    return; // loadStudy reports a missing or unreadable artifact with its own message
  }
  try {
    markdownSectionSpans(text);
  } catch (error) {
    throw new InputError(`the prompt cannot be split into "##" sections: ${(error as Error).message}`, {
      file: config.artifact,
      code: 'input.artifact',
    });
  }
}
