/**
 * The defaults of the effective settings (`kloop config`,
 * src/report/effective-config.ts) that depend on the study: a key absent
 * from kloop.yaml gets its value and note from the executor, the proposer
 * and the task, or is "not applicable".
 */
import {
  BASE_URL_ENV,
  DEFAULT_API_KEY_ENV,
  DEFAULT_BASE_URLS,
  baseURLFromEnvironment,
  parseModelSpec,
  type ProviderName,
} from '../providers/model-spec.ts';
import {
  DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS,
  DEFAULT_ERROR_DRIVEN_MAX_SCREENED,
} from '../tasks/intent/offline/ids.ts';
import { DEFAULT_GAMMA, DEFAULT_STARTUP_TRIALS } from '../proposers/search/search-defaults.ts';
import {
  DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS,
  DEFAULT_KEYWORD_RULES_MAX_SCREENED,
} from '../proposers/keyword-rules/keyword-rules-proposer.ts';
import {
  defaultIncumbentRepeats,
  defaultRequireCalibration,
  INCUMBENT_REPEATS_PER_REPEAT,
} from '../config/study-defaults.ts';
import type { StudyConfig } from '../config/config.ts';
import {
  DEFAULT_COMMAND_CONCURRENCY,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_LLM_MAX_OUTPUT_TOKENS,
  DEFAULT_LLM_TIMEOUT_MS,
} from '../config/config.ts';

