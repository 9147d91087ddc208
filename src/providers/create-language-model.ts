/**
 * Builds an AI SDK 6 language model from a `provider:model` name, a base URL
 * and the API key read from the environment.
 *
 * Keys:
 *
 * - `openai`: `OPENAI_API_KEY` (or the variable named by `apiKeyEnv`). Required.
 * - `anthropic`: `ANTHROPIC_API_KEY` (or `apiKeyEnv`). Required.
 * - `openai-compatible`, `ollama`: the variable named by `apiKeyEnv` when one
 *   is configured (then required); no key otherwise.
 *
 * Base URL: as given (kloop.yaml or `--base-url`), else the provider's
 * conventional variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
 * `OLLAMA_HOST`), else its default server.
 *
 * A missing key is an {@link InputError} raised here, before any work starts.
 * The key is handed to the provider and to {@link ResolvedModel.secrets} (for
 * redaction) and nowhere else: it is not part of any id, cache key or record.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { InputError } from '../errors.ts';
import type { ModelSpec, ProviderName } from './model-spec.ts';
import { DEFAULT_API_KEY_ENV, DEFAULT_BASE_URLS, baseURLFromEnvironment, formatModelSpec } from './model-spec.ts';

/**
 * How the expected answer's JSON schema reaches the server:
 *
 * - `schema`: structured output (the provider's JSON-schema response format);
 * - `prompt`: only in the prompt (kloop always states the schema there too),
 *   the answer is parsed from text;
 * - `auto`: `schema` until the server rejects it (HTTP 400/422/501 naming the
 *   response format), then `prompt` for the rest of the session.
 */
export type StructuredOutputMode = 'schema' | 'prompt' | 'auto';

// The default key variables and base URLs live with the model names (light to import: `kloop config` reads them).
export { DEFAULT_API_KEY_ENV, DEFAULT_BASE_URLS } from './model-spec.ts';

/** Structured-output mode used when none is given. */
export const DEFAULT_STRUCTURED_OUTPUT: Readonly<Record<ProviderName, StructuredOutputMode>> = {
  openai: 'schema',
  anthropic: 'schema',
  ollama: 'schema',
  'openai-compatible': 'auto',
};

export interface LanguageModelOptions {
  /**
   * Server base URL; required for `openai-compatible`. Absent: the provider's
   * conventional variable in `env` (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
   * `OLLAMA_HOST`: `BASE_URL_ENV`), else its default (`DEFAULT_BASE_URLS`).
   */
  baseURL?: string;
  /** NAME of the environment variable holding the key (never the key itself). */
  apiKeyEnv?: string;
  /** Environment to read keys from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** fetch implementation (tests). Default the global fetch. */
  fetch?: typeof fetch;
  /** Default {@link DEFAULT_STRUCTURED_OUTPUT} of the provider. */
  structuredOutput?: StructuredOutputMode;
  /** Where the settings came from, for error messages (e.g. `kloop.yaml`). */
  file?: string;
  /** The config field that names this model, for error messages. Default `executor.model`. */
  field?: string;
  /** The kloop.yaml section of its settings (`baseURL`, `apiKeyEnv`), for error messages. Default `executor`. */
  section?: 'executor' | 'proposer';
  /**
   * False: a missing key is not an error here; the model is built without one
   * and {@link ResolvedModel.missingKey} holds the error a call must raise
   * (for commands that call no model but need its identity). Default true.
   */
  requireKey?: boolean;
}

/** A model ready to call, with everything that identifies it (and its secrets, for redaction only). */
export interface ResolvedModel {
  spec: ModelSpec;
  /** `provider:model`. */
  name: string;
  /** The AI SDK model (the openai provider uses the chat completions API). */
  model: LanguageModel;
  /** The configured base URL, or the provider's default, without a trailing slash. */
  baseURL: string;
  /** Host (and port) of `baseURL`, for ids. */
  host: string;
  structuredOutput: StructuredOutputMode;
  /** Provider options passed on every call (e.g. non-strict JSON schema for OpenAI). */
  providerOptions: Record<string, Record<string, boolean | string | number>>;
  /** Secret values (API keys) that must never be written anywhere: redact them from messages. */
  secrets: readonly string[];
  /** With `requireKey: false` and no key: the error (code `input.api-key`) that any call must raise instead of calling. */
  missingKey?: InputError;
}

/**
 * Resolves a model: reads its key, checks the base URL and builds the AI SDK model.
 *
 * @throws InputError when the key variable is unset or empty, the base URL is
 *   missing (openai-compatible) or not an http(s) URL
 * @example
 * ```ts
 * const resolved = resolveLanguageModel(parseModelSpec('openai:gpt-4.1-mini'), { env: { OPENAI_API_KEY: 'sk-...' } });
 * resolved.host; // 'api.openai.com'
 * ```
 */
export function resolveLanguageModel(spec: ModelSpec, options: LanguageModelOptions = {}): ResolvedModel {
  const env = options.env ?? process.env;
  const name = formatModelSpec(spec);
  const { apiKey, missingKey } = readApiKey(spec, name, options, env);
  const { baseURL, url } = resolveBaseURL(spec, name, options, env);
  const { model, providerOptions } = buildModel(spec, baseURL, apiKey, options.fetch);
  return {
    spec,
    name,
    model,
    baseURL,
    host: url.host,
    structuredOutput: options.structuredOutput ?? DEFAULT_STRUCTURED_OUTPUT[spec.provider],
    providerOptions,
    secrets: apiKey !== undefined ? [apiKey] : [],
    ...(missingKey !== undefined ? { missingKey } : {}),
  };
}

