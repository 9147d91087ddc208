import { describe, expect, it } from 'vitest';
import type { LlmClient, LlmRequest, LlmResponse, LlmSettings } from '../../../providers/llm-client.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createIntentLlmExecutor, createLlmIntentExecutor } from './llm-executor.ts';
import {
  buildExecutorSystemPrompt,
  INTENT_ANSWER_SCHEMA,
  OUTPUT_CONTRACT,
  OUTPUT_CONTRACT_HASH,
} from './output-contract.ts';

const USAGE = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

function fakeClient(
  temperature: number | undefined,
  respond: (request: LlmRequest) => LlmResponse,
): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  const settings: LlmSettings = {
    name: 'ollama:llama3.1',
    provider: 'ollama',
    modelId: 'llama3.1',
    baseURL: 'http://127.0.0.1:11434/api',
    host: '127.0.0.1:11434',
    ...(temperature !== undefined ? { temperature } : {}),
    maxOutputTokens: 2048,
    timeoutMs: 60_000,
    structuredOutput: 'schema',
    price: { price: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }, known: true },
  };
  return {
    id: `ollama:llama3.1 host=127.0.0.1:11434 temperature=${temperature ?? 'default'} maxOutputTokens=2048 output=schema`,
    settings,
    requests,
    generate: async (request) => {
      requests.push(request);
      return respond(request);
    },
  };
}

const VALID = { appType: 'crm', entities: [], relations: [], behaviors: [], projections: [] };

describe('createLlmIntentExecutor', () => {
  it('sends the artifact plus the fixed contract as system message and the goal as user message', async () => {
    const client = fakeClient(0, () => ({
      ok: true,
      text: JSON.stringify(VALID),
      finishReason: 'stop',
      usage: USAGE,
      cached: false,
      latencyMs: 3,
    }));
    const executor = createLlmIntentExecutor({ client });
    const result = await executor.execute({
      input: 'Sales reps track deals.',
      text: 'Sales reps track deals.',
      artifact: '## Task\nExtract.\n',
      repeat: 2,
    });
    expect(result).toMatchObject({ ok: true, output: VALID, usage: USAGE, latencyMs: 3, cached: false });
    const request = client.requests[0]!;
    expect(request.system).toBe(`## Task\nExtract.\n\n${OUTPUT_CONTRACT}`);
    expect(request.prompt).toBe('Sales reps track deals.');
    expect(request.repeat).toBe(2);
    expect(request.schema?.name).toBe('intent');
  });

  it('has an id with provider, model, host, temperature and max tokens; deterministic only at temperature 0 when told', () => {
    const respond = (): LlmResponse => ({
      ok: false,
      reason: 'error',
      message: 'x',
      usage: USAGE,
      latencyMs: 0,
      transient: false,
    });
    const executor = createLlmIntentExecutor({ client: fakeClient(0, respond), deterministic: true });
    expect(executor.id).toMatch(
      /^llm-intent@1 contract=[0-9a-f]{8} ollama:llama3\.1 host=127\.0\.0\.1:11434 temperature=0 maxOutputTokens=2048/,
    );
    expect(executor.deterministic).toBe(true);
    expect(createLlmIntentExecutor({ client: fakeClient(0, respond) }).deterministic).toBe(false);
    expect(createLlmIntentExecutor({ client: fakeClient(0.7, respond), deterministic: true }).deterministic).toBe(
      false,
    );
    expect(createLlmIntentExecutor({ client: fakeClient(undefined, respond), deterministic: true }).deterministic).toBe(
      false,
    );
  });

  it('returns failed calls and invalid answers as invalid outputs with usage', async () => {
    const timeout = createLlmIntentExecutor({
      client: fakeClient(0, () => ({
        ok: false,
        reason: 'timeout',
        message: 'slow',
        usage: USAGE,
        latencyMs: 9,
        transient: true,
      })),
    });
    expect(await timeout.execute({ input: 'g', text: 'g', artifact: 'a', repeat: 0 })).toMatchObject({
      ok: false,
      reason: 'timeout',
      usage: USAGE,
      transient: true,
    });
    const truncated = createLlmIntentExecutor({
      client: fakeClient(0, () => ({
        ok: true,
        text: '{"a',
        finishReason: 'length',
        usage: USAGE,
        cached: false,
        latencyMs: 1,
      })),
    });
    expect(await truncated.execute({ input: 'g', text: 'g', artifact: 'a', repeat: 0 })).toMatchObject({
      ok: false,
      reason: 'truncated',
      raw: '{"a',
      usage: USAGE,
    });
  });

  it('sends the requests of the executor it replaced for the example prompt (same cache keys): buildExecutorSystemPrompt, the goal, INTENT_ANSWER_SCHEMA', async () => {
    const prompt = readFileSync(path.resolve(import.meta.dirname, '../../../../examples/intent-llm/prompt.md'), 'utf8');
    const client = fakeClient(0, () => ({
      ok: true,
      text: JSON.stringify(VALID),
      finishReason: 'stop',
      usage: USAGE,
      cached: true,
      latencyMs: 0,
    }));
    const executor = createLlmIntentExecutor({ client });
    expect(executor.id).toBe(`llm-intent@1 contract=${OUTPUT_CONTRACT_HASH} ${client.id}`);
    const result = await executor.execute({
      input: 'A clinic books patients.',
      text: 'A clinic books patients.',
      artifact: prompt,
      repeat: 1,
      exampleId: 'clinic',
    });
    expect(result).toEqual({
      ok: true,
      output: VALID,
      raw: JSON.stringify(VALID),
      usage: USAGE,
      latencyMs: 0,
      cached: true,
    });
    expect(client.requests).toHaveLength(1);
    // Byte for byte: the request body (and so the response cache key) is the one stored answers were keyed by.
    expect(JSON.stringify(client.requests[0])).toBe(
      JSON.stringify({
        system: buildExecutorSystemPrompt(prompt),
        prompt: 'A clinic books patients.',
        schema: INTENT_ANSWER_SCHEMA,
        repeat: 1,
      }),
    );
  });

  it('keeps the intent messages for off-schema answers', async () => {
    const client = fakeClient(0, () => ({
      ok: true,
      text: JSON.stringify({ ...VALID, appType: 'spaceship' }),
      finishReason: 'stop',
      usage: USAGE,
      cached: false,
      latencyMs: 1,
    }));
    const result = await createLlmIntentExecutor({ client }).execute({
      input: 'g',
      text: 'g',
      artifact: 'a',
      repeat: 0,
    });
    expect(result).toMatchObject({
      ok: false,
      reason: 'schema',
      message: expect.stringMatching(/^the answer does not fit the intent schema: appType: /),
    });
  });

  it('createIntentLlmExecutor is the same executor on the task-agnostic contract', async () => {
    const client = fakeClient(0, () => ({
      ok: true,
      text: JSON.stringify(VALID),
      finishReason: 'stop',
      usage: USAGE,
      cached: false,
      latencyMs: 2,
    }));
    const executor = createIntentLlmExecutor({ client });
    expect(executor.id).toBe(createLlmIntentExecutor({ client }).id);
    const result = await executor.execute({
      input: 'Sales reps track deals.',
      text: 'Sales reps track deals.',
      artifact: '## Task\nExtract.\n',
      repeat: 0,
    });
    expect(result).toEqual({
      ok: true,
      output: VALID,
      raw: JSON.stringify(VALID),
      usage: USAGE,
      latencyMs: 2,
      cached: false,
    });
    expect(client.requests[0]!.system).toBe(`## Task\nExtract.\n\n${OUTPUT_CONTRACT}`);
  });
});
