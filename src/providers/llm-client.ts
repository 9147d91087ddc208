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
import { backoffDelayMs, classifyFault } from './faults.ts';
import { costUsd, estimateTokens, lookupPrice } from './prices.ts';
import { createAdaptiveLimiter } from './rate-limiter.ts';
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
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxRateLimitRetries = options.maxRateLimitRetries ?? DEFAULT_MAX_RATE_LIMIT_RETRIES;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
  const limiter = options.limiter ?? createAdaptiveLimiter();
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const price = lookupPrice(resolved.spec, options.prices);
  const redact = (text: string): string => redactSecrets(text, resolved.secrets);
  const log = (message: string): void => options.log?.(redact(message));
  let promptOnly = resolved.structuredOutput === 'prompt';

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
  const where = `${resolved.name} at ${resolved.host}`;

  async function callOnce(request: LlmRequest, useSchema: boolean, abortSignal: AbortSignal) {
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

  async function generate(request: LlmRequest): Promise<LlmResponse> {
    // After an abort (Ctrl-C) no call starts, not even a cache read.
    if (request.signal?.aborted) throw request.signal.reason;
    // A model resolved without its key (a command that was to call none): no call goes out.
    if (resolved.missingKey !== undefined) throw resolved.missingKey;
    const started = now();
    const useSchema = request.schema !== undefined && !promptOnly;
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
    const cache = options.cache;
    const hit = options.noCache === true ? undefined : await cache?.get(key);
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
    options.meter?.assertCanSpend(estimateTokens(request.system.length + request.prompt.length), price.price);

    let retries = 0;
    let rateLimitRetries = 0;
    for (;;) {
      const release = await limiter.acquire(request.signal);
      const timeoutSignal = AbortSignal.timeout(timeoutMs);
      const signal = request.signal !== undefined ? AbortSignal.any([request.signal, timeoutSignal]) : timeoutSignal;
      let answer: {
        text: string;
        finishReason: string;
        inputTokens: number | undefined;
        outputTokens: number | undefined;
      };
      try {
        answer = await callOnce(request, useSchema, signal);
      } catch (error) {
        release();
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        const fault = classifyFault(error, timeoutSignal.aborted, now());
        const message = redact(fault.message);
        const status = 'statusCode' in fault && fault.statusCode !== undefined ? `HTTP ${fault.statusCode}: ` : '';
        switch (fault.kind) {
          case 'auth':
            throw new InfrastructureError(
              `${where} refused the request (HTTP ${fault.statusCode}): check the API key and its permissions. ${message}`,
              { statusCode: fault.statusCode, isRetryable: false, cause: redact(String(error)) },
            );
          case 'not-found':
            throw new InfrastructureError(
              `${where}: HTTP 404 — no such model or endpoint (check the model name and the base URL). ${message}`,
              {
                statusCode: fault.statusCode,
                isRetryable: false,
              },
            );
          case 'rate-limit': {
            // A gateway may send its 429 inside an HTTP 200 (faults.ts): say which.
            const limited = fault.statusCode === 429 ? 'HTTP 429' : `HTTP ${fault.statusCode} naming a rate limit`;
            const waitMs = fault.retryAfterMs ?? backoffDelayMs(rateLimitRetries, random);
            if (fault.retryAfterMs !== undefined && fault.retryAfterMs > maxRetryAfterMs) {
              throw new InfrastructureError(
                `${where} is rate limited for ${Math.ceil(fault.retryAfterMs / 1000)} s (${limited}); try again later`,
                {
                  statusCode: 429,
                  isRetryable: true,
                },
              );
            }
            if (rateLimitRetries >= maxRateLimitRetries) {
              throw new InfrastructureError(
                `${where} kept answering ${limited} after ${rateLimitRetries} retries; lower the concurrency or try later`,
                {
                  statusCode: 429,
                  isRetryable: true,
                },
              );
            }
            limiter.rateLimited(waitMs);
            rateLimitRetries += 1;
            log(
              `${where}: rate limited (${limited}); concurrency now ${limiter.limit}, waiting ${Math.round(waitMs)} ms`,
            );
            continue;
          }
          case 'transient':
          case 'timeout': {
            if (retries < maxRetries) {
              const waitMs = backoffDelayMs(retries, random);
              retries += 1;
              log(`${where}: ${status}${message}; retry ${retries} of ${maxRetries} in ${Math.round(waitMs)} ms`);
              await sleep(waitMs, request.signal);
              continue;
            }
            if (fault.kind === 'timeout') {
              return {
                ok: false,
                reason: 'timeout',
                message: `no answer within ${timeoutMs} ms (${retries + 1} attempts)`,
                usage: { ...ZERO_USAGE },
                latencyMs: now() - started,
                transient: true,
              };
            }
            return {
              ok: false,
              reason: 'error',
              message: `${where} failed ${retries + 1} times: ${status}${message}`,
              usage: { ...ZERO_USAGE },
              latencyMs: now() - started,
              transient: true,
            };
          }
          case 'unsupported-output':
            if (useSchema && resolved.structuredOutput === 'auto') {
              promptOnly = true;
              log(
                `${where} does not accept a JSON-schema response format (${status.trim()}); asking for JSON in the prompt from now on`,
              );
              return generate(request);
            }
            return {
              ok: false,
              reason: 'error',
              message: `${status}${message}`,
              usage: { ...ZERO_USAGE },
              latencyMs: now() - started,
              transient: false,
            };
          case 'request':
            return {
              ok: false,
              reason: 'error',
              message: `${status}${message}`,
              usage: { ...ZERO_USAGE },
              latencyMs: now() - started,
              transient: false,
            };
        }
      }
      release();
      limiter.succeeded();
      // A server that echoes a request header into its answer must not get the key stored anywhere.
      answer.text = redact(answer.text);
      const inputTokens = answer.inputTokens ?? estimateTokens(request.system.length + request.prompt.length);
      const outputTokens = answer.outputTokens ?? estimateTokens(answer.text);
      const usage: ExecutionUsage = {
        inputTokens,
        outputTokens,
        costUsd: costUsd(price.price, inputTokens, outputTokens),
      };
      options.meter?.record(usage);
      if (cache !== undefined && answer.text.trim() !== '') {
        await cache.put(
          key,
          resolved.name,
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
        latencyMs: now() - started,
      };
    }
  }

  return { id: llmSettingsId(settings), settings, maxInFlight: limiter.maxConcurrency, generate };
}
