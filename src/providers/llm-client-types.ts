/** The shapes and defaults of the model client (src/providers/llm-client.ts). */
import type { JSONSchema7 } from 'ai';
import type { ExecutionUsage } from './usage.ts';
import type { UsageMeter } from './budget.ts';
import type { ResolvedModel, StructuredOutputMode } from './create-language-model.ts';
import type { ModelPrice, PriceLookup } from './prices.ts';
import type { AdaptiveLimiter } from './rate-limiter.ts';
import type { ResponseCache } from './response-cache.ts';

/** Default per-call timeout, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default retries on 408, 409, 5xx, connection failures and timeouts. */
export const DEFAULT_MAX_RETRIES = 3;
/** Default retries after HTTP 429. */
export const DEFAULT_MAX_RATE_LIMIT_RETRIES = 6;

export interface LlmClientOptions {
  resolved: ResolvedModel;
  /** Sampling temperature; absent = the provider's default. */
  temperature?: number;
  /** Most output tokens per answer; absent = the provider's default. */
  maxOutputTokens?: number;
  /** Per-call timeout in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** Retries on 408, 409, 5xx, connection failures and timeouts. Default 3. */
  maxRetries?: number;
  /** Retries after HTTP 429. Default 6. */
  maxRateLimitRetries?: number;
  /** A `Retry-After` longer than this (ms) is not waited for: the call fails. Default 120 000. */
  maxRetryAfterMs?: number;
  /** Concurrency limiter (share one per server). Default a new one with 8 slots. */
  limiter?: AdaptiveLimiter;
  /** Usage meter (share one per run). Default none. */
  meter?: UsageMeter;
  /** Response cache. Default none. */
  cache?: ResponseCache;
  /** Bypass the cache: no read; each new answer replaces the stored one. Default false. */
  noCache?: boolean;
  /** Price overrides keyed by `provider:model` (see `prices.ts`). */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Random source in [0, 1) for backoff jitter. Default `Math.random`. */
  random?: () => number;
  /** Waits `ms` milliseconds (backoff). Default a timer that the signal can cancel. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Clock in milliseconds (Retry-After dates, latency). Default `Date.now`. */
  now?: () => number;
  /** Progress messages (retries, fallbacks). Secrets are redacted. */
  log?: (message: string) => void;
}

/** The JSON schema the answer must fit. */
export interface AnswerSchema {
  /** Short name sent with the response format, e.g. `intent`. */
  name: string;
  jsonSchema: JSONSchema7;
}

export interface LlmRequest {
  system: string;
  /** The user message. */
  prompt: string;
  /** Ask for structured output with this schema (prompt-only when the mode is `prompt`). */
  schema?: AnswerSchema;
  /** Repeat index or nonce: part of the cache key. */
  repeat: number;
  signal?: AbortSignal;
}

export type LlmResponse =
  | { ok: true; text: string; finishReason: string; usage: ExecutionUsage; cached: boolean; latencyMs: number }
  | {
      ok: false;
      reason: 'timeout' | 'error';
      message: string;
      usage: ExecutionUsage;
      latencyMs: number;
      /** True when the failure is the infrastructure's (timeout, network, 408/409/5xx after the retries), false when the server refused this request. */
      transient: boolean;
    };

/** The settings that identify a client's answers. */
export interface LlmSettings {
  /** `provider:model`. */
  name: string;
  provider: string;
  modelId: string;
  baseURL: string;
  host: string;
  temperature?: number;
  maxOutputTokens?: number;
  timeoutMs: number;
  /** The configured mode (`auto` stays `auto` in ids even after a fallback). */
  structuredOutput: StructuredOutputMode;
  price: PriceLookup;
}

export interface LlmClient {
  /** Provider, model, base URL host, temperature, max output tokens and output mode. No secret. */
  readonly id: string;
  readonly settings: LlmSettings;
  /**
   * Most of this client's requests in flight at once: its limiter's ceiling
   * (shared with every client on the same limiter). Absent for clients built
   * without one (test doubles): no limit of their own.
   */
  readonly maxInFlight?: number;
  generate(request: LlmRequest): Promise<LlmResponse>;
}
