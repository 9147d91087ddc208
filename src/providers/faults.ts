/**
 * What a failed model call means, and how long to wait before the next try.
 *
 * | failure | kind | what the client does |
 * |---|---|---|
 * | HTTP 429 | `rate-limit` | halve concurrency, wait `Retry-After`, retry (bounded) |
 * | HTTP 408, 409, 5xx, connection errors | `transient` | retry with exponential backoff and jitter (bounded) |
 * | our per-call timeout | `timeout` | retry (bounded); then an invalid output `timeout` |
 * | HTTP 401, 403 | `auth` | throw a non-retryable InfrastructureError at once |
 * | HTTP 404 | `not-found` | throw a non-retryable InfrastructureError (wrong model or URL) |
 * | HTTP 400, 422, 501 naming the response format | `unsupported-output` | switch to prompt-only JSON (mode `auto`) |
 * | other HTTP 4xx; a request the SDK refuses to send | `request` | this request cannot be answered: an invalid output `error` |
 * | HTTP 2xx whose body is not an answer, e.g. `{"error": {...}}` or an HTML page | `transient` (`rate-limit` when the body names code 429 or a rate limit) | as that kind: the server did not answer, whatever its status |
 * | any other failure (a malformed or cut-off response, an unknown error) | `transient` | retry; never stored as the prompt's outcome |
 *
 * Only a completed answer, or a request the server refused with 4xx, is an
 * outcome of the request; everything else is the infrastructure's failure.
 * Gateways and proxies send errors with status 200 (promptfoo PR #8070,
 * DSPy #1544), so the status alone never makes a body an answer.
 */
import {
  APICallError,
  InvalidArgumentError,
  InvalidDataContentError,
  InvalidMessageRoleError,
  InvalidPromptError,
  MessageConversionError,
  UnsupportedFunctionalityError,
} from 'ai';
import { isAbortError } from '../errors.ts';

export type Fault =
  | { kind: 'rate-limit'; statusCode: number; retryAfterMs?: number; message: string }
  | { kind: 'transient'; statusCode?: number; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'auth'; statusCode: number; message: string }
  | { kind: 'not-found'; statusCode: number; message: string }
  | { kind: 'unsupported-output'; statusCode: number; message: string }
  | { kind: 'request'; statusCode?: number; message: string };

/** Longest excerpt of a non-answer body quoted in a message, in characters. */
const BODY_EXCERPT_CHARACTERS = 120;

const OUTPUT_FORMAT_WORDS =
  /response_format|json_schema|structured output|structured_output|output_format|\bgrammar\b|\bformat\b/i;

/**
 * Parses a `Retry-After` (seconds or an HTTP-date, RFC 9110 §10.2.3) or
 * `retry-after-ms` header into milliseconds from `nowMs`.
 *
 * @returns milliseconds ≥ 0, or undefined when absent or unreadable
 * @example
 * ```ts
 * parseRetryAfter({ 'retry-after': '7' }, 0); // 7000
 * parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, Date.parse('Wed, 21 Oct 2015 07:27:58 GMT')); // 2000
 * ```
 */
export function parseRetryAfter(
  headers: Readonly<Record<string, string>> | undefined,
  nowMs: number,
): number | undefined {
  if (headers === undefined) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
  const milliseconds = lower['retry-after-ms'];
  if (milliseconds !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) return Math.max(0, Number(milliseconds));
  const value = lower['retry-after']?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/**
 * Exponential backoff with jitter: `baseMs × 2^attempt × (0.5 + random())`,
 * capped at `maxMs`. `attempt` is 0 for the first retry.
 */
export function backoffDelayMs(attempt: number, random: () => number, baseMs = 500, maxMs = 30_000): number {
  return Math.min(maxMs, baseMs * 2 ** attempt * (0.5 + random()));
}

/** Errors the AI SDK raises before sending, about the request itself (the prompt, a setting): the request cannot be answered. */
function isRequestError(error: unknown): boolean {
  return [
    InvalidPromptError,
    InvalidArgumentError,
    InvalidMessageRoleError,
    InvalidDataContentError,
    MessageConversionError,
    UnsupportedFunctionalityError,
  ].some((type) => type.isInstance(error));
}

/**
 * What a 2xx body that is not an answer says: the error it carries
 * (`{"error": {"message", "code" | "status" | "type"}}`, or `{"error": "..."}`),
 * else an excerpt of the body.
 */
function describeNonAnswer(body: string): { message: string; rateLimited: boolean } {
  let error: unknown;
  try {
    error = (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    error = undefined;
  }
  if (error !== undefined && error !== null) {
    const fields = typeof error === 'object' ? (error as Record<string, unknown>) : { message: error };
    const code = fields.code ?? fields.status ?? fields.type;
    const text = typeof fields.message === 'string' ? fields.message : JSON.stringify(error);
    const rateLimited = Number(code) === 429 || /rate.?limit|too many requests/i.test(`${String(code)} ${text}`);
    return {
      message: `an error instead of an answer: ${text.slice(0, BODY_EXCERPT_CHARACTERS)}${code !== undefined ? ` (code ${String(code)})` : ''}`,
      rateLimited,
    };
  }
  const excerpt = body.replace(/\s+/g, ' ').trim().slice(0, BODY_EXCERPT_CHARACTERS);
  return {
    message: `a body that is not an answer: ${excerpt === '' ? '(empty)' : JSON.stringify(excerpt)}`,
    rateLimited: false,
  };
}

/**
 * Classifies an error thrown by an AI SDK call.
 *
 * @param timedOut whether our own per-call timeout fired
 */
export function classifyFault(error: unknown, timedOut: boolean, nowMs: number): Fault {
  const message = error instanceof Error ? error.message : String(error);
  if (timedOut) return { kind: 'timeout', message: 'the model did not answer within the timeout' };
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const body = typeof error.responseBody === 'string' ? error.responseBody : '';
    if (status === undefined) return { kind: 'transient', message };
    if (status >= 200 && status < 300) {
      // The server said "OK" but sent no answer (the SDK could not read it as one): a gateway's error page, a quota message.
      const nonAnswer = describeNonAnswer(body);
      if (nonAnswer.rateLimited) {
        const retryAfterMs = parseRetryAfter(error.responseHeaders, nowMs);
        return {
          kind: 'rate-limit',
          statusCode: status,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          message: nonAnswer.message,
        };
      }
      return { kind: 'transient', statusCode: status, message: nonAnswer.message };
    }
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(error.responseHeaders, nowMs);
      return {
        kind: 'rate-limit',
        statusCode: status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        message,
      };
    }
    if (status === 401 || status === 403) return { kind: 'auth', statusCode: status, message };
    if (status === 404) return { kind: 'not-found', statusCode: status, message };
    if (status === 408 || status === 409 || status >= 500) {
      if (status === 501 && OUTPUT_FORMAT_WORDS.test(`${message} ${body}`))
        return { kind: 'unsupported-output', statusCode: status, message };
      return { kind: 'transient', statusCode: status, message };
    }
    if ((status === 400 || status === 422) && OUTPUT_FORMAT_WORDS.test(`${message} ${body}`)) {
      return { kind: 'unsupported-output', statusCode: status, message };
    }
    return { kind: 'request', statusCode: status, message };
  }
  if (isAbortError(error)) {
    return { kind: 'timeout', message: 'the request was aborted by a timeout' };
  }
  if (isRequestError(error)) return { kind: 'request', message };
  // Not an answer and not a refusal (a malformed response, an unknown error): never the prompt's outcome.
  return { kind: 'transient', message };
}
