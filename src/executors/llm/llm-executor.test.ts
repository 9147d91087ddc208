import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LlmClient, LlmRequest, LlmResponse, LlmSettings } from '../../providers/llm-client.ts';
import { createClassificationTask } from '../../tasks/classification/classification-task.ts';
import { jsonOutputContract, jsonSchemaOf } from './json-output-contract.ts';
import { inputText } from '../../tasks/task.ts';
import type { ExecutionRequest } from '../executor.ts';
import { createLlmExecutor } from './llm-executor.ts';
import { DEFAULT_CONTRACT_LINE, llmOutputFormat } from './output-format.ts';

const USAGE = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };
const TASK = createClassificationTask({ labels: ['billing', 'technical', 'account'], fieldOrder: ['subject', 'body'] });
const CONTRACT = TASK.outputContract!();

function fakeClient(
  temperature: number | undefined,
  respond: (request: LlmRequest) => LlmResponse = () => answer('{"label":"billing"}'),
) {
  const requests: LlmRequest[] = [];
  const settings: LlmSettings = {
    name: 'ollama:llama3.1',
    provider: 'ollama',
    modelId: 'llama3.1',
    baseURL: 'http://127.0.0.1:11434/api',
    host: '127.0.0.1:11434',
    ...(temperature !== undefined ? { temperature } : {}),
    maxOutputTokens: 512,
    timeoutMs: 60_000,
    structuredOutput: 'schema',
    price: { price: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }, known: true },
  };
  const client: LlmClient = {
    id: `ollama:llama3.1 host=127.0.0.1:11434 temperature=${temperature ?? 'default'} maxOutputTokens=512 output=schema`,
    settings,
    generate: async (request) => {
      requests.push(request);
      return respond(request);
    },
  };
  return { client, requests };
}

function answer(text: string, finishReason = 'stop'): LlmResponse {
  return { ok: true, text, finishReason, usage: USAGE, cached: false, latencyMs: 4 };
}

function ticket(
  artifact: string,
  input: unknown = { subject: 'Invoice', body: 'I was charged twice' },
  repeat = 0,
): ExecutionRequest {
  return { input, text: inputText(TASK, input as never), artifact, repeat };
}

