import { APICallError, InvalidPromptError, InvalidResponseDataError } from 'ai';
import { describe, expect, it } from 'vitest';
import { backoffDelayMs, classifyFault, parseRetryAfter } from './faults.ts';

function apiError(
  statusCode: number | undefined,
  responseBody = '',
  responseHeaders: Record<string, string> = {},
): APICallError {
  return new APICallError({
    message: `HTTP ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    ...(statusCode !== undefined ? { statusCode } : {}),
    responseBody,
    responseHeaders,
  });
}

describe('parseRetryAfter', () => {
  it('reads seconds, milliseconds and HTTP-dates', () => {
    expect(parseRetryAfter({ 'retry-after': '7' }, 0)).toBe(7000);
    expect(parseRetryAfter({ 'Retry-After': '1.5' }, 0)).toBe(1500);
    expect(parseRetryAfter({ 'retry-after-ms': '250' }, 0)).toBe(250);
    const now = Date.parse('Wed, 21 Oct 2015 07:27:58 GMT');
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, now)).toBe(2000);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, now)).toBe(0);
  });

  it('returns undefined when absent or unreadable', () => {
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter({}, 0)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' }, 0)).toBeUndefined();
  });
});

describe('backoffDelayMs', () => {
  it('doubles per attempt with jitter from the injected random, capped', () => {
    expect(backoffDelayMs(0, () => 0.5)).toBe(500);
    expect(backoffDelayMs(1, () => 0.5)).toBe(1000);
    expect(backoffDelayMs(2, () => 0)).toBe(1000);
    expect(backoffDelayMs(2, () => 0.999)).toBeCloseTo(2998, 0);
    expect(backoffDelayMs(20, () => 0.5)).toBe(30_000);
  });
});

describe('classifyFault', () => {
  it('sorts HTTP statuses into what the client does', () => {
    expect(classifyFault(apiError(429, '', { 'retry-after': '3' }), false, 0)).toMatchObject({
      kind: 'rate-limit',
      retryAfterMs: 3000,
    });
    expect(classifyFault(apiError(401), false, 0).kind).toBe('auth');
    expect(classifyFault(apiError(403), false, 0).kind).toBe('auth');
    expect(classifyFault(apiError(404), false, 0).kind).toBe('not-found');
    for (const status of [408, 409, 500, 502, 503])
      expect(classifyFault(apiError(status), false, 0).kind).toBe('transient');
    expect(classifyFault(apiError(undefined), false, 0).kind).toBe('transient');
    expect(classifyFault(apiError(400, '{"error":"context length exceeded"}'), false, 0).kind).toBe('request');
    expect(classifyFault(apiError(400, '{"error":"response_format json_schema unsupported"}'), false, 0).kind).toBe(
      'unsupported-output',
    );
    expect(classifyFault(apiError(500), true, 0).kind).toBe('timeout');
    const timeout = new DOMException('timed out', 'TimeoutError');
    expect(classifyFault(timeout, false, 0).kind).toBe('timeout');
  });

  it('reads an HTTP 2xx whose body is not an answer as the infrastructure failing, never as the request refused', () => {
    const limited = classifyFault(
      apiError(200, '{"error":{"message":"Rate limit exceeded","code":429}}', { 'retry-after': '2' }),
      false,
      0,
    );
    expect(limited).toEqual({
      kind: 'rate-limit',
      statusCode: 200,
      retryAfterMs: 2000,
      message: 'an error instead of an answer: Rate limit exceeded (code 429)',
    });
    expect(
      classifyFault(apiError(200, '{"error":{"message":"Too many requests, slow down","type":"requests"}}'), false, 0)
        .kind,
    ).toBe('rate-limit');
    expect(classifyFault(apiError(200, '{"error":"upstream overloaded"}'), false, 0)).toEqual({
      kind: 'transient',
      statusCode: 200,
      message: 'an error instead of an answer: upstream overloaded',
    });
    expect(classifyFault(apiError(200, '<html>\n<body>502 Bad Gateway</body>\n</html>'), false, 0)).toEqual({
      kind: 'transient',
      statusCode: 200,
      message: 'a body that is not an answer: "<html> <body>502 Bad Gateway</body> </html>"',
    });
    expect(classifyFault(apiError(204, ''), false, 0)).toEqual({
      kind: 'transient',
      statusCode: 204,
      message: 'a body that is not an answer: (empty)',
    });
  });

  it('reads a malformed response or an unknown error as transient, and a request the SDK refuses to send as refused', () => {
    expect(classifyFault(new InvalidResponseDataError({ data: {}, message: 'Expected a choice' }), false, 0).kind).toBe(
      'transient',
    );
    expect(classifyFault(new Error('socket hang up'), false, 0)).toEqual({
      kind: 'transient',
      message: 'socket hang up',
    });
    expect(classifyFault(new InvalidPromptError({ prompt: '', message: 'the prompt is empty' }), false, 0).kind).toBe(
      'request',
    );
  });
});
