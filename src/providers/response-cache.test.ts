import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { createResponseCache, responseCacheKey, type CacheKeyInput } from './response-cache.ts';

const BASE: CacheKeyInput = {
  provider: 'openai',
  model: 'gpt-4.1-mini',
  baseURL: 'https://api.openai.com/v1',
  parameters: { temperature: 0, maxOutputTokens: 2048, structuredOutput: 'schema' },
  system: 'prompt',
  prompt: 'goal',
  schema: { type: 'object' },
  repeat: 0,
};

const opened: StudyDatabase[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

describe('responseCacheKey', () => {
  it('is a stable SHA-256 that changes with everything that changes the answer', () => {
    const key = responseCacheKey(BASE);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(
      responseCacheKey({ ...BASE, parameters: { structuredOutput: 'schema', maxOutputTokens: 2048, temperature: 0 } }),
    ).toBe(key);
    const variants: CacheKeyInput[] = [
      { ...BASE, provider: 'openai-compatible' },
      { ...BASE, model: 'gpt-4.1' },
      { ...BASE, baseURL: 'http://127.0.0.1:8080/v1' },
      { ...BASE, parameters: { ...BASE.parameters, temperature: 0.7 } },
      { ...BASE, parameters: { ...BASE.parameters, maxOutputTokens: 1024 } },
      { ...BASE, parameters: { ...BASE.parameters, structuredOutput: 'prompt' } },
      { ...BASE, system: 'prompt!' },
      { ...BASE, prompt: 'goal!' },
      { ...BASE, schema: { type: 'array' } },
      { ...BASE, repeat: 1 },
    ];
    const keys = new Set(variants.map(responseCacheKey));
    expect(keys.size).toBe(variants.length);
    expect(keys.has(key)).toBe(false);
  });
});

describe('createResponseCache', () => {
  it('stores and reads answers in response_cache, first writer wins', async () => {
    const db = await openDatabase(':memory:');
    opened.push(db);
    const cache = createResponseCache(() => db);
    expect(await cache.get('k')).toBeUndefined();
    await cache.put('k', 'openai:gpt-4.1-mini', { text: '{}', finishReason: 'stop', inputTokens: 3, outputTokens: 1 });
    await cache.put('k', 'openai:gpt-4.1-mini', {
      text: 'other',
      finishReason: 'stop',
      inputTokens: 3,
      outputTokens: 1,
    });
    expect(await cache.get('k')).toEqual({ text: '{}', finishReason: 'stop', inputTokens: 3, outputTokens: 1 });
  });

  it('a re-measurement (replace: --no-cache) replaces the stored answer', async () => {
    const db = await openDatabase(':memory:');
    opened.push(db);
    const cache = createResponseCache(() => db);
    await cache.put('k', 'm', { text: '{"label":"billing"}', finishReason: 'stop', inputTokens: 3, outputTokens: 1 });
    await cache.put(
      'k',
      'm',
      { text: '{"label":"shipping"}', finishReason: 'stop', inputTokens: 4, outputTokens: 2 },
      true,
    );
    expect(await cache.get('k')).toEqual({
      text: '{"label":"shipping"}',
      finishReason: 'stop',
      inputTokens: 4,
      outputTokens: 2,
    });
  });

  it('does nothing without a database', async () => {
    const cache = createResponseCache(() => undefined);
    await cache.put('k', 'm', { text: 'x', finishReason: 'stop', inputTokens: 0, outputTokens: 0 });
    expect(await cache.get('k')).toBeUndefined();
  });
});
