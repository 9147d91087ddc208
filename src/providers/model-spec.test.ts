import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { baseURLFromEnvironment, formatModelSpec, parseModelSpec } from './model-spec.ts';

describe('parseModelSpec', () => {
  it('reads provider:model, keeping colons inside the model id', () => {
    expect(parseModelSpec('openai:gpt-4.1-mini')).toEqual({ provider: 'openai', modelId: 'gpt-4.1-mini' });
    expect(parseModelSpec(' anthropic:claude-sonnet-4-5 ')).toEqual({
      provider: 'anthropic',
      modelId: 'claude-sonnet-4-5',
    });
    expect(parseModelSpec('openai-compatible:qwen2.5-7b')).toEqual({
      provider: 'openai-compatible',
      modelId: 'qwen2.5-7b',
    });
    expect(parseModelSpec('ollama:llama3.1:8b')).toEqual({ provider: 'ollama', modelId: 'llama3.1:8b' });
    expect(formatModelSpec(parseModelSpec('OLLAMA:llama3.1'))).toBe('ollama:llama3.1');
  });

  it('refuses a missing or unknown provider and an empty model, naming the file and field', () => {
    expect(() => parseModelSpec('gpt-4.1-mini')).toThrow(/provider:model/);
    expect(() => parseModelSpec('mistral:large')).toThrow(/unknown provider "mistral"/);
    expect(() => parseModelSpec('openai:')).toThrow(/names no model/);
    const error = (() => {
      try {
        parseModelSpec('nope', { file: 'kloop.yaml', field: 'executor.model' });
      } catch (caught) {
        return caught as InputError;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InputError);
    expect(error?.message).toMatch(/^kloop\.yaml: executor\.model: /);
  });
});

describe('baseURLFromEnvironment', () => {
  it("reads each provider's conventional variable; OLLAMA_HOST may be host:port; openai-compatible has none", () => {
    const env = {
      OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1',
      ANTHROPIC_BASE_URL: ' https://gateway.test/anthropic ',
      OLLAMA_HOST: '10.0.0.5:11434',
      OPENAI_API_KEY: 'sk-x',
    };
    expect(baseURLFromEnvironment('openai', env)).toEqual({
      url: 'http://127.0.0.1:8080/v1',
      variable: 'OPENAI_BASE_URL',
    });
    expect(baseURLFromEnvironment('anthropic', env)).toEqual({
      url: 'https://gateway.test/anthropic',
      variable: 'ANTHROPIC_BASE_URL',
    });
    expect(baseURLFromEnvironment('ollama', env)).toEqual({ url: 'http://10.0.0.5:11434', variable: 'OLLAMA_HOST' });
    expect(baseURLFromEnvironment('ollama', { OLLAMA_HOST: 'https://ollama.test' })).toEqual({
      url: 'https://ollama.test',
      variable: 'OLLAMA_HOST',
    });
    expect(baseURLFromEnvironment('openai-compatible', env)).toBeUndefined();
    expect(baseURLFromEnvironment('openai', { OPENAI_BASE_URL: '  ' })).toBeUndefined();
  });
});
