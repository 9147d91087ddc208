/**
 * The one port through which kloop reaches a language model: an AI SDK 6
 * `generateText` call wrapped in the response cache, the usage meter, the
 * adaptive rate limiter, bounded retries and a per-call timeout.
 *
 * The AI SDK's own retries are off (`maxRetries: 0`): the retries here are
 * the only ones. See `faults.ts` for what each failure does. In short:
 *
 * - a completed answer (whatever its text) → `{ ok: true, text, finishReason }`;
 *   the caller decides whether the text is a valid output;
 * - a timeout, or a 408 / 409 / 5xx / connection failure, or a response that
 *   is not an answer whatever its status (an HTTP 200 carrying
 *   `{"error": …}` or an HTML page), that persists after the retries →
 *   `{ ok: false, reason: 'timeout' | 'error', transient: true }`:
 *   a failure of the infrastructure, not an outcome of the prompt, so the
 *   evaluator never stores it and the loop refuses the candidate it hit as
 *   `evaluation_failed` (or stops, when it hits the incumbent);
 * - any other request the server refuses (HTTP 400, 413, 422, ...) →
 *   `{ ok: false, reason: 'error', transient: false }`;
 * - HTTP 401/403/404, or a 429 (or a 2xx body naming a rate limit) that
 *   persists after its retries → throws
 *   {@link InfrastructureError} (a configuration or quota problem: the run
 *   stops with "infrastructure failure");
 * - the budget is spent → throws {@link BudgetExceededError}.
 *
 * Each request sends its repeat index (or nonce) as the sampling `seed`
 * where the provider supports one (OpenAI, OpenAI-compatible servers, Ollama): repeats
 * are distinct samples, and a server that honours seeds gives the same
 * sample again for the same repeat.
 *
 * API keys never leave the provider: they are not in the id, the cache key,
 * the stored answers, or any message (messages are redacted).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { generateText, jsonSchema, NoObjectGeneratedError, Output } from 'ai';
import { InfrastructureError } from '../errors.ts';
import type { ExecutionUsage } from './usage.ts';
import { redactSecrets } from './create-language-model.ts';
import { backoffDelayMs, classifyFault, type Fault } from './faults.ts';
import { costUsd, estimateTokens, lookupPrice } from './prices.ts';
import { type AdaptiveLimiter, createAdaptiveLimiter } from './rate-limiter.ts';
import { responseCacheKey } from './response-cache.ts';
import type { LlmClient, LlmClientOptions, LlmRequest, LlmResponse, LlmSettings } from './llm-client-types.ts';
import { DEFAULT_MAX_RATE_LIMIT_RETRIES, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from './llm-client-types.ts';

export type {
  AnswerSchema,
  LlmClient,
  LlmClientOptions,
  LlmRequest,
  LlmResponse,
  LlmSettings,
} from './llm-client-types.ts';
export { DEFAULT_MAX_RATE_LIMIT_RETRIES, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from './llm-client-types.ts';

/** Providers whose APIs take a sampling seed (the others warn on one). */
const SEEDED_PROVIDERS: ReadonlySet<string> = new Set(['openai', 'openai-compatible', 'ollama']);

const ZERO_USAGE: ExecutionUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal !== undefined ? { signal } : {});
}

/** The id of a client's settings, e.g. `openai:gpt-4.1-mini host=api.openai.com temperature=0 maxOutputTokens=2048 output=schema`. */
export function llmSettingsId(
  settings: Pick<LlmSettings, 'name' | 'host' | 'temperature' | 'maxOutputTokens' | 'structuredOutput'>,
): string {
  return [
    settings.name,
    `host=${settings.host}`,
    `temperature=${settings.temperature ?? 'default'}`,
    `maxOutputTokens=${settings.maxOutputTokens ?? 'default'}`,
    `output=${settings.structuredOutput}`,
  ].join(' ');
}

/**
 * Creates an {@link LlmClient}.
 *
 * @example
 * ```ts
 * const client = createLlmClient({ resolved: resolveLanguageModel(parseModelSpec('ollama:llama3.1')), temperature: 0 });
 * const answer = await client.generate({ system: 'Answer in JSON.', prompt: 'A clinic books patients.', repeat: 0 });
 * ```
 */
export function createLlmClient(options: LlmClientOptions): LlmClient {
  const { resolved } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const limiter = options.limiter ?? createAdaptiveLimiter();
  const price = lookupPrice(resolved.spec, options.prices);
  const redact = (text: string): string => redactSecrets(text, resolved.secrets);
  const context: ClientContext = {
    options,
    resolved,
    timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxRateLimitRetries: options.maxRateLimitRetries ?? DEFAULT_MAX_RATE_LIMIT_RETRIES,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
    limiter,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? defaultSleep,
    now: options.now ?? Date.now,
    price,
    redact,
    log: (message: string): void => options.log?.(redact(message)),
    where: `${resolved.name} at ${resolved.host}`,
    promptOnly: resolved.structuredOutput === 'prompt',
  };
  const settings: LlmSettings = {
    name: resolved.name,
    provider: resolved.spec.provider,
    modelId: resolved.spec.modelId,
    baseURL: resolved.baseURL,
    host: resolved.host,
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
    timeoutMs,
    structuredOutput: resolved.structuredOutput,
    price,
  };
  return {
    id: llmSettingsId(settings),
    settings,
    maxInFlight: limiter.maxConcurrency,
    generate: (request) => generate(context, request),
  };
}

