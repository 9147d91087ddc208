/**
 * Model names: `provider:model`, as written in `kloop.yaml` (`executor.model`,
 * `proposer.model`) or with `--model`.
 *
 * | provider | example | server |
 * |---|---|---|
 * | `openai` | `openai:gpt-4.1-mini` | api.openai.com, or `baseURL` / `OPENAI_BASE_URL` (chat completions API) |
 * | `anthropic` | `anthropic:claude-sonnet-4-5` | api.anthropic.com, or `baseURL` / `ANTHROPIC_BASE_URL` |
 * | `openai-compatible` | `openai-compatible:qwen2.5-7b` | llama.cpp server, vLLM, LM Studio: `baseURL` required |
 * | `ollama` | `ollama:llama3.1` | a local Ollama (`http://127.0.0.1:11434/api` unless `baseURL` or `OLLAMA_HOST`) |
 *
 * The model part is passed to the server as written; it may itself contain
 * colons (`ollama:llama3.1:8b` is provider `ollama`, model `llama3.1:8b`).
 */
import { InputError, type ErrorContext } from '../errors.ts';

/** Providers kloop can reach through the AI SDK. */
export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'ollama'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Default key variable of each provider that needs one. */
export const DEFAULT_API_KEY_ENV: Readonly<Partial<Record<ProviderName, string>>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

/** Where each provider listens when no base URL is given (`openai-compatible` has none: its `baseURL` is required). */
export const DEFAULT_BASE_URLS: Readonly<Partial<Record<ProviderName, string>>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  ollama: 'http://127.0.0.1:11434/api',
};

/**
 * The providers' conventional environment variables for their server, read
 * when kloop.yaml and the command line give no base URL: the OpenAI SDKs'
 * `OPENAI_BASE_URL`, Anthropic's `ANTHROPIC_BASE_URL` and Ollama's
 * `OLLAMA_HOST` (`host:port` or a URL). `openai-compatible` has none: its
 * base URL is always given.
 */
export const BASE_URL_ENV: Readonly<Partial<Record<ProviderName, string>>> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
  ollama: 'OLLAMA_HOST',
};

/**
 * The base URL a provider's conventional variable ({@link BASE_URL_ENV})
 * gives, or undefined when it is unset or empty. `OLLAMA_HOST` may be a bare
 * `host:port` (as the Ollama CLI reads it): `http://` is added.
 *
 * @example
 * ```ts
 * baseURLFromEnvironment('ollama', { OLLAMA_HOST: '127.0.0.1:11434' }); // { url: 'http://127.0.0.1:11434', variable: 'OLLAMA_HOST' }
 * ```
 */
export function baseURLFromEnvironment(
  provider: ProviderName,
  env: NodeJS.ProcessEnv,
): { url: string; variable: string } | undefined {
  const variable = BASE_URL_ENV[provider];
  const value = variable === undefined ? undefined : env[variable]?.trim();
  if (variable === undefined || value === undefined || value === '') return undefined;
  return {
    url: provider === 'ollama' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? `http://${value}` : value,
    variable,
  };
}

/** A parsed model name. */
export interface ModelSpec {
  provider: ProviderName;
  /** The model id as the server knows it, e.g. `gpt-4.1-mini`. */
  modelId: string;
}

/** True when `value` names a provider kloop supports. */
export function isProviderName(value: string): value is ProviderName {
  return (PROVIDERS as readonly string[]).includes(value);
}

/**
 * Parses `provider:model`.
 *
 * @param name e.g. `openai:gpt-4.1-mini`, `ollama:llama3.1:8b`
 * @param context where the name came from, for the error message (file, field)
 * @throws InputError when the provider is missing or unknown, or the model part is empty
 * @example
 * ```ts
 * parseModelSpec('anthropic:claude-sonnet-4-5'); // { provider: 'anthropic', modelId: 'claude-sonnet-4-5' }
 * ```
 */
export function parseModelSpec(name: string, context: ErrorContext = {}): ModelSpec {
  const trimmed = name.trim();
  const colon = trimmed.indexOf(':');
  const allowed = PROVIDERS.join(', ');
  if (colon <= 0) {
    throw new InputError(
      `model "${trimmed}" must be written provider:model (providers: ${allowed}), e.g. openai:gpt-4.1-mini`,
      {
        ...context,
        code: 'input.model',
      },
    );
  }
  const provider = trimmed.slice(0, colon).toLowerCase();
  const modelId = trimmed.slice(colon + 1).trim();
  if (!isProviderName(provider)) {
    throw new InputError(`unknown provider "${provider}" in model "${trimmed}" (providers: ${allowed})`, {
      ...context,
      code: 'input.model',
    });
  }
  if (modelId === '')
    throw new InputError(`model "${trimmed}" names no model after "${provider}:"`, { ...context, code: 'input.model' });
  return { provider, modelId };
}

/** `provider:model` of a spec. */
export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.modelId}`;
}
