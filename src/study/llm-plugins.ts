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
import type { Proposer } from '../proposers/proposer.ts';
import type { UsageMeter } from '../providers/budget.ts';
import { createUsageMeter } from '../providers/budget.ts';
import { emptyCallsByStage } from '../providers/call-stage.ts';
import { resolveLanguageModel } from '../providers/create-language-model.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import { createLlmClient, DEFAULT_TIMEOUT_MS } from '../providers/llm-client.ts';
import { parseModelSpec } from '../providers/model-spec.ts';
import type { AdaptiveLimiter } from '../providers/rate-limiter.ts';
import { createAdaptiveLimiter } from '../providers/rate-limiter.ts';
import { createResponseCache } from '../providers/response-cache.ts';
import { markdownSectionSpans } from '../artifact/markdown-sections.ts';
import type { Task } from '../tasks/task.ts';
import { composeExecutor, composeProposer, composeSectionsOf, composeTask } from './compose.ts';
import type { StudyConfig } from '../config/config.ts';
import { DEFAULT_MAX_IN_FLIGHT } from '../config/config.ts';
import type { CompositionContext, StudyPlugins } from './load-study.ts';
import {
  checkStudyBudget,
  DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS,
  DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS,
} from './llm-budget.ts';

export {
  DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS,
  DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS,
  INTENT_ANSWER_TOKENS,
  MIN_ANSWER_TOKENS,
  typicalAnswerTokens,
} from './llm-budget.ts';

import type { LlmStudyPluginOptions, LlmStudyPlugins, ModelCalls } from './llm-plugin-types.ts';

export type { LlmStudyPluginOptions, LlmStudyPlugins, ModelCalls } from './llm-plugin-types.ts';

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
  const state: PluginState = {
    options,
    cache: createResponseCache(options.getDatabase),
    limiters: new Map(),
    created: [],
    meter: undefined,
    lastConfig: undefined,
    executorClient: undefined,
    proposerClient: undefined,
    notes: new Set(),
    modelCalls: options.modelCalls ?? 'all',
  };
  // Before the executor is built (the editable sections are checked first), the config is not known here: markdown sections, as for any LLM study.
  const sectionsOf = (text: string): Record<string, string> =>
    composeSectionsOf(state.lastConfig ?? { executor: { kind: 'llm' } as StudyConfig['executor'] })(text);
  return {
    createExecutor: (config, context) => createPluginExecutor(state, config, context),
    createProposer: (config, context) => createPluginProposer(state, config, context),
    sectionsOf,
    get meter() {
      return state.meter ?? createUsageMeter();
    },
    usage: () =>
      state.meter?.totals() ?? {
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        calls: 0,
        cachedCalls: 0,
        callsByStage: emptyCallsByStage(),
      },
    clients: () => [...state.created],
    checkBudget: (study) =>
      checkStudyBudget(study, {
        meter: state.meter,
        executorClient: state.executorClient,
        proposerClient: state.proposerClient,
      }),
  };
}

/** The plugins' state: their options, the shared cache, limiters and meter, the clients made so far. */
interface PluginState {
  options: LlmStudyPluginOptions;
  cache: ReturnType<typeof createResponseCache>;
  /** One limiter per provider: the executor's and the proposer's calls to it share its maxInFlight. */
  limiters: Map<string, AdaptiveLimiter>;
  created: LlmClient[];
  meter: UsageMeter | undefined;
  lastConfig: StudyConfig | undefined;
  executorClient: LlmClient | undefined;
  proposerClient: LlmClient | undefined;
  /** Price notes already logged. */
  notes: Set<string>;
  modelCalls: ModelCalls;
}

/** The study's usage meter, made on first use with the run's caps. */
function meterFor(state: PluginState, config: StudyConfig): UsageMeter {
  if (state.meter === undefined) {
    const maxCostUsd = state.options.maxCostUsd ?? config.stopping.maxCostUsd;
    state.meter = createUsageMeter({
      ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
      ...(state.options.maxTokens !== undefined ? { maxTokens: state.options.maxTokens } : {}),
    });
  }
  return state.meter;
}

/** The settings of one client (besides its model). */
interface ClientSettings {
  baseURL?: string;
  apiKeyEnv?: string;
  section?: 'executor' | 'proposer';
  temperature?: number;
  maxOutputTokens: number;
  timeoutMs: number;
}

