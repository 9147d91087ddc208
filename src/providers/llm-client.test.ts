import { APICallError } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { InfrastructureError } from '../errors.ts';
import type { ResolvedModel } from './create-language-model.ts';
import { createLlmClient, type LlmClientOptions } from './llm-client.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

function answer(text: string, finish: 'stop' | 'length' = 'stop'): GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: finish, raw: finish },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: 5, reasoning: undefined },
    },
    warnings: [],
  };
}

function resolvedFor(
  model: MockLanguageModelV3,
  structuredOutput: ResolvedModel['structuredOutput'] = 'schema',
): ResolvedModel {
  return {
    spec: { provider: 'openai', modelId: 'gpt-4.1-mini' },
    name: 'openai:gpt-4.1-mini',
    model,
    baseURL: 'https://api.openai.com/v1',
    host: 'api.openai.com',
    structuredOutput,
    providerOptions: {},
    secrets: ['sk-mock-secret'],
  };
}

function client(model: MockLanguageModelV3, options: Partial<LlmClientOptions> = {}) {
  return createLlmClient({
    resolved: resolvedFor(model),
    temperature: 0,
    maxOutputTokens: 100,
    sleep: async () => undefined,
    random: () => 0.5,
    ...options,
  });
}

const SCHEMA = {
  name: 'thing',
  jsonSchema: { type: 'object' as const, properties: { a: { type: 'number' as const } } },
};

describe('createLlmClient (mock language model)', () => {
  it('sends the schema as a JSON response format, the settings, and reports usage with cost', async () => {
    const model = new MockLanguageModelV3({ doGenerate: answer('{"a":1}') });
    const llm = client(model);
    const response = await llm.generate({ system: 'sys', prompt: 'user', schema: SCHEMA, repeat: 0 });
    expect(response).toMatchObject({ ok: true, text: '{"a":1}', finishReason: 'stop', cached: false });
    expect(response.ok && response.usage.inputTokens).toBe(10);
    expect(response.ok && response.usage.costUsd).toBeCloseTo((10 * 0.4 + 5 * 1.6) / 1e6);
    const call = model.doGenerateCalls[0]!;
    expect(call.responseFormat).toMatchObject({ type: 'json', name: 'thing', schema: SCHEMA.jsonSchema });
    expect(call.temperature).toBe(0);
    expect(call.maxOutputTokens).toBe(100);
    expect(llm.id).toBe('openai:gpt-4.1-mini host=api.openai.com temperature=0 maxOutputTokens=100 output=schema');
  });

  it('returns an answer that is not JSON (the caller judges it), and a truncated one', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [answer('sorry, no'), answer('{"a":', 'length')] });
    const llm = client(model);
    expect(await llm.generate({ system: 's', prompt: 'p', schema: SCHEMA, repeat: 0 })).toMatchObject({
      ok: true,
      text: 'sorry, no',
    });
    expect(await llm.generate({ system: 's', prompt: 'p2', schema: SCHEMA, repeat: 0 })).toMatchObject({
      ok: true,
      text: '{"a":',
      finishReason: 'length',
    });
  });

  it('asks without a response format in prompt mode', async () => {
    const model = new MockLanguageModelV3({ doGenerate: answer('{"a":1}') });
    const llm = createLlmClient({ resolved: resolvedFor(model, 'prompt') });
    await llm.generate({ system: 's', prompt: 'p', schema: SCHEMA, repeat: 0 });
    expect(model.doGenerateCalls[0]!.responseFormat?.type ?? 'text').toBe('text');
  });

  it('is the only one retrying (the AI SDK does not), returns a persistent server error as transient, and throws a 404 at once', async () => {
    let calls = 0;
    const failing = new MockLanguageModelV3({
      doGenerate: async () => {
        calls += 1;
        throw new APICallError({
          message: 'overloaded',
          url: 'u',
          requestBodyValues: {},
          statusCode: 529,
          isRetryable: true,
        });
      },
    });
    expect(await client(failing, { maxRetries: 2 }).generate({ system: 's', prompt: 'p', repeat: 0 })).toMatchObject({
      ok: false,
      reason: 'error',
      transient: true,
    });
    expect(calls).toBe(3);

    const missing = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new APICallError({ message: 'model not found', url: 'u', requestBodyValues: {}, statusCode: 404 });
      },
    });
    const error = await client(missing)
      .generate({ system: 's', prompt: 'p', repeat: 0 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as InfrastructureError).isRetryable).toBe(false);
    expect(missing.doGenerateCalls.length).toBe(1);
  });

  it('redacts the key from error messages and answers', async () => {
    const echo = new MockLanguageModelV3({ doGenerate: answer('your key is sk-mock-secret') });
    const response = await client(echo).generate({ system: 's', prompt: 'p', repeat: 0 });
    expect(response.ok && response.text).toBe('your key is [redacted]');
    const refusing = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new APICallError({ message: 'bad key sk-mock-secret', url: 'u', requestBodyValues: {}, statusCode: 401 });
      },
    });
    const error = await client(refusing)
      .generate({ system: 's', prompt: 'p', repeat: 0 })
      .catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).message).not.toContain('sk-mock-secret');
  });

  it('rethrows the caller abort instead of reporting a timeout', async () => {
    const slow = new MockLanguageModelV3({
      doGenerate: (options) =>
        new Promise((_resolve, reject) => {
          options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason));
        }),
    });
    const controller = new AbortController();
    const pending = client(slow).generate({ system: 's', prompt: 'p', repeat: 0, signal: controller.signal });
    controller.abort(new Error('user stopped'));
    await expect(pending).rejects.toThrow('user stopped');
  });
});
