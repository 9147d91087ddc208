/**
 * The generic LLM executor over real HTTP, for a classification task: the AI
 * SDK provider code path against a scripted OpenAI chat-completions server
 * on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ExecutionRequest, ExecutionResult } from '../src/executors/executor.ts';
import { createLlmExecutor } from '../src/executors/llm/llm-executor.ts';
import {
  createLlmClient,
  createResponseCache,
  parseModelSpec,
  resolveLanguageModel,
  type LlmClientOptions,
} from '../src/providers/index.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createClassificationTask } from '../src/tasks/classification/classification-task.ts';
import { inputText } from '../src/tasks/task.ts';
import type { TextInput } from '../src/tasks/text-input.ts';
import {
  loopbackFetch,
  startFakeOpenAiServer,
  type ChatRequest,
  type FakeResponse,
  type FakeServer,
} from './llm-fake-openai-server.ts';

const LABELS = ['billing', 'technical', 'account', 'shipping', 'returns', 'security'];
const TASK = createClassificationTask({ labels: LABELS, fieldOrder: ['subject', 'body'] });
const PROMPT = '# Ticket routing\n\n## Queues\nbilling: charges, invoices, refunds. technical: the app misbehaves.\n';
const TICKET: TextInput = { subject: 'Invoice', body: 'I was charged twice this month', customer: 'ACME' };

const servers: FakeServer[] = [];
const databases: StudyDatabase[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const db of databases.splice(0)) await db.destroy();
});

async function server(respond: (request: ChatRequest) => FakeResponse | Promise<FakeResponse>): Promise<FakeServer> {
  const started = await startFakeOpenAiServer(respond);
  servers.push(started);
  return started;
}

function clientFor(fake: FakeServer, overrides: Partial<LlmClientOptions> = {}, model = 'openai:gpt-4.1-mini') {
  const resolved = resolveLanguageModel(parseModelSpec(model), {
    baseURL: fake.baseURL,
    env: { OPENAI_API_KEY: 'sk-test' },
    fetch: loopbackFetch,
  });
  return createLlmClient({
    resolved,
    temperature: 0,
    maxOutputTokens: 256,
    timeoutMs: 5000,
    sleep: async () => undefined,
    random: () => 0.5,
    ...overrides,
  });
}

function request(input: TextInput = TICKET, artifact = PROMPT, repeat = 0): ExecutionRequest {
  return { input, text: inputText(TASK, input), artifact, repeat };
}

function invalid(result: ExecutionResult): Extract<ExecutionResult, { ok: false }> {
  if (result.ok) throw new Error(`expected an invalid output, got ${JSON.stringify(result.output)}`);
  return result;
}

describe('generic LLM executor over HTTP (loopback OpenAI chat completions), classification task', () => {
  it('sends the prompt plus the contract, the ticket text and the label schema; reads a valid answer', async () => {
    const fake = await server(() => ({ content: '{"label":"billing"}' }));
    const executor = createLlmExecutor({ client: clientFor(fake), task: TASK });
    const result = await executor.execute(request());
    expect(result).toMatchObject({
      ok: true,
      output: { label: 'billing' },
      raw: '{"label":"billing"}',
      usage: { inputTokens: 100, outputTokens: 50 },
      cached: false,
    });
    const chat = fake.requests[0]!;
    expect(chat.system).toBe(`${PROMPT.trimEnd()}\n\n${TASK.outputContract!()}`);
    expect(chat.system).toContain(`whose label is exactly one of: ${LABELS.join(', ')}.`);
    expect(chat.user).toBe('subject: Invoice\nbody: I was charged twice this month\ncustomer: ACME');
    expect(chat.body.response_format?.type).toBe('json_schema');
    expect(chat.body.response_format?.json_schema?.name).toBe('output');
    expect(JSON.stringify(chat.body.response_format?.json_schema?.schema)).toContain(JSON.stringify(LABELS));
    expect(chat.body.temperature).toBe(0);
    expect(chat.body.seed).toBe(0);
  });

  it('returns a label outside the set as invalid "schema", with no output to score', async () => {
    const fake = await server(() => ({ content: '{"label":"sales"}' }));
    const result = invalid(await createLlmExecutor({ client: clientFor(fake), task: TASK }).execute(request()));
    expect(result.reason).toBe('schema');
    expect(result.message).toBe(
      `the answer does not fit the output schema: label: Invalid option: expected one of ${LABELS.map((label) => `"${label}"`).join('|')}`,
    );
    expect(result.raw).toBe('{"label":"sales"}');
    expect('output' in result).toBe(false);
    expect(result.transient).toBeUndefined();
  });

  it('reads fenced JSON and an answer after a think block; empty and cut-off answers are invalid', async () => {
    const script: FakeResponse[] = [
      { content: 'Here is the routing:\n```json\n{"label": "technical"}\n```\nLet me know.' },
      { content: '<think>The customer was charged twice: billing.</think>\n{"label":"billing"}' },
      { content: '' },
      { content: '{"label":"bil', finishReason: 'length' },
      { content: 'It is a billing ticket.' },
    ];
    const fake = await server((chat) => script[chat.index]!);
    const executor = createLlmExecutor({ client: clientFor(fake), task: TASK });
    const results: ExecutionResult[] = [];
    for (let index = 0; index < script.length; index += 1)
      results.push(await executor.execute(request(`ticket ${index}`)));
    expect(results[0]).toMatchObject({ ok: true, output: { label: 'technical' } });
    expect(results[1]).toMatchObject({ ok: true, output: { label: 'billing' } });
    expect(invalid(results[2]!)).toMatchObject({
      reason: 'empty',
      message: 'the answer is empty',
      usage: { inputTokens: 100 },
    });
    expect(invalid(results[3]!)).toMatchObject({ reason: 'truncated', raw: '{"label":"bil' });
    expect(invalid(results[4]!)).toMatchObject({ reason: 'unparsable', raw: 'It is a billing ticket.' });
  });

  it("fills placeholders from an object input: the filled template is the user message, the contract the system's", async () => {
    const fake = await server(() => ({ content: '{"label":"billing"}' }));
    const executor = createLlmExecutor({ client: clientFor(fake), task: TASK });
    const template = 'Route this ticket from {{customer}}.\nSubject: {{ input.subject }}\nBody: {{body}}';
    expect((await executor.execute(request(TICKET, template))).ok).toBe(true);
    const chat = fake.requests[0]!;
    expect(chat.user).toBe('Route this ticket from ACME.\nSubject: Invoice\nBody: I was charged twice this month');
    expect(chat.system).toBe(TASK.outputContract!());

    const missing = invalid(await executor.execute(request({ subject: 'Login', body: 'cannot log in' }, template)));
    expect(missing.reason).toBe('error');
    expect(missing.message).toContain('has no field "customer" (its fields: body, subject)');
    expect(fake.calls).toBe(1);
  });

  it('serves equal messages from the response cache; another repeat is a fresh sample', async () => {
    const fake = await server(() => ({ content: '{"label":"billing"}' }));
    const db = await openDatabase(':memory:');
    databases.push(db);
    const executor = createLlmExecutor({
      client: clientFor(fake, { cache: createResponseCache(() => db) }),
      task: TASK,
    });
    await executor.execute(request());
    const again = await executor.execute(request());
    expect(again).toMatchObject({
      ok: true,
      output: { label: 'billing' },
      cached: true,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    expect(fake.calls).toBe(1);
    await executor.execute(request(TICKET, PROMPT, 1));
    expect(fake.calls).toBe(2);
  });

  it('falls back to JSON asked for in the prompt when an openai-compatible server rejects the response format', async () => {
    const fake = await server((chat) =>
      chat.body.response_format !== undefined
        ? { status: 400, body: { error: { message: "response_format 'json_schema' is not supported by this server" } } }
        : { content: '<think>charged twice</think>\n```json\n{"label":"billing"}\n```' },
    );
    const resolved = resolveLanguageModel(parseModelSpec('openai-compatible:qwen2.5-7b'), {
      baseURL: fake.baseURL,
      env: {},
      fetch: loopbackFetch,
    });
    const executor = createLlmExecutor({
      client: createLlmClient({ resolved, temperature: 0, maxOutputTokens: 256 }),
      task: TASK,
    });
    expect(await executor.execute(request())).toMatchObject({ ok: true, output: { label: 'billing' } });
    expect(fake.calls).toBe(2);
    expect(fake.requests[1]!.system).toContain('"enum"');
  });
});
