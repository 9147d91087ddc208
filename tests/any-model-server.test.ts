/**
 * Issue #35, item 2: any model server for the reflective proposer of a
 * command study (the executor is a program; the proposer is the only model).
 * Each route by which a user names the server is run through the CLI
 * (in-process, tests/cli-in-process.ts) against a loopback server speaking
 * that provider's API:
 *
 * | route | model | server |
 * |---|---|---|
 * | `proposer.baseURL` in kloop.yaml | `openai-compatible:local` | OpenAI chat completions |
 * | `--base-url` (the only model: the proposer's) | `openai-compatible:local` | OpenAI chat completions |
 * | `OPENAI_BASE_URL` | `openai:gpt-4.1-mini` | OpenAI chat completions |
 * | `ANTHROPIC_BASE_URL` | `anthropic:claude-test` | Anthropic messages |
 * | `OLLAMA_HOST` (`host:port`) | `ollama:llama3.1` | Ollama `/api/chat` |
 *
 * The server answers one candidate (the seed's rules with one more vendor
 * pattern), which the gate judges; the run stops after its one round. What is
 * checked is that the proposer's request reached that server, for that model
 * (with the key where the provider takes one), that the run ended normally,
 * and that `kloop config` names the base URL's source.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';

type Protocol = 'openai' | 'anthropic' | 'ollama';
/** One candidate: the seed's rules with one more vendor pattern (set from the study `kloop init` writes). */
let PROPOSAL: unknown;

interface ProviderServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: Array<{ path: string; model: string | undefined; authorization: string | undefined }>;
  close(): Promise<void>;
}