/** The limiter of a provider, made on first use. */
function limiterFor(state: PluginState, config: StudyConfig, provider: string): AdaptiveLimiter {
  let limiter = state.limiters.get(provider);
  if (limiter === undefined) {
    limiter = createAdaptiveLimiter({
      maxConcurrency:
        state.options.maxConcurrency ??
        config.providers?.[provider as keyof NonNullable<StudyConfig['providers']>]?.maxInFlight ??
        DEFAULT_MAX_IN_FLIGHT,
    });
    state.limiters.set(provider, limiter);
  }
  return limiter;
}

/** A model client for `modelName` (`field` names it in kloop.yaml), on its provider's limiter, the study's meter and cache. */
function makeClient(
  state: PluginState,
  config: StudyConfig,
  modelName: string,
  field: string,
  settings: ClientSettings,
): LlmClient {
  const { options } = state;
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
    requireKey: field === 'proposer.model' ? state.modelCalls === 'all' : state.modelCalls !== 'none',
  });
  const client = createLlmClient({
    resolved,
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    maxOutputTokens: settings.maxOutputTokens,
    timeoutMs: settings.timeoutMs,
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    limiter: limiterFor(state, config, resolved.spec.provider),
    meter: meterFor(state, config),
    cache: state.cache,
    ...(options.noCache !== undefined ? { noCache: options.noCache } : {}),
    ...(options.prices !== undefined ? { prices: options.prices } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
    ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
  const note = client.settings.price.note;
  if (note !== undefined && !state.notes.has(note)) {
    state.notes.add(note);
    options.log?.(note);
  }
  state.created.push(client);
  return client;
}

function taskOf(config: StudyConfig, context: CompositionContext | undefined): Task {
  return context?.task ?? composeTask(config).task;
}

/**
 * Refuses `--model`, `--base-url` and `--proposer-base-url` on a study
 * whose executor calls no model (and, for the base URLs, no reflective proposer).
 */
function refuseModelFlags(options: LlmStudyPluginOptions, config: StudyConfig): void {
  if (options.model !== undefined) {
    throw new InputError('--model needs an LLM study: set executor.kind: llm (and a prompt artifact) in kloop.yaml', {
      file: config.configPath,
      field: 'executor.kind',
      code: 'input.model',
    });
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
}

function createPluginExecutor(state: PluginState, config: StudyConfig, context?: CompositionContext): Executor {
  const { options } = state;
  state.lastConfig = config;
  const task = taskOf(config, context);
  if (config.executor.kind !== 'llm') {
    refuseModelFlags(options, config);
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
  state.executorClient = makeClient(state, config, modelName, 'executor.model', {
    ...(baseURL !== undefined ? { baseURL } : {}),
    ...(config.executor.apiKeyEnv !== undefined ? { apiKeyEnv: config.executor.apiKeyEnv } : {}),
    ...(config.executor.temperature !== undefined ? { temperature: config.executor.temperature } : {}),
    maxOutputTokens: config.executor.maxOutputTokens ?? DEFAULT_EXECUTOR_MAX_OUTPUT_TOKENS,
    timeoutMs: options.timeoutMs ?? config.executor.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return composeExecutor(config, task, {
    llmClient: state.executorClient,
    ...(options.deterministic !== undefined ? { deterministic: options.deterministic } : {}),
  });
}

function createPluginProposer(state: PluginState, config: StudyConfig, context?: CompositionContext): Proposer {
  const { options } = state;
  state.lastConfig = config;
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
  state.proposerClient = makeClient(state, config, modelName, 'proposer.model', {
    ...(baseURL !== undefined ? { baseURL } : {}),
    ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}),
    section: 'proposer',
    ...(options.proposerTemperature !== undefined ? { temperature: options.proposerTemperature } : {}),
    maxOutputTokens: options.proposerMaxOutputTokens ?? DEFAULT_PROPOSER_MAX_OUTPUT_TOKENS,
    timeoutMs: Math.max(options.timeoutMs ?? config.executor.timeoutMs ?? DEFAULT_TIMEOUT_MS, 120_000),
  });
  return composeProposer(config, task, { proposerClient: state.proposerClient });
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
