/**
 * A command needs the API keys of the models it calls, and no others: `kloop
 * status` and `corpus status` call none, `kloop eval` only the executor's,
 * `kloop run` the executor's and the proposer's. Before, every command that
 * loaded an LLM study or a study with a reflective proposer resolved every
 * model and refused a missing key, so `kloop eval` right after `kloop init
 * --executor command` (a program that calls no model) failed on the
 * proposer's key, named as `executor.model`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';

const repo = path.resolve(import.meta.dirname, '..');
let root: string;
const saved = process.env.OPENAI_API_KEY;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'kloop-model-keys-'));
  for (const name of ['intent', 'intent-llm']) {
    cpSync(path.join(repo, 'examples', name), path.join(root, name), {
      recursive: true,
      filter: (source) => !source.includes('.kloop'),
    });
  }
});
afterEach(() => {
  if (saved === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('API keys, only for the models a command calls', () => {
  it('a command-executor study with a reflective proposer: eval runs without the key, run names proposer.model', async () => {
    delete process.env.OPENAI_API_KEY;
    const dir = path.join(root, 'extraction');
    const init = await kloop('init', dir, '--task', 'extraction', '--executor', 'command');
    expect(init.code, init.stderr).toBe(0);
    const evaluated = await kloop('eval', dir, '--json');
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect((JSON.parse(evaluated.stdout) as { composite: number | null }).composite).toEqual(expect.any(Number));
    const run = await kloop('run', dir, '--json');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('proposer.model: no API key for openai:gpt-4.1-mini');
    expect(run.stderr).not.toContain('executor.model');
  }, 60_000);

  it("an LLM study: status and corpus status read it without a key; eval still needs the executor model's", async () => {
    delete process.env.OPENAI_API_KEY;
    const dir = path.join(root, 'intent-llm');
    const status = await kloop('status', dir, '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ executor: expect.stringContaining('openai:gpt-4.1-mini') });
    const corpus = await kloop('corpus', 'status', dir, '--json');
    expect(corpus.code, corpus.stderr).toBe(0);
    const evaluated = await kloop('eval', dir, '--json');
    expect(evaluated.code).toBe(2);
    expect(evaluated.stderr).toContain('executor.model: no API key for openai:gpt-4.1-mini');
  }, 60_000);
});