/** The answer of each protocol, carrying the proposal as text (or, for Anthropic's JSON tool, as its input). */
function answer(protocol: Protocol, body: { model?: string; tools?: Array<{ name: string }> }): unknown {
  const text = JSON.stringify(PROPOSAL);
  switch (protocol) {
    case 'openai':
      return {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      };
    case 'anthropic': {
      const tool = body.tools?.find((candidate) => candidate.name === 'json');
      return {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content:
          tool !== undefined
            ? [{ type: 'tool_use', id: 'toolu_1', name: 'json', input: PROPOSAL }]
            : [{ type: 'text', text }],
        stop_reason: tool !== undefined ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    }
    case 'ollama':
      return {
        model: body.model,
        created_at: '2026-12-07T00:00:00Z',
        message: { role: 'assistant', content: text },
        done: true,
        done_reason: 'stop',
        total_duration: 1,
        load_duration: 1,
        prompt_eval_count: 10,
        eval_count: 5,
      };
  }
}

const ROUTES: Record<Protocol, string> = {
  openai: '/v1/chat/completions',
  anthropic: '/v1/messages',
  ollama: '/api/chat',
};

async function startProviderServer(protocol: Protocol): Promise<ProviderServer> {
  const requests: ProviderServer['requests'] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        model?: string;
        tools?: Array<{ name: string }>;
      };
      requests.push({
        path: incoming.url ?? '',
        model: body.model,
        authorization: incoming.headers.authorization ?? (incoming.headers['x-api-key'] as string | undefined),
      });
      const known = incoming.method === 'POST' && incoming.url === ROUTES[protocol];
      outgoing.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify(known ? answer(protocol, body) : { error: { message: `no route ${incoming.url}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let root: string;
let template: string;
const servers: ProviderServer[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'kloop-any-server-'));
  template = path.join(root, 'template');
  const init = await kloop('init', template, '--task', 'extraction', '--executor', 'command');
  expect(init.code).toBe(0);
  const rules = JSON.parse(readFileSync(path.join(template, 'rules.json'), 'utf8')) as {
    fields: { vendor: { patterns: string[] } };
  };
  rules.fields.vendor.patterns.push('^vendor:\\s*(.+)$');
  PROPOSAL = {
    candidates: [
      {
        rationale: 'read a vendor line too',
        edits: [{ section: 'fields', text: JSON.stringify(rules.fields, null, 2) }],
      },
    ],
  };
});
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** A copy of the extraction command study whose reflective proposer is `model` (and, when given, other proposer keys), one round. */
function study(name: string, model: string, proposerKeys = ''): string {
  const dir = path.join(root, name);
  cpSync(template, dir, { recursive: true });
  const config = path.join(dir, 'kloop.yaml');
  const text = readFileSync(config, 'utf8')
    .replace(/^ {2}model: openai:gpt-4\.1-mini.*$/m, `  model: ${model}${proposerKeys}`)
    .replace(/^ {2}maxRounds: \d+/m, '  maxRounds: 1');
  expect(text).toContain(`model: ${model}`);
  writeFileSync(config, text);
  return dir;
}

/** Runs `kloop …args` with `variables` set in the environment (restored after). */
async function withEnvironment(
  variables: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  try {
    return await kloop(...args);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

async function server(protocol: Protocol): Promise<ProviderServer> {
  const started = await startProviderServer(protocol);
  servers.push(started);
  return started;
}

interface ConfigValue {
  key: string;
  value: unknown;
  source: string;
  variable?: string;
  flag?: string;
  line?: number;
}

async function proposerBaseURL(env: Record<string, string>, ...args: string[]): Promise<ConfigValue | undefined> {
  const result = await withEnvironment(env, 'config', ...args, '--json');
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { values: ConfigValue[] }).values.find(
    (value) => value.key === 'proposer.baseURL',
  );
}

/**
 * Runs one round and returns the stop reason; the proposer's request must have reached `fake`, and its candidate been judged.
 * The artifact is rules.json: the reflective proposer edits a JSON artifact by its top-level keys' values
 * (src/proposers/data-edits.ts), so its one candidate is a valid rules file that the program reads and the gate
 * decides on (the sample corpus has no vendor line, so the change gains nothing: refused `below_margin`), and the run
 * stops after its one round (`max_rounds`, exit 0). Before, the proposer replaced a "## fields" markdown section the
 * JSON file does not have, and every run stopped `candidates_failed`.
 */
async function runOnce(fake: ProviderServer, env: Record<string, string>, ...args: string[]): Promise<string> {
  const result = await withEnvironment(env, 'run', ...args, '--json');
  expect(result.stderr).not.toMatch(/ENOTFOUND|api\.openai\.com|api\.anthropic\.com/);
  expect(result.code, result.stderr).toBe(0);
  expect(fake.requests.length).toBeGreaterThan(0);
  const report = JSON.parse(result.stdout) as {
    stopReason: string;
    proposalFailures: Record<string, number>;
    refused: Record<string, number>;
  };
  expect(result.stderr).toContain('round 1: 1 candidates proposed');
  expect(result.stderr).toContain('#1 refused  (below_margin) ## fields');
  expect(result.stderr).toMatch(/^\+ +"\^vendor:\\\\s\*\(\.\+\)\$"/m);
  expect(report.proposalFailures).toEqual({});
  expect(report.refused).toEqual({ below_margin: 1 });
  return report.stopReason;
}

describe('the reflective proposer of a command study on any model server (issue #35, item 2)', () => {
  it('proposer.baseURL in kloop.yaml: an OpenAI-compatible server', async () => {
    const fake = await server('openai');
    const dir = study('yaml', 'openai-compatible:local', `\n  baseURL: ${fake.origin}/v1`);
    expect(await proposerBaseURL({}, dir)).toMatchObject({ value: `${fake.origin}/v1`, source: 'kloop.yaml' });
    expect(await runOnce(fake, {}, dir)).toBe('max_rounds');
    expect(fake.requests[0]).toMatchObject({ path: '/v1/chat/completions', model: 'local' });
  });

  it('--base-url: the proposer is the only model, so the flag is its server', async () => {
    const fake = await server('openai');
    const dir = study('flag', 'openai-compatible:local');
    expect(await proposerBaseURL({}, dir, '--base-url', `${fake.origin}/v1`)).toMatchObject({
      value: `${fake.origin}/v1`,
      source: 'flag',
      flag: '--base-url',
    });
    await runOnce(fake, {}, dir, '--base-url', `${fake.origin}/v1`);
    expect(fake.requests[0]).toMatchObject({ path: '/v1/chat/completions', model: 'local' });
  });

  it('an openai-compatible proposer without a base URL is refused, naming proposer.baseURL and --base-url', async () => {
    const dir = study('missing', 'openai-compatible:local');
    const result = await kloop('run', dir, '--json');
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'input.base-url', field: 'proposer.baseURL' } });
    expect(result.stderr).toContain("needs the server's base URL: set proposer.baseURL or --base-url");
  });

  it('OPENAI_BASE_URL: openai:<model> goes to the server the variable names, with the key of OPENAI_API_KEY', async () => {
    const fake = await server('openai');
    const dir = study('openai-env', 'openai:gpt-4.1-mini');
    const env = { OPENAI_BASE_URL: `${fake.origin}/v1`, OPENAI_API_KEY: 'sk-loopback-test' };
    expect(await proposerBaseURL(env, dir)).toMatchObject({
      value: `${fake.origin}/v1`,
      source: 'environment',
      variable: 'OPENAI_BASE_URL',
    });
    await runOnce(fake, env, dir);
    expect(fake.requests[0]).toMatchObject({
      path: '/v1/chat/completions',
      model: 'gpt-4.1-mini',
      authorization: 'Bearer sk-loopback-test',
    });
  });

  it('ANTHROPIC_BASE_URL: anthropic:<model> goes to a server speaking the messages API', async () => {
    const fake = await server('anthropic');
    const dir = study('anthropic-env', 'anthropic:claude-test');
    const env = { ANTHROPIC_BASE_URL: `${fake.origin}/v1`, ANTHROPIC_API_KEY: 'sk-ant-loopback-test' };
    expect(await proposerBaseURL(env, dir)).toMatchObject({
      value: `${fake.origin}/v1`,
      source: 'environment',
      variable: 'ANTHROPIC_BASE_URL',
    });
    await runOnce(fake, env, dir);
    expect(fake.requests[0]).toMatchObject({
      path: '/v1/messages',
      model: 'claude-test',
      authorization: 'sk-ant-loopback-test',
    });
  });

  it('OLLAMA_HOST (host:port, as the Ollama CLI reads it): ollama:<model> goes to its /api/chat', async () => {
    const fake = await server('ollama');
    const dir = study('ollama-env', 'ollama:llama3.1');
    const env = { OLLAMA_HOST: fake.origin.replace('http://', '') };
    expect(await proposerBaseURL(env, dir)).toMatchObject({
      value: fake.origin,
      source: 'environment',
      variable: 'OLLAMA_HOST',
    });
    await runOnce(fake, env, dir);
    expect(fake.requests[0]).toMatchObject({ path: '/api/chat', model: 'llama3.1' });
  });

  it('--base-url on a study that calls no model is refused, saying what would use it', async () => {
    const dir = path.join(root, 'no-model');
    expect((await kloop('init', dir, '--task', 'classification', '--executor', 'command')).code).toBe(0); // keyword rules, the error-driven proposer
    const result = await kloop('run', dir, '--base-url', 'http://127.0.0.1:9/v1', '--json');
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'input.base-url', field: 'proposer.kind' } });
    expect(result.stderr).toContain('a reflective proposer (proposer.kind: reflective, proposer.model) would use it');
    expect(result.stderr).toContain(
      '--base-url names a model server, but this study calls no model (executor.kind: command, proposer.kind: error-driven)',
    );
  });
});