/** The command-line settings that replace kloop.yaml values (those of `kloop run`). */
export interface ConfigOverrides {
  /** `--model`: replaces `executor.model` (an llm study). */
  model?: string;
  /** `--base-url`: replaces `executor.baseURL`, and `proposer.baseURL` when the proposer shares the executor's provider or is the only model. */
  baseUrl?: string;
  /** `--proposer-base-url`: replaces `proposer.baseURL`. */
  proposerBaseUrl?: string;
  /** `--max-cost-usd`: replaces `stopping.maxCostUsd`. */
  maxCostUsd?: number;
  /** `--max-experiments`: replaces `stopping.maxExperiments`. */
  maxExperiments?: number;
  /** `--db`: replaces `storage` (shown with its password masked, as every value). */
  db?: string;
  /** `--deterministic`: an llm executor at temperature 0 is taken as deterministic (changes the default of `gate.requireCalibration`). */
  deterministic?: boolean;
  /** Environment (whether the API key variable is set). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** What a derivation says about a key absent from kloop.yaml: its value (and note, and the variable it was read from), or that it does not apply. */
export type Derived = { value: unknown; note?: string; variable?: string } | 'not applicable';

/** What the effective settings are read against: the parsed config, the flags that replace its values, and what follows from them. */
export interface Context {
  config: StudyConfig;
  overrides: ConfigOverrides;
  /** The executor's model after `--model` (llm executors). */
  executorModel: string | undefined;
  /** The proposer's model (reflective proposers). */
  proposerModel: string | undefined;
  deterministic: boolean;
  intent: boolean;
  /** The line of a dotted key written in kloop.yaml, or undefined. */
  writtenLine(key: string): number | undefined;
}

/** A role's base URL when kloop.yaml gives none: the provider's variable (OPENAI_BASE_URL, ...) when set, else its default server. */
export function defaultBaseURL(
  provider: ProviderName | undefined,
  role: 'executor' | 'proposer',
  context: Context,
): Derived {
  const fromEnvironment =
    provider === undefined ? undefined : baseURLFromEnvironment(provider, context.overrides.env ?? process.env);
  if (fromEnvironment !== undefined)
    return {
      value: fromEnvironment.url,
      variable: fromEnvironment.variable,
      note: `${fromEnvironment.variable} is set in the environment`,
    };
  const url = provider === undefined ? undefined : DEFAULT_BASE_URLS[provider];
  if (url !== undefined)
    return {
      value: url,
      note: `the ${provider} default${BASE_URL_ENV[provider!] !== undefined ? ` (${BASE_URL_ENV[provider!]} is not set)` : ''}`,
    };
  return { value: null, note: `none: an openai-compatible server needs one (${role}.baseURL or --base-url)` };
}

/** The key variable of the reflective proposer: proposer.apiKeyEnv, the executor's on one provider, else the provider's default. */
export function proposerKeyVariable(context: Context): string | undefined {
  const { config } = context;
  const provider = providerOf(context.proposerModel);
  if (config.proposer.apiKeyEnv !== undefined) return config.proposer.apiKeyEnv;
  if (
    provider !== undefined &&
    provider === providerOf(context.executorModel) &&
    config.executor.apiKeyEnv !== undefined
  )
    return config.executor.apiKeyEnv;
  return provider === undefined ? undefined : DEFAULT_API_KEY_ENV[provider];
}

export function providerOf(model: string | undefined): ProviderName | undefined {
  if (model === undefined) return undefined;
  try {
    return parseModelSpec(model).provider;
  } catch {
    return undefined;
  }
}

/**
 * The value and note of a key absent from kloop.yaml whose default depends
 * on the study; `not applicable` for a key the study does not use (kloop.yaml
 * refuses it); undefined for a key whose schema default (or absence) says it.
 */
export function derive(key: string, context: Context): Derived | undefined {
  if (key.startsWith('executor.')) return deriveExecutor(key, context);
  if (key.startsWith('proposer.')) return deriveProposer(key, context);
  return deriveStudyWide(key, context);
}

/** {@link derive} of an `executor.` key. */
function deriveExecutor(key: string, context: Context): Derived | undefined {
  const { config } = context;
  const executor = config.executor.kind;
  const llm = executor === 'llm';
  const command = executor === 'command';
  switch (key) {
    case 'executor.model':
      return llm ? undefined : 'not applicable';
    case 'executor.baseURL':
      return llm ? defaultBaseURL(providerOf(context.executorModel), 'executor', context) : 'not applicable';
    case 'executor.apiKeyEnv': {
      if (!llm) return 'not applicable';
      const provider = providerOf(context.executorModel);
      const variable = provider === undefined ? undefined : DEFAULT_API_KEY_ENV[provider];
      return variable !== undefined
        ? { value: variable, note: `the ${provider} default` }
        : { value: null, note: 'none: the server is called without a key' };
    }
    case 'executor.temperature':
      return llm ? { value: null, note: "none: the provider's default temperature" } : 'not applicable';
    case 'executor.maxOutputTokens':
      return llm ? { value: DEFAULT_LLM_MAX_OUTPUT_TOKENS } : 'not applicable';
    case 'executor.timeoutMs':
      return llm
        ? { value: DEFAULT_LLM_TIMEOUT_MS, note: 'per model call' }
        : command
          ? { value: DEFAULT_COMMAND_TIMEOUT_MS, note: 'per example' }
          : 'not applicable';
    case 'executor.command':
      return command ? undefined : 'not applicable';
    case 'executor.concurrency':
      return command ? { value: DEFAULT_COMMAND_CONCURRENCY, note: 'programs at once' } : 'not applicable';
    case 'executor.deterministic':
      return command ? { value: false } : 'not applicable';
    default:
      return undefined;
  }
}

/** {@link derive} of a `proposer.` key. */
function deriveProposer(key: string, context: Context): Derived | undefined {
  const { config } = context;
  const executor = config.executor.kind;
  switch (key) {
    case 'proposer.baseURL': {
      if (config.proposer.kind !== 'reflective') return 'not applicable';
      const provider = providerOf(context.proposerModel);
      if (
        provider !== undefined &&
        provider === providerOf(context.executorModel) &&
        config.executor.baseURL !== undefined
      )
        return { value: config.executor.baseURL, note: "the executor's (same provider)" };
      return defaultBaseURL(provider, 'proposer', context);
    }
    case 'proposer.apiKeyEnv': {
      if (config.proposer.kind !== 'reflective') return 'not applicable';
      const variable = proposerKeyVariable(context);
      return variable !== undefined
        ? {
            value: variable,
            note:
              config.proposer.apiKeyEnv === undefined && variable === config.executor.apiKeyEnv
                ? "the executor's (same provider)"
                : `the ${providerOf(context.proposerModel)} default`,
          }
        : { value: null, note: 'none: the server is called without a key' };
    }
    case 'proposer.model':
      return config.proposer.kind === 'reflective'
        ? { value: context.proposerModel ?? null, note: "the executor's model" }
        : 'not applicable';
    case 'proposer.maxEvaluations':
    case 'proposer.maxScreened': {
      if (config.proposer.kind !== 'error-driven') return 'not applicable';
      const playbook = executor === 'offline';
      const evaluations = key === 'proposer.maxEvaluations';
      const value = playbook
        ? evaluations
          ? DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS
          : DEFAULT_ERROR_DRIVEN_MAX_SCREENED
        : evaluations
          ? DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS
          : DEFAULT_KEYWORD_RULES_MAX_SCREENED;
      return {
        value,
        note: playbook
          ? 'the intent playbook proposer'
          : evaluations
            ? 'the keyword-rules proposer: 40 single edits, and 36 for the learned scores and the bundles'
            : 'the keyword-rules proposer',
      };
    }
    case 'proposer.space':
      return config.proposer.kind === 'search' ? undefined : 'not applicable';
    case 'proposer.startupTrials':
      return config.proposer.kind === 'search'
        ? { value: DEFAULT_STARTUP_TRIALS, note: 'scored points before the TPE model is used' }
        : 'not applicable';
    case 'proposer.gamma':
      return config.proposer.kind === 'search'
        ? { value: DEFAULT_GAMMA, note: 'share of scored points that are good (TPE)' }
        : 'not applicable';
    case 'proposer.tpe':
      return config.proposer.kind === 'search' ? { value: true, note: 'false: random search' } : 'not applicable';
    default:
      return undefined;
  }
}

/** {@link derive} of a `gate.`, `stopping.`, `corpusPolicy.` or `schedule.` key. */
function deriveStudyWide(key: string, context: Context): Derived | undefined {
  const { config } = context;
  const llm = config.executor.kind === 'llm';
  switch (key) {
    case 'gate.incumbentRepeats':
      return {
        value: defaultIncumbentRepeats(config.gate.repeats, context.deterministic),
        note: context.deterministic
          ? "a deterministic executor's repeats are identical: gate.repeats"
          : `${INCUMBENT_REPEATS_PER_REPEAT} × gate.repeats`,
      };
    case 'gate.requireCalibration':
      return { value: defaultRequireCalibration(context.deterministic) };
    case 'stopping.target':
      return { value: null, note: 'none: no target stop' };
    case 'stopping.maxFailureRate':
      return { value: null, note: 'none: no failure-rate stop' };
    case 'stopping.maxRounds':
      return { value: null, note: 'none: no round limit' };
    case 'stopping.maxCostUsd':
      return {
        value: null,
        note:
          llm || config.proposer.kind === 'reflective'
            ? 'none: no cost limit (--max-cost-usd sets one)'
            : 'none: no cost limit (this study calls no model)',
      };
    case 'corpusPolicy.graduateAfterDays':
      return { value: null, note: 'none: no day limit' };
    case 'corpusPolicy.partialGold':
      return context.intent ? undefined : 'not applicable';
    case 'schedule.slow':
      return context.intent ? undefined : 'not applicable';
    case 'schedule.loops.A':
    case 'schedule.loops.B':
    case 'schedule.loops.C':
    case 'schedule.loops.D': {
      const loop = key.slice(-1);
      if (loop === 'B') return { value: config.schedule?.fast ?? null, note: 'schedule.fast' };
      return context.intent
        ? { value: config.schedule?.slow ?? null, note: 'schedule.slow' }
        : { value: 'off', note: 'Loops A, C and D work on intent studies only' };
    }
    case 'schedule.timezone':
      return { value: Intl.DateTimeFormat().resolvedOptions().timeZone, note: "the system's time zone" };
    case 'schedule.experimentsPerCycle':
      return { value: null, note: 'none: stopping as configured' };
    default:
      return undefined;
  }
}
