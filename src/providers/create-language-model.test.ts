import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { redactSecrets, resolveLanguageModel } from './create-language-model.ts';
import { createLlmClient } from './llm-client.ts';
import { parseModelSpec } from './model-spec.ts';

const spec = parseModelSpec;

describe('resolveLanguageModel', () => {
  it('reads OPENAI_API_KEY and ANTHROPIC_API_KEY, and keeps the key out of everything but secrets', () => {
    const openai = resolveLanguageModel(spec('openai:gpt-4.1-mini'), { env: { OPENAI_API_KEY: 'sk-openai-secret' } });
    expect(openai.host).toBe('api.openai.com');
    expect(openai.baseURL).toBe('https://api.openai.com/v1');
    expect(openai.secrets).toEqual(['sk-openai-secret']);
    expect(openai.structuredOutput).toBe('schema');
    const anthropic = resolveLanguageModel(spec('anthropic:claude-sonnet-4-5'), {
      env: { ANTHROPIC_API_KEY: 'sk-ant-secret' },
    });
    expect(anthropic.host).toBe('api.anthropic.com');
    const { name, baseURL, host, providerOptions, structuredOutput } = anthropic;
    expect(JSON.stringify({ name, baseURL, host, providerOptions, structuredOutput })).not.toContain('sk-ant-secret');
  });

  it('refuses a missing key with an InputError that names the variable', () => {
    expect(() => resolveLanguageModel(spec('openai:gpt-4.1-mini'), { env: {} })).toThrow(InputError);
    expect(() => resolveLanguageModel(spec('openai:gpt-4.1-mini'), { env: { OPENAI_API_KEY: '  ' } })).toThrow(
      /OPENAI_API_KEY/,
    );
    expect(() => resolveLanguageModel(spec('anthropic:claude-haiku-4-5'), { env: {} })).toThrow(/ANTHROPIC_API_KEY/);
    expect(() =>
      resolveLanguageModel(spec('openai-compatible:qwen'), {
        baseURL: 'http://127.0.0.1:8080/v1',
        apiKeyEnv: 'VLLM_KEY',
        env: {},
      }),
    ).toThrow(/VLLM_KEY/);
  });

  it('with requireKey false, resolves a model without its key and keeps the error for a call; the field is named', async () => {
    const resolved = resolveLanguageModel(spec('openai:gpt-4.1-mini'), {
      env: {},
      field: 'proposer.model',
      requireKey: false,
      file: 'kloop.yaml',
    });
    expect(resolved.host).toBe('api.openai.com');
    expect(resolved.secrets).toEqual([]);
    expect(resolved.missingKey).toBeInstanceOf(InputError);
    expect(resolved.missingKey).toMatchObject({ code: 'input.api-key', field: 'proposer.model', file: 'kloop.yaml' });
    expect(() => resolveLanguageModel(spec('openai:gpt-4.1-mini'), { env: {}, field: 'proposer.model' })).toThrow(
      expect.objectContaining({ field: 'proposer.model', message: expect.stringContaining('OPENAI_API_KEY') }),
    );
    // A call on such a model fails with that error, and no request goes out.
    let requests = 0;
    const offline = resolveLanguageModel(spec('openai:gpt-4.1-mini'), {
      env: {},
      requireKey: false,
      fetch: async () => {
        requests += 1;
        return new Response('{}');
      },
    });
    const client = createLlmClient({ resolved: offline });
    await expect(client.generate({ system: 's', prompt: 'u', repeat: 0 })).rejects.toBe(offline.missingKey);
    expect(requests).toBe(0);
    expect(
      resolveLanguageModel(spec('openai:gpt-4.1-mini'), { env: { OPENAI_API_KEY: 'sk-1' }, requireKey: false })
        .missingKey,
    ).toBeUndefined();
  });

  it("takes the base URL as given, else the provider's variable, else its default; a proposer's missing URL names proposer.baseURL", () => {
    const env = {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1/',
      OLLAMA_HOST: '127.0.0.1:11500',
    };
    expect(resolveLanguageModel(parseModelSpec('openai:gpt-4.1-mini'), { env }).baseURL).toBe(
      'http://127.0.0.1:8080/v1',
    );
    expect(
      resolveLanguageModel(parseModelSpec('openai:gpt-4.1-mini'), { env, baseURL: 'http://127.0.0.1:9000/v1' }).baseURL,
    ).toBe('http://127.0.0.1:9000/v1');
    expect(
      resolveLanguageModel(parseModelSpec('openai:gpt-4.1-mini'), { env: { OPENAI_API_KEY: 'sk-test' } }).baseURL,
    ).toBe('https://api.openai.com/v1');
    expect(resolveLanguageModel(parseModelSpec('ollama:llama3.1'), { env })).toMatchObject({
      baseURL: 'http://127.0.0.1:11500/api',
      host: '127.0.0.1:11500',
    });
    let error: InputError | undefined;
    try {
      resolveLanguageModel(parseModelSpec('openai-compatible:local'), { env, file: 'kloop.yaml', section: 'proposer' });
    } catch (caught) {
      error = caught as InputError;
    }
    expect(error).toMatchObject({ field: 'proposer.baseURL', code: 'input.base-url' });
    expect(error?.detail).toBe(
      "openai-compatible:local needs the server's base URL: set proposer.baseURL or --base-url (e.g. http://127.0.0.1:8080/v1 for a llama.cpp server)",
    );
  });

  it('needs no key for openai-compatible and ollama unless one is configured', () => {
    const local = resolveLanguageModel(spec('openai-compatible:qwen2.5-7b'), {
      baseURL: 'http://127.0.0.1:8080/v1/',
      env: {},
    });
    expect(local.secrets).toEqual([]);
    expect(local.baseURL).toBe('http://127.0.0.1:8080/v1');
    expect(local.host).toBe('127.0.0.1:8080');
    expect(local.structuredOutput).toBe('auto');
    const keyed = resolveLanguageModel(spec('openai-compatible:qwen2.5-7b'), {
      baseURL: 'http://gpu:8000/v1',
      apiKeyEnv: 'VLLM_KEY',
      env: { VLLM_KEY: 'k-123456' },
    });
    expect(keyed.secrets).toEqual(['k-123456']);
    const ollama = resolveLanguageModel(spec('ollama:llama3.1'), { env: {} });
    expect(ollama.baseURL).toBe('http://127.0.0.1:11434/api');
    expect(resolveLanguageModel(spec('ollama:llama3.1'), { baseURL: 'http://gpu-box:11434/', env: {} }).baseURL).toBe(
      'http://gpu-box:11434/api',
    );
  });

  it('requires a base URL for openai-compatible and refuses bad or credentialed URLs', () => {
    expect(() => resolveLanguageModel(spec('openai-compatible:qwen'), { env: {} })).toThrow(/base URL/);
    expect(() => resolveLanguageModel(spec('ollama:llama3.1'), { baseURL: 'not a url', env: {} })).toThrow(/not a URL/);
    expect(() => resolveLanguageModel(spec('ollama:llama3.1'), { baseURL: 'ftp://host/api', env: {} })).toThrow(/http/);
    expect(() =>
      resolveLanguageModel(spec('ollama:llama3.1'), { baseURL: 'http://user:pw@host/api', env: {} }),
    ).toThrow(/credentials/);
  });
});

describe('redactSecrets', () => {
  it('replaces every occurrence of each secret', () => {
    expect(redactSecrets('Bearer sk-abc123 and sk-abc123', ['sk-abc123'])).toBe('Bearer [redacted] and [redacted]');
    expect(redactSecrets('abc', ['ab'])).toBe('abc');
  });
});