describe('createLlmExecutor', () => {
  it('without placeholders: the prompt and the contract are the system message, the input text the user message', async () => {
    const { client, requests } = fakeClient(0);
    const executor = createLlmExecutor({ client, task: TASK });
    const result = await executor.execute(ticket('## Task\nRoute the ticket.\n\n', undefined, 3));
    expect(result).toEqual({
      ok: true,
      output: { label: 'billing' },
      raw: '{"label":"billing"}',
      usage: USAGE,
      latencyMs: 4,
      cached: false,
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toEqual({
      system: `## Task\nRoute the ticket.\n\n${CONTRACT}`,
      prompt: 'subject: Invoice\nbody: I was charged twice',
      schema: { name: 'output', jsonSchema: jsonSchemaOf(TASK.schemas.output) },
      repeat: 3,
    });
  });

  it('with placeholders: the filled template is the user message, the contract the system message', async () => {
    const { client, requests } = fakeClient(0);
    const executor = createLlmExecutor({ client, task: TASK });
    await executor.execute(ticket('Subject: {{subject}}\nBody: {{ input.body }}\n\nWhole ticket:\n{{input}}'));
    expect(requests[0]!.system).toBe(CONTRACT);
    expect(requests[0]!.prompt).toBe(
      'Subject: Invoice\nBody: I was charged twice\n\nWhole ticket:\nsubject: Invoice\nbody: I was charged twice',
    );
  });

  it('returns a template that cannot be filled as invalid "error", without calling the model', async () => {
    const { client, requests } = fakeClient(0);
    const executor = createLlmExecutor({ client, task: TASK });
    const result = await executor.execute(ticket('Customer: {{customer}}'));
    expect(result).toEqual({
      ok: false,
      reason: 'error',
      message:
        'the prompt template cannot be filled for this example: line 1: the prompt names {{customer}}, but this example\'s input has no field "customer" (its fields: body, subject)',
    });
    expect(requests).toHaveLength(0);
  });

  it('checks the answer with the task output schema: a label outside the set is invalid "schema"', async () => {
    const { client } = fakeClient(0, () => answer('{"label":"sales"}'));
    const result = await createLlmExecutor({ client, task: TASK }).execute(ticket('Route.'));
    expect(result).toMatchObject({ ok: false, reason: 'schema', raw: '{"label":"sales"}', usage: USAGE, latencyMs: 4 });
    expect(!result.ok && result.message).toMatch(/^the answer does not fit the output schema: label: /);
  });

  it('passes failed calls through with usage and the transient flag', async () => {
    const { client } = fakeClient(0, () => ({
      ok: false,
      reason: 'timeout',
      message: 'slow',
      usage: USAGE,
      latencyMs: 9,
      transient: true,
    }));
    expect(await createLlmExecutor({ client, task: TASK }).execute(ticket('Route.'))).toEqual({
      ok: false,
      reason: 'timeout',
      message: 'slow',
      usage: USAGE,
      latencyMs: 9,
      transient: true,
    });
  });

  it('has an id with name, contract hash and client; deterministic only at temperature 0 when told', () => {
    const executor = createLlmExecutor({ client: fakeClient(0).client, task: TASK, deterministic: true });
    expect(executor.id).toBe(
      `llm@1 contract=${llmOutputFormat(TASK).contractHash} ollama:llama3.1 host=127.0.0.1:11434 temperature=0 maxOutputTokens=512 output=schema`,
    );
    expect(executor.deterministic).toBe(true);
    expect(createLlmExecutor({ client: fakeClient(0).client, task: TASK }).deterministic).toBe(false);
    expect(createLlmExecutor({ client: fakeClient(0.7).client, task: TASK, deterministic: true }).deterministic).toBe(
      false,
    );
    expect(
      createLlmExecutor({ client: fakeClient(undefined).client, task: TASK, deterministic: true }).deterministic,
    ).toBe(false);
    const other = createClassificationTask({ labels: ['billing', 'technical'] });
    expect(createLlmExecutor({ client: fakeClient(0).client, task: other }).id).not.toBe(
      createLlmExecutor({ client: fakeClient(0).client, task: TASK }).id,
    );
    expect(createLlmExecutor({ client: fakeClient(0).client, task: TASK, name: 'llm-ticket@2' }).id).toMatch(
      /^llm-ticket@2 contract=/,
    );
  });
});

describe('llmOutputFormat', () => {
  it("uses the task's contract, or its output schema as JSON Schema", () => {
    const output = z.object({ total: z.number() });
    const format = llmOutputFormat({ schemas: { output } });
    expect(format.contract).toBe(jsonOutputContract(jsonSchemaOf(output), [DEFAULT_CONTRACT_LINE]));
    expect(format.contractHash).toMatch(/^[0-9a-f]{8}$/);
    expect(format.answerSchema).toEqual({ name: 'output', jsonSchema: jsonSchemaOf(output) });
    expect(
      llmOutputFormat({ schemas: { output }, outputContract: () => 'Answer {"total": n}.' }, 'invoice').contract,
    ).toBe('Answer {"total": n}.');
    expect(llmOutputFormat({ schemas: { output } }, 'invoice').answerSchema?.name).toBe('invoice');
  });

  it('sends no structured-output schema for an output that is not an object', async () => {
    expect(llmOutputFormat({ schemas: { output: z.array(z.string()) } }).answerSchema).toBeUndefined();
    expect(llmOutputFormat({ schemas: { output: z.unknown() } }).answerSchema).toBeUndefined();
    const { client, requests } = fakeClient(0, () => answer('["a"]'));
    const result = await createLlmExecutor({ client, task: { schemas: { output: z.array(z.string()) } } }).execute({
      input: 'x',
      text: 'x',
      artifact: 'List.',
      repeat: 0,
    });
    expect(result.ok && result.output).toEqual(['a']);
    expect(requests[0]!.schema).toBeUndefined();
  });

  it('refuses a bad schema name, and an output schema without JSON Schema when there is no contract', () => {
    expect(() => llmOutputFormat(TASK, 'has space')).toThrow(RangeError);
    const unwritable = { schemas: { output: z.custom<string>((value) => typeof value === 'string') } };
    expect(() => llmOutputFormat(unwritable)).toThrow(/give the task an outputContract\(\)/);
    expect(llmOutputFormat({ ...unwritable, outputContract: () => 'A string.' })).toMatchObject({
      contract: 'A string.',
    });
  });
});