/** The trimmed key from the key variable; a missing key throws unless `requireKey: false`, then it is returned as `missingKey`. */
function readApiKey(
  spec: ModelSpec,
  name: string,
  options: LanguageModelOptions,
  env: NodeJS.ProcessEnv,
): { apiKey: string | undefined; missingKey: InputError | undefined } {
  const keyVariable = options.apiKeyEnv ?? DEFAULT_API_KEY_ENV[spec.provider];
  if (keyVariable === undefined) return { apiKey: undefined, missingKey: undefined };
  const value = env[keyVariable];
  if (value !== undefined && value.trim() !== '') return { apiKey: value.trim(), missingKey: undefined };
  const how =
    options.apiKeyEnv !== undefined ? `apiKeyEnv names ${keyVariable}` : `${spec.provider} needs ${keyVariable}`;
  const missingKey = new InputError(
    `no API key for ${name}: ${how}, but that environment variable is not set (export ${keyVariable}=...)`,
    {
      ...(options.file !== undefined ? { file: options.file } : {}),
      field:
        options.apiKeyEnv !== undefined
          ? `${options.section ?? 'executor'}.apiKeyEnv`
          : (options.field ?? 'executor.model'),
      code: 'input.api-key',
    },
  );
  if (options.requireKey !== false) throw missingKey;
  return { apiKey: undefined, missingKey };
}

/** The base URL (given, else the provider's variable, else its default; no trailing slash), checked. */
function resolveBaseURL(
  spec: ModelSpec,
  name: string,
  options: LanguageModelOptions,
  env: NodeJS.ProcessEnv,
): { baseURL: string; url: URL } {
  const baseURLField = `${options.section ?? 'executor'}.baseURL`;
  const invalid = (message: string): InputError =>
    new InputError(message, {
      ...(options.file !== undefined ? { file: options.file } : {}),
      field: baseURLField,
      code: 'input.base-url',
    });
  const given = options.baseURL?.trim();
  // Unset in kloop.yaml and on the command line: the provider's conventional variable (OPENAI_BASE_URL, ...), then its default.
  const configured = given !== undefined && given !== '' ? given : baseURLFromEnvironment(spec.provider, env)?.url;
  if (spec.provider === 'openai-compatible' && configured === undefined) {
    throw invalid(
      `${name} needs the server's base URL: set ${baseURLField} or --base-url (e.g. http://127.0.0.1:8080/v1 for a llama.cpp server)`,
    );
  }
  let baseURL = (configured ?? DEFAULT_BASE_URLS[spec.provider]!).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(baseURL);
    // Ollama's native API lives under /api; accept the bare server address too.
    if (spec.provider === 'ollama' && (url.pathname === '/' || url.pathname === '')) {
      baseURL = `${baseURL}/api`;
      url = new URL(baseURL);
    }
  } catch {
    throw invalid(`base URL "${baseURL}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(`base URL "${baseURL}" must start with http:// or https://`);
  if (url.username !== '' || url.password !== '')
    throw invalid(
      'the base URL must not carry credentials; put the key in an environment variable and name it with apiKeyEnv',
    );
  return { baseURL, url };
}

/** The AI SDK model of the provider, and the provider options passed on every call. */
function buildModel(
  spec: ModelSpec,
  baseURL: string,
  apiKey: string | undefined,
  fetchImplementation: typeof fetch | undefined,
): { model: LanguageModel; providerOptions: ResolvedModel['providerOptions'] } {
  const fetchOption = fetchImplementation !== undefined ? { fetch: fetchImplementation } : {};
  switch (spec.provider) {
    case 'openai':
      return {
        model: createOpenAI({ baseURL, ...(apiKey !== undefined ? { apiKey } : {}), ...fetchOption }).chat(
          spec.modelId,
        ),
        // intentSchema has optional relation fields; OpenAI's strict mode requires every key.
        providerOptions: { openai: { strictJsonSchema: false } },
      };
    case 'anthropic':
      return {
        model: createAnthropic({ baseURL, ...(apiKey !== undefined ? { apiKey } : {}), ...fetchOption })(spec.modelId),
        providerOptions: {},
      };
    case 'openai-compatible':
      return {
        model: createOpenAICompatible({
          name: 'openai-compatible',
          baseURL,
          ...(apiKey !== undefined ? { apiKey } : {}),
          includeUsage: true,
          supportsStructuredOutputs: true,
          ...fetchOption,
        }).chatModel(spec.modelId),
        providerOptions: { openaiCompatible: { strictJsonSchema: false } },
      };
    case 'ollama':
      return {
        model: createOllama({
          baseURL,
          ...(apiKey !== undefined ? { headers: { Authorization: `Bearer ${apiKey}` } } : {}),
          ...fetchOption,
        })(spec.modelId),
        providerOptions: {},
      };
  }
}

/**
 * Replaces every occurrence of a secret in `text` with `[redacted]`. Secrets
 * shorter than 4 characters are left alone (they would redact ordinary text).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    result = result.split(secret).join('[redacted]');
  }
  return result;
}
