/**
 * The LLM intent executor over real HTTP: the AI SDK provider code path
 * against a scripted OpenAI chat-completions server on 127.0.0.1.
 */
import { asIntentExamples } from '../src/corpus/intent-example.ts';
import { intentTask } from '../src/tasks/intent/intent-task.ts';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { readCorpusFile } from '../src/corpus/importers/public-format.ts';
import { InfrastructureError, InputError } from '../src/errors.ts';
import { createEvaluator } from '../src/evaluator/evaluator.ts';
import {
  BudgetExceededError,
  createAdaptiveLimiter,
  createLlmClient,
  createLlmIntentExecutor,
  createLlmStudyPlugins,
  createResponseCache,
  createUsageMeter,
  parseModelSpec,
  resolveLanguageModel,
  type LlmClientOptions,
} from '../src/providers-subpath.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase } from '../src/storage/database.ts';
import type { StudyConfig } from '../src/config/config.ts';
import type { Executor } from '../src/executors/executor.ts';
import type { ExpectedIntent, Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import { scoreExample } from '../src/tasks/intent/scorer.ts';
import { loopbackFetch, startFakeOpenAiServer, type FakeResponse, type FakeServer } from './llm-fake-openai-server.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const PLANTED_KEY = 'sk-planted-0123456789abcdef-SECRET';
const CORPUS_DIR = path.resolve(import.meta.dirname, '../examples/intent/corpus');
const PROMPT =
  '# Intent extraction\n\n## Task\nRead the description and extract the intent.\n\n## Roles\nA party acts; a commitment is a time-bound promise.\n';

function loadExamples(): IntentExample[] {
  const files = readdirSync(CORPUS_DIR).filter((name) => name.endsWith('.yaml') || name.endsWith('.jsonl'));
  return files.flatMap((name) => {
    const result = readCorpusFile(path.join(CORPUS_DIR, name));
    if (!result.ok) throw new Error(result.errors[0]?.message);
    return asIntentExamples(result.examples);
  });
}

/** The gold expectation written as an executor output. */
function goldIntent(expected: ExpectedIntent): Intent {
  return {
    appType: (acceptedAppTypes(expected)[0] ?? 'other') as Intent['appType'],
    entities: (expected.entities ?? []).map((entity) => ({ name: entity.name, role: entity.role ?? 'reference' })),
    relations: expected.relations ?? [],
    behaviors: expected.behaviors ?? [],
    projections: expected.projections ?? [],
  };
}

const servers: FakeServer[] = [];
const databases: StudyDatabase[] = [];
const directories: string[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const db of databases.splice(0)) await db.destroy();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

async function server(
  respond: (request: import('./llm-fake-openai-server.ts').ChatRequest) => FakeResponse | Promise<FakeResponse>,
): Promise<FakeServer> {
  const started = await startFakeOpenAiServer(respond);
  servers.push(started);
  return started;
}

function clientFor(fake: FakeServer, overrides: Partial<LlmClientOptions> = {}, model = 'openai:gpt-4.1-mini') {
  const resolved = resolveLanguageModel(parseModelSpec(model), {
    baseURL: fake.baseURL,
    env: { OPENAI_API_KEY: PLANTED_KEY },
    fetch: loopbackFetch,
  });
  return createLlmClient({
    resolved,
    temperature: 0,
    maxOutputTokens: 1024,
    timeoutMs: 5000,
    sleep: async () => undefined,
    random: () => 0.5,
    ...overrides,
  });
}

const VALID_INTENT: Intent = {
  appType: 'booking',
  entities: [{ name: 'Patient', role: 'party' }],
  relations: [],
  behaviors: ['scheduling'],
  projections: ['calendar'],
};

function request(goal = 'A clinic books patients.', repeat = 0) {
  return { input: goal, text: goal, artifact: PROMPT, repeat };
}

describe('LLM intent executor over HTTP (loopback OpenAI chat completions)', () => {
  it('scores composite 1.0 on the whole corpus when the server answers every goal with its gold', async () => {
    const examples = loadExamples();
    expect(examples.length).toBeGreaterThan(10);
    const gold = new Map(examples.map((example) => [example.text, goldIntent(example.expected)]));
    const fake = await server((chat) => {
      const intent = gold.get(chat.user);
      return intent === undefined
        ? { status: 400, body: { error: { message: 'unknown goal' } } }
        : { content: JSON.stringify(intent) };
    });
    const executor = createLlmIntentExecutor({ client: clientFor(fake) });
    for (const example of examples) {
      const result = await executor.execute({
        input: example.input,
        text: example.text,
        artifact: PROMPT,
        repeat: 0,
        exampleId: example.id,
      });
      expect(result.ok, `${example.id}: ${result.ok ? '' : result.message}`).toBe(true);
      const score = scoreExample(example.expected, result);
      expect(score.valid && score.composite).toBe(1);
    }
    const evaluator = createEvaluator({ task: intentTask, executor, corpus: examples, concurrency: 4 });
    const partition = await evaluator.evaluate({ artifactText: PROMPT, partition: 'optimization', examples });
    expect(partition.composite).toBe(1);
    expect(partition.invalid).toBe(0);
    expect(partition.usage.inputTokens).toBe(100 * examples.length);

    const first = fake.requests[0]!;
    expect(first.path).toBe('/v1/chat/completions');
    expect(first.headers.authorization).toBe(`Bearer ${PLANTED_KEY}`);
    expect(first.body.response_format?.type).toBe('json_schema');
    expect(first.body.response_format?.json_schema?.name).toBe('intent');
    expect(JSON.stringify(first.body.response_format?.json_schema?.schema)).toContain('"appType"');
    expect(first.system.startsWith(PROMPT.trimEnd())).toBe(true);
    expect(first.body.temperature).toBe(0);
  });

  it('counts nonsense answers as invalid, never as scores', async () => {
    const examples = loadExamples().slice(0, 6);
    const fake = await server(() => ({ content: 'It sounds like a lovely booking app!' }));
    const executor = createLlmIntentExecutor({ client: clientFor(fake) });
    const evaluator = createEvaluator({ task: intentTask, executor, corpus: examples });
    const partition = await evaluator.evaluate({ artifactText: PROMPT, partition: 'optimization', examples });
    expect(partition.invalid).toBe(examples.length);
    expect(partition.composite).toBeNull();
    expect(partition.examples.every((record) => !record.valid && record.invalidReason === 'unparsable')).toBe(true);
  });

  it('returns truncated, empty, off-schema, refused and non-JSON answers as invalid with their raw text', async () => {
    const script: FakeResponse[] = [
      { content: '{"appType":"booking","entities":[{"name":"Pat', finishReason: 'length' },
      { content: '' },
      { content: JSON.stringify({ ...VALID_INTENT, appType: 'spaceship' }) },
      { content: 'I cannot help with that.', finishReason: 'content_filter' },
      { content: '```json\n{"appType": "booking"' },
    ];
    const fake = await server((chat) => script[chat.index]!);
    const executor = createLlmIntentExecutor({ client: clientFor(fake) });
    const reasons: string[] = [];
    for (let index = 0; index < script.length; index += 1) {
      const result = await executor.execute(request(`goal ${index}`));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        reasons.push(result.reason);
        expect(result.usage?.inputTokens).toBe(100);
      }
    }
    expect(reasons).toEqual(['truncated', 'empty', 'schema', 'refused', 'unparsable']);
  });

  it('honours Retry-After on HTTP 429, halving the concurrency, then succeeds', async () => {
    let calls = 0;
    const fake = await server(() => {
      calls += 1;
      return calls === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { content: JSON.stringify(VALID_INTENT) };
    });
    const limiter = createAdaptiveLimiter({ maxConcurrency: 8 });
    const executor = createLlmIntentExecutor({ client: clientFor(fake, { limiter }) });
    const started = Date.now();
    const result = await executor.execute(request());
    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(limiter.limit).toBe(4);
    expect(fake.calls).toBe(2);
  });

  it('honours an HTTP-date Retry-After', async () => {
    let calls = 0;
    const fake = await server(() => {
      calls += 1;
      return calls === 1
        ? { status: 429, headers: { 'retry-after': new Date(Date.now() + 1500).toUTCString() } }
        : { content: JSON.stringify(VALID_INTENT) };
    });
    const executor = createLlmIntentExecutor({ client: clientFor(fake) });
    const started = Date.now();
    expect((await executor.execute(request())).ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(fake.calls).toBe(2);
  });

  it('gives up on HTTP 429 after its retries, or at once when Retry-After is too long', async () => {
    const limited = await server(() => ({ status: 429 }));
    const executor = createLlmIntentExecutor({
      client: clientFor(limited, { maxRateLimitRetries: 1, random: () => 0 }),
    });
    const error = await executor.execute(request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as InfrastructureError).statusCode).toBe(429);
    expect((error as InfrastructureError).isRetryable).toBe(true);
    expect(limited.calls).toBe(2);

    const closed = await server(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    const started = Date.now();
    const refused = await createLlmIntentExecutor({ client: clientFor(closed) })
      .execute(request())
      .catch((caught: unknown) => caught);
    expect((refused as Error).message).toMatch(/rate limited for 3600 s/);
    expect(Date.now() - started).toBeLessThan(30_000); // refused at once, not after an hour (a loose bound: the machine may be loaded)
    expect(closed.calls).toBe(1);
  });

  it('retries 5xx with exponential backoff, then gives up with a transient invalid output (never stored, never a score)', async () => {
    const delays: number[] = [];
    let failures = 2;
    const fake = await server(() => (failures-- > 0 ? { status: 500 } : { content: JSON.stringify(VALID_INTENT) }));
    const sleep = async (ms: number) => {
      delays.push(ms);
    };
    const executor = createLlmIntentExecutor({ client: clientFor(fake, { sleep, random: () => 0.5 }) });
    expect((await executor.execute(request())).ok).toBe(true);
    expect(fake.calls).toBe(3);
    expect(delays).toEqual([500, 1000]);

    const down = await server(() => ({ status: 503 }));
    const failing = createLlmIntentExecutor({ client: clientFor(down, { sleep }) });
    const result = await failing.execute(request());
    expect(result).toMatchObject({ ok: false, reason: 'error', transient: true });
    expect(!result.ok && result.message).toContain('HTTP 503');
    expect(down.calls).toBe(4);
  });

  it('retries 408 and 409 too', async () => {
    const script: FakeResponse[] = [{ status: 408 }, { status: 409 }, { content: JSON.stringify(VALID_INTENT) }];
    const fake = await server((chat) => script[chat.index]!);
    const executor = createLlmIntentExecutor({ client: clientFor(fake) });
    expect((await executor.execute(request())).ok).toBe(true);
    expect(fake.calls).toBe(3);
  });

  it('times out a slow answer, retries, and returns an invalid output "timeout"', async () => {
    const fake = await server(() => ({ content: JSON.stringify(VALID_INTENT), delayMs: 1500 }));
    const executor = createLlmIntentExecutor({ client: clientFor(fake, { timeoutMs: 150, maxRetries: 1 }) });
    const started = Date.now();
    const result = await executor.execute(request());
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe('timeout');
    expect(!result.ok && result.transient).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000); // two timed-out calls, not two 1.5 s answers (a loose bound: the machine may be loaded)
    expect(fake.calls).toBe(2);
  });

  it('throws a non-retryable InfrastructureError at once on 401 and 403, without the key in the message', async () => {
    for (const status of [401, 403]) {
      const fake = await server((chat) => ({
        status,
        body: { error: { message: `bad key: ${String(chat.headers.authorization)}` } },
      }));
      const executor = createLlmIntentExecutor({ client: clientFor(fake) });
      const error = await executor.execute(request()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InfrastructureError);
      expect((error as Error).name).toBe('InfrastructureError');
      expect((error as InfrastructureError).isRetryable).toBe(false);
      expect((error as InfrastructureError).statusCode).toBe(status);
      expect(String((error as Error).message)).not.toContain(PLANTED_KEY);
      expect(JSON.stringify(error)).not.toContain(PLANTED_KEY);
      expect(fake.calls).toBe(1);
    }
  });

  it('returns a refused request (HTTP 400) as an invalid output "error", not cached', async () => {
    let calls = 0;
    const fake = await server(() => {
      calls += 1;
      return calls === 1
        ? { status: 400, body: { error: { message: 'context length exceeded' } } }
        : { content: JSON.stringify(VALID_INTENT) };
    });
    const db = await openDatabase(':memory:');
    databases.push(db);
    const executor = createLlmIntentExecutor({ client: clientFor(fake, { cache: createResponseCache(() => db) }) });
    const first = await executor.execute(request());
    expect(!first.ok && first.reason).toBe('error');
    expect((await executor.execute(request())).ok).toBe(true);
    expect(fake.calls).toBe(2);
  });

  it('serves a second identical evaluation from the cache; noCache and another repeat are fresh samples', async () => {
    const examples = loadExamples().slice(0, 5);
    const gold = new Map(examples.map((example) => [example.text, goldIntent(example.expected)]));
    const fake = await server((chat) => ({ content: JSON.stringify(gold.get(chat.user) ?? VALID_INTENT) }));
    const db = await openDatabase(':memory:');
    databases.push(db);
    const cache = createResponseCache(() => db);
    const executor = createLlmIntentExecutor({ client: clientFor(fake, { cache }) });
    // No evaluator database: only the response cache can spare the calls.
    const evaluator = createEvaluator({ task: intentTask, executor, corpus: examples });
    const evaluate = (repeat = 0, ofExecutor?: Executor) =>
      (ofExecutor === undefined
        ? evaluator
        : createEvaluator({ task: intentTask, executor: ofExecutor, corpus: examples })
      ).evaluate({
        artifactText: PROMPT,
        partition: 'optimization',
        examples,
        firstRepeat: repeat,
      });
    const first = await evaluate();
    expect(fake.calls).toBe(5);
    const second = await evaluate();
    expect(fake.calls).toBe(5);
    expect(second.composite).toBe(first.composite);
    expect(second.usage.costUsd).toBe(0);

    await evaluate(1);
    expect(fake.calls).toBe(10);

    const uncached = createLlmIntentExecutor({ client: clientFor(fake, { cache, noCache: true }) });
    await evaluate(0, uncached);
    expect(fake.calls).toBe(15);
    const rows = await db.selectFrom('response_cache').select(['key', 'model']).execute();
    expect(rows.length).toBe(10);
    expect(rows.every((row) => row.model === 'openai:gpt-4.1-mini')).toBe(true);
  });

  it('never writes the API key to the database file, logs or error messages', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'kloop-llm-secret-'));
    directories.push(directory);
    const file = path.join(directory, 'kloop.db');
    const db = await openDatabase(file);
    let mode: 'echo' | 'auth' = 'echo';
    const fake = await server((chat) =>
      mode === 'auth'
        ? { status: 401, body: { error: { message: `invalid key ${String(chat.headers.authorization)}` } } }
        : chat.index % 2 === 0
          ? { content: JSON.stringify(VALID_INTENT) }
          : { content: `not json, but here is your header: ${String(chat.headers.authorization)}` },
    );
    const logs: string[] = [];
    const plugins = createLlmStudyPlugins({
      model: 'openai:gpt-4.1-mini',
      baseURL: fake.baseURL,
      getDatabase: () => db,
      env: { OPENAI_API_KEY: PLANTED_KEY },
      fetch: loopbackFetch,
      log: (message) => logs.push(message),
      sleep: async () => undefined,
    });
    const config = llmConfig(directory);
    const executor = plugins.createExecutor(config);
    expect(executor.id).not.toContain(PLANTED_KEY);
    const examples = loadExamples().slice(0, 4);
    const evaluator = createEvaluator({
      task: intentTask,
      executor,
      corpus: examples,
      results: openNotebook(db),
      concurrency: 1,
    });
    const score = await evaluator.evaluate({ artifactText: PROMPT, partition: 'optimization', examples });
    expect(score.invalid).toBe(2);
    mode = 'auth';
    const error = await executor.execute(request('another goal')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfrastructureError);
    logs.push((error as Error).message, JSON.stringify(score));
    await db.destroy();
    const bytes = readdirSync(directory).map((name) => readFileSync(path.join(directory, name)));
    expect(bytes.length).toBeGreaterThan(0);
    for (const content of bytes) {
      expect(content.includes(Buffer.from(PLANTED_KEY))).toBe(false);
      expect(content.includes(Buffer.from('planted-0123456789'))).toBe(false);
    }
    expect(logs.join('\n')).not.toContain(PLANTED_KEY);
  });

  it('falls back to JSON in the prompt when an openai-compatible server rejects the response format', async () => {
    const fake = await server((chat) =>
      chat.body.response_format !== undefined
        ? { status: 400, body: { error: { message: "response_format 'json_schema' is not supported by this server" } } }
        : { content: `<think>The user wants a clinic.</think>\n\`\`\`json\n${JSON.stringify(VALID_INTENT)}\n\`\`\`` },
    );
    const logs: string[] = [];
    const resolved = resolveLanguageModel(parseModelSpec('openai-compatible:qwen2.5-7b'), {
      baseURL: fake.baseURL,
      env: {},
      fetch: loopbackFetch,
    });
    const client = createLlmClient({
      resolved,
      temperature: 0,
      maxOutputTokens: 512,
      log: (message) => logs.push(message),
    });
    expect(client.id).toBe(
      `openai-compatible:qwen2.5-7b host=${new URL(fake.baseURL).host} temperature=0 maxOutputTokens=512 output=auto`,
    );
    const executor = createLlmIntentExecutor({ client });
    const first = await executor.execute(request());
    expect(first.ok).toBe(true);
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    expect(fake.calls).toBe(2);
    expect((await executor.execute(request('second goal'))).ok).toBe(true);
    expect(fake.calls).toBe(3);
    expect(logs.some((line) => line.includes('asking for JSON in the prompt'))).toBe(true);
  });

  it('reports usage and cost per call, and stops with BudgetExceededError at the cap', async () => {
    const fake = await server(() => ({
      content: JSON.stringify(VALID_INTENT),
      usage: { prompt_tokens: 1000, completion_tokens: 500 },
    }));
    const meter = createUsageMeter({ maxCostUsd: 0.005 });
    const executor = createLlmIntentExecutor({
      client: clientFor(fake, {
        meter,
        prices: { 'openai:gpt-4.1-mini': { inputUsdPerMillion: 1, outputUsdPerMillion: 4 } },
      }),
    });
    const result = await executor.execute(request());
    expect(result.usage).toEqual({ inputTokens: 1000, outputTokens: 500, costUsd: 0.003 });
    await executor.execute(request('goal two'));
    expect(meter.totals().costUsd).toBeCloseTo(0.006);
    const error = await executor.execute(request('goal three')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).name).toBe('BudgetExceededError');
    expect((error as BudgetExceededError).code).toBe('budget');
    expect(fake.calls).toBe(2);

    const zero = createLlmIntentExecutor({ client: clientFor(fake, { meter: createUsageMeter({ maxTokens: 0 }) }) });
    await expect(zero.execute(request('goal four'))).rejects.toBeInstanceOf(BudgetExceededError);
    expect(fake.calls).toBe(2);
  });

  it('refuses a missing API key with an InputError before any call', async () => {
    const fake = await server(() => ({ content: JSON.stringify(VALID_INTENT) }));
    const plugins = createLlmStudyPlugins({
      baseURL: fake.baseURL,
      getDatabase: () => undefined,
      env: {},
      fetch: loopbackFetch,
    });
    const config = llmConfig(mkdtempSync(path.join(tmpdir(), 'kloop-llm-key-')));
    directories.push(config.dir);
    expect(() => plugins.createExecutor(config)).toThrow(InputError);
    expect(() => plugins.createExecutor(config)).toThrow(/OPENAI_API_KEY/);
    expect(() =>
      plugins.createExecutor({
        ...config,
        executor: { ...config.executor, apiKeyEnv: 'MY_SERVER_KEY', model: 'openai-compatible:x' },
      }),
    ).toThrow(/MY_SERVER_KEY/);
    expect(fake.calls).toBe(0);
  });
});

/** A minimal loaded config for an llm executor (only the fields the plugins read). */
function llmConfig(directory: string): StudyConfig {
  return {
    dir: directory,
    configPath: path.join(directory, 'kloop.yaml'),
    artifact: path.join(directory, 'prompt.md'),
    program: path.join(directory, 'program.md'),
    corpus: [],
    corpusFiles: [],
    task: 'intent',
    executor: { kind: 'llm', model: 'openai:gpt-4.1-mini', temperature: 0, maxOutputTokens: 1024 },
    proposer: { kind: 'reflective', candidatesPerRound: 3, concurrency: 2 },
    gate: {} as StudyConfig['gate'],
    stopping: { maxExperiments: 10, plateauRounds: 2, plateauMinSpent: 0, idleRounds: 2, maxConsecutiveFailures: 3 },
    seed: 1,
    corpusPolicy: {} as StudyConfig['corpusPolicy'],
    weights: { appType: 0.25, entityRecall: 0.35, roleAccuracy: 0.2, behaviorCoverage: 0.2 },
  };
}
