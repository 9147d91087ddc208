/**
 * The executor contract (`executor.ts`), run against every implementation:
 * one entry per executor in IMPLEMENTATIONS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LlmClient, LlmResponse } from '../providers/llm-client.ts';
import { createClassificationTask } from '../tasks/classification/classification-task.ts';
import { createIntentLlmExecutor } from '../tasks/intent/llm/llm-executor.ts';
import { createCommandExecutor } from './command/command-executor.ts';
import type { ExecutionRequest, ExecutionResult, Executor, InvalidReason } from './executor.ts';
import { createLlmExecutor } from './llm/llm-executor.ts';

const REASONS: readonly InvalidReason[] = ['empty', 'truncated', 'unparsable', 'schema', 'refused', 'timeout', 'error'];
const FIXTURES = path.join(import.meta.dirname, 'command', 'fixtures');
const artifactDirectory = mkdtempSync(path.join(tmpdir(), 'kloop-executor-contract-'));

afterAll(() => rmSync(artifactDirectory, { recursive: true, force: true }));

/** A client that answers `text` to every request, and honours an aborted signal as the real one does. */
function scriptedClient(text: string): LlmClient {
  return {
    id: 'openai:gpt-4.1-mini host=127.0.0.1 temperature=0 maxOutputTokens=256 output=schema',
    settings: {
      name: 'openai:gpt-4.1-mini',
      provider: 'openai',
      modelId: 'gpt-4.1-mini',
      baseURL: 'http://127.0.0.1/v1',
      host: '127.0.0.1',
      temperature: 0,
      maxOutputTokens: 256,
      timeoutMs: 1000,
      structuredOutput: 'schema',
      price: { price: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }, known: true },
    },
    generate: async (request): Promise<LlmResponse> => {
      if (request.signal?.aborted) throw request.signal.reason;
      return {
        ok: true,
        text,
        finishReason: 'stop',
        usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
        cached: false,
        latencyMs: 1,
      };
    },
  };
}

const CLASSIFICATION = createClassificationTask({ labels: ['billing', 'technical'] });
const TICKET = 'I was charged twice';
const GOAL = 'A clinic books patients with therapists.';
const INTENT = {
  appType: 'booking',
  entities: [{ name: 'Patient', role: 'party' }],
  relations: [],
  behaviors: [],
  projections: [],
};

interface Implementation {
  name: string;
  /** An executor whose answer is valid (`good`) or cannot be read (`bad`). */
  create(answer: 'good' | 'bad'): Executor;
  request: ExecutionRequest;
}

const IMPLEMENTATIONS: Implementation[] = [
  {
    name: 'command',
    create: (answer) =>
      createCommandExecutor({
        command: [process.execPath, answer === 'good' ? 'valid.mjs' : 'garbage.mjs'],
        cwd: FIXTURES,
        artifactDirectory,
      }),
    request: { input: TICKET, text: TICKET, artifact: '{}', repeat: 0 },
  },
  {
    name: 'llm (classification)',
    create: (answer) =>
      createLlmExecutor({
        client: scriptedClient(answer === 'good' ? '{"label":"billing"}' : 'billing, I think'),
        task: CLASSIFICATION,
      }),
    request: { input: TICKET, text: TICKET, artifact: 'Route the ticket.', repeat: 0 },
  },
  {
    name: 'llm (intent)',
    create: (answer) =>
      createIntentLlmExecutor({
        client: scriptedClient(answer === 'good' ? JSON.stringify(INTENT) : '{"appType":"spaceship"}'),
      }),
    request: { input: GOAL, text: GOAL, artifact: '## Task\nExtract the intent.\n', repeat: 0 },
  },
];

/** A result without its latency (the one member that may differ between equal executions). */
function comparable(result: ExecutionResult): Omit<ExecutionResult, 'latencyMs'> {
  const { latencyMs: _latency, ...rest } = result;
  return rest;
}

describe.each(IMPLEMENTATIONS)('executor contract: $name', (implementation) => {
  it('has a non-empty id, equal for equal settings, and a boolean deterministic', () => {
    const executor = implementation.create('good');
    expect(typeof executor.id).toBe('string');
    expect(executor.id.trim()).not.toBe('');
    expect(implementation.create('good').id).toBe(executor.id);
    expect(typeof executor.deterministic).toBe('boolean');
  });

  it('returns a valid answer as { ok: true, output }', async () => {
    const result = await implementation.create('good').execute(implementation.request);
    expect(result.ok).toBe(true);
    expect(result.ok && result.output).toBeDefined();
  });

  it('returns a bad answer as { ok: false } with a known reason and a message, never a throw', async () => {
    const result = await implementation.create('bad').execute(implementation.request);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(REASONS).toContain(result.reason);
    expect(result.message.trim()).not.toBe('');
    expect('output' in result).toBe(false);
  });

  it('answers the same whatever the example id', async () => {
    const executor = implementation.create('good');
    const first = await executor.execute({ ...implementation.request, exampleId: 'a' });
    const second = await executor.execute({ ...implementation.request, exampleId: 'b' });
    expect(comparable(second)).toEqual(comparable(first));
  });

  it('throws the reason of an aborted signal', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped');
    controller.abort(reason);
    await expect(
      implementation.create('good').execute({ ...implementation.request, signal: controller.signal }),
    ).rejects.toBe(reason);
  });
});