/** A client's settings with their defaults, and its one mutable flag (see {@link createLlmClient}). */
interface ClientContext {
  options: LlmClientOptions;
  resolved: LlmClientOptions['resolved'];
  timeoutMs: number;
  maxRetries: number;
  maxRateLimitRetries: number;
  maxRetryAfterMs: number;
  limiter: AdaptiveLimiter;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  price: ReturnType<typeof lookupPrice>;
  redact: (text: string) => string;
  log: (message: string) => void;
  /** `name at host`, for messages. */
  where: string;
  /** True once the server refused a JSON-schema response format (or `structuredOutput: prompt`). */
  promptOnly: boolean;
}

/** One completed answer of the model. */
interface Answer {
  text: string;
  finishReason: string;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** Retries spent on one request. */
interface Attempts {
  retries: number;
  rateLimitRetries: number;
}

async function callOnce(
  context: ClientContext,
  request: LlmRequest,
  useSchema: boolean,
  abortSignal: AbortSignal,
): Promise<Answer> {
  const { options, resolved } = context;
  try {
    const result = await generateText({
      model: resolved.model,
      system: request.system,
      prompt: request.prompt,
      maxRetries: 0,
      abortSignal,
      ...(SEEDED_PROVIDERS.has(resolved.spec.provider) ? { seed: request.repeat } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
      ...(useSchema && request.schema !== undefined
        ? { output: Output.object({ schema: jsonSchema(request.schema.jsonSchema), name: request.schema.name }) }
        : {}),
      providerOptions: resolved.providerOptions,
    });
    return {
      text: result.text,
      finishReason: String(result.finishReason),
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
    };
  } catch (error) {
    if (NoObjectGeneratedError.isInstance(error)) {
      // The answer came back but is not JSON: an outcome for the caller to judge, not a fault.
      return {
        text: error.text ?? '',
        finishReason: String(error.finishReason ?? 'other'),
        inputTokens: error.usage?.inputTokens,
        outputTokens: error.usage?.outputTokens,
      };
    }
    throw error;
  }
}

/** The client's `generate`: the cache, then calls with retries (see the module comment). */
async function generate(context: ClientContext, request: LlmRequest): Promise<LlmResponse> {
  const { options, resolved } = context;
  // After an abort (Ctrl-C) no call starts, not even a cache read.
  if (request.signal?.aborted) throw request.signal.reason;
  // A model resolved without its key (a command that was to call none): no call goes out.
  if (resolved.missingKey !== undefined) throw resolved.missingKey;
  const started = context.now();
  const useSchema = request.schema !== undefined && !context.promptOnly;
  const key = responseCacheKey({
    provider: resolved.spec.provider,
    model: resolved.spec.modelId,
    baseURL: resolved.baseURL,
    parameters: {
      temperature: options.temperature ?? null,
      maxOutputTokens: options.maxOutputTokens ?? null,
      structuredOutput: useSchema ? 'schema' : 'prompt',
      providerOptions: resolved.providerOptions,
    },
    system: request.system,
    prompt: request.prompt,
    schema: request.schema ?? null,
    repeat: request.repeat,
  });
  const hit = options.noCache === true ? undefined : await options.cache?.get(key);
  if (hit !== undefined) {
    options.meter?.record(ZERO_USAGE, true);
    return {
      ok: true,
      text: hit.text,
      finishReason: hit.finishReason,
      usage: { ...ZERO_USAGE },
      cached: true,
      latencyMs: 0,
    };
  }
  options.meter?.assertCanSpend(estimateTokens(request.system.length + request.prompt.length), context.price.price);

  const attempts: Attempts = { retries: 0, rateLimitRetries: 0 };
  for (;;) {
    const release = await context.limiter.acquire(request.signal);
    const timeoutSignal = AbortSignal.timeout(context.timeoutMs);
    const signal = request.signal !== undefined ? AbortSignal.any([request.signal, timeoutSignal]) : timeoutSignal;
    let answer: Answer;
    try {
      answer = await callOnce(context, request, useSchema, signal);
    } catch (error) {
      release();
      if (request.signal?.aborted) throw request.signal.reason ?? error;
      const outcome = await handleFault(context, request, attempts, error, timeoutSignal.aborted, useSchema, started);
      if (outcome === 'retry') continue;
      return outcome;
    }
    release();
    context.limiter.succeeded();
    return recordAnswer(context, request, key, answer, started);
  }
}

/** Meters and caches a completed answer (redacted first) and returns it. */
async function recordAnswer(
  context: ClientContext,
  request: LlmRequest,
  key: string,
  answer: Answer,
  started: number,
): Promise<LlmResponse> {
  const { options } = context;
  // A server that echoes a request header into its answer must not get the key stored anywhere.
  answer.text = context.redact(answer.text);
  const inputTokens = answer.inputTokens ?? estimateTokens(request.system.length + request.prompt.length);
  const outputTokens = answer.outputTokens ?? estimateTokens(answer.text);
  const usage: ExecutionUsage = {
    inputTokens,
    outputTokens,
    costUsd: costUsd(context.price.price, inputTokens, outputTokens),
  };
  options.meter?.record(usage);
  if (options.cache !== undefined && answer.text.trim() !== '') {
    await options.cache.put(
      key,
      context.resolved.name,
      { text: answer.text, finishReason: answer.finishReason, inputTokens, outputTokens },
      options.noCache === true,
    );
  }
  return {
    ok: true,
    text: answer.text,
    finishReason: answer.finishReason,
    usage,
    cached: false,
    latencyMs: context.now() - started,
  };
}

/** What a failed call leads to: `'retry'`, a failed response, or a throw (see the module comment). */
async function handleFault(
  context: ClientContext,
  request: LlmRequest,
  attempts: Attempts,
  error: unknown,
  timedOut: boolean,
  useSchema: boolean,
  started: number,
): Promise<LlmResponse | 'retry'> {
  const { where } = context;
  const fault = classifyFault(error, timedOut, context.now());
  const message = context.redact(fault.message);
  const status = 'statusCode' in fault && fault.statusCode !== undefined ? `HTTP ${fault.statusCode}: ` : '';
  const failed = (reason: 'timeout' | 'error', text: string, transient: boolean): LlmResponse => ({
    ok: false,
    reason,
    message: text,
    usage: { ...ZERO_USAGE },
    latencyMs: context.now() - started,
    transient,
  });
  switch (fault.kind) {
    case 'auth':
      throw new InfrastructureError(
        `${where} refused the request (HTTP ${fault.statusCode}): check the API key and its permissions. ${message}`,
        { statusCode: fault.statusCode, isRetryable: false, cause: context.redact(String(error)) },
      );
    case 'not-found':
      throw new InfrastructureError(
        `${where}: HTTP 404 — no such model or endpoint (check the model name and the base URL). ${message}`,
        { statusCode: fault.statusCode, isRetryable: false },
      );
    case 'rate-limit':
      return rateLimited(context, attempts, fault);
    case 'transient':
    case 'timeout': {
      if (attempts.retries < context.maxRetries) {
        const waitMs = backoffDelayMs(attempts.retries, context.random);
        attempts.retries += 1;
        context.log(
          `${where}: ${status}${message}; retry ${attempts.retries} of ${context.maxRetries} in ${Math.round(waitMs)} ms`,
        );
        await context.sleep(waitMs, request.signal);
        return 'retry';
      }
      if (fault.kind === 'timeout')
        return failed('timeout', `no answer within ${context.timeoutMs} ms (${attempts.retries + 1} attempts)`, true);
      return failed('error', `${where} failed ${attempts.retries + 1} times: ${status}${message}`, true);
    }
    case 'unsupported-output':
      if (useSchema && context.resolved.structuredOutput === 'auto') {
        context.promptOnly = true;
        context.log(
          `${where} does not accept a JSON-schema response format (${status.trim()}); asking for JSON in the prompt from now on`,
        );
        return generate(context, request);
      }
      return failed('error', `${status}${message}`, false);
    case 'request':
      return failed('error', `${status}${message}`, false);
  }
}

/** A rate-limited call: throws past the Retry-After ceiling or the retries, else slows the limiter and retries. */
function rateLimited(
  context: ClientContext,
  attempts: Attempts,
  fault: Extract<Fault, { kind: 'rate-limit' }>,
): 'retry' {
  const { where } = context;
  // A gateway may send its 429 inside an HTTP 200 (faults.ts): say which.
  const limited = fault.statusCode === 429 ? 'HTTP 429' : `HTTP ${fault.statusCode} naming a rate limit`;
  const waitMs = fault.retryAfterMs ?? backoffDelayMs(attempts.rateLimitRetries, context.random);
  if (fault.retryAfterMs !== undefined && fault.retryAfterMs > context.maxRetryAfterMs) {
    throw new InfrastructureError(
      `${where} is rate limited for ${Math.ceil(fault.retryAfterMs / 1000)} s (${limited}); try again later`,
      { statusCode: 429, isRetryable: true },
    );
  }
  if (attempts.rateLimitRetries >= context.maxRateLimitRetries) {
    throw new InfrastructureError(
      `${where} kept answering ${limited} after ${attempts.rateLimitRetries} retries; lower the concurrency or try later`,
      { statusCode: 429, isRetryable: true },
    );
  }
  context.limiter.rateLimited(waitMs);
  attempts.rateLimitRetries += 1;
  context.log(
    `${where}: rate limited (${limited}); concurrency now ${context.limiter.limit}, waiting ${Math.round(waitMs)} ms`,
  );
  return 'retry';
}
