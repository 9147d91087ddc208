/**
 * `kloop eval` on the LLM example study, through the CLI in a child process,
 * against a scripted OpenAI-compatible server on 127.0.0.1.
 */
import { asIntentExamples } from '../src/corpus/intent-example.ts';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { readCorpusFile } from '../src/corpus/importers/public-format.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import type { FakeServer } from './llm-fake-openai-server.ts';
import { startFakeOpenAiServer } from './llm-fake-openai-server.ts';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..');
const kloop = path.join(repo, 'bin', 'kloop.js');
const PLANTED_KEY = 'sk-planted-test-key-4f1c2a9e';
let root: string;
let study: string;
let gold: Map<string, Intent>;
let mode: 'gold' | 'nonsense' = 'gold';
let fake: FakeServer;

function goldIntent(example: IntentExample): Intent {
  return {
    appType: (acceptedAppTypes(example.expected)[0] ?? 'other') as Intent['appType'],
    entities: (example.expected.entities ?? []).map((entity) => ({
      name: entity.name,
      role: entity.role ?? 'reference',
    })),
    relations: example.expected.relations ?? [],
    behaviors: example.expected.behaviors ?? [],
    projections: example.expected.projections ?? [],
  };
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'kloop-llm-cli-'));
  cpSync(path.join(repo, 'examples', 'intent'), path.join(root, 'intent'), {
    recursive: true,
    filter: (source) => !source.includes('.kloop'),
  });
  cpSync(path.join(repo, 'examples', 'intent-llm'), path.join(root, 'intent-llm'), {
    recursive: true,
    filter: (source) => !source.includes('.kloop'),
  });
  study = path.join(root, 'intent-llm');
  const corpusDir = path.join(root, 'intent', 'corpus');
  const examples = ['booking-and-membership.yaml', 'operations.yaml', 'sales.yaml', 'work.yaml', 'extra.jsonl'].flatMap(
    (name) => {
      const result = readCorpusFile(path.join(corpusDir, name));
      if (!result.ok) throw new Error(result.errors[0]?.message);
      return asIntentExamples(result.examples);
    },
  );
  gold = new Map(examples.map((example) => [example.text, goldIntent(example)]));
  fake = await startFakeOpenAiServer((request) => {
    if (mode === 'nonsense') return { content: 'I think this is a lovely app! {"appType": ' };
    const intent = [...gold].find(([goal]) => request.user.includes(goal))?.[1];
    return intent === undefined
      ? { status: 400, body: { error: { message: 'unknown goal' } } }
      : { content: JSON.stringify(intent) };
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

async function evalJson(
  extra: string[] = [],
  expectedExitCode = 0,
): Promise<{ composite: number | null; invalid: number; total: number }> {
  let stdout: string;
  let exitCode = 0;
  try {
    ({ stdout } = await run(
      process.execPath,
      [
        kloop,
        'eval',
        study,
        '--model',
        'openai-compatible:test',
        '--base-url',
        fake.baseURL,
        '--partition',
        'anchor',
        '--json',
        ...extra,
      ],
      { cwd: repo, env: { ...process.env, OPENAI_API_KEY: PLANTED_KEY } },
    ));
  } catch (error) {
    ({ stdout } = error as { stdout: string });
    exitCode = (error as { code: number }).code;
  }
  expect(exitCode).toBe(expectedExitCode);
  return JSON.parse(stdout) as { composite: number | null; invalid: number; total: number };
}

describe('kloop eval with a language model over loopback', () => {
  it('reports composite 1.0 when the server answers every extraction from the gold, then serves a repeat from the cache', async () => {
    const perfect = await evalJson();
    expect(perfect.composite).toBe(1);
    expect(perfect.invalid).toBe(0);
    const callsAfterFirst = fake.calls;
    expect(callsAfterFirst).toBeGreaterThan(0);
    const again = await evalJson();
    expect(again.composite).toBe(1);
    expect(fake.calls).toBe(callsAfterFirst); // zero HTTP calls: served from the response cache
    await evalJson(['--no-cache']);
    expect(fake.calls).toBeGreaterThan(callsAfterFirst); // --no-cache asks again
  });

  it('counts nonsense answers as invalid, never as scores (nothing valid: exit 1), and keeps the key out of the database', async () => {
    mode = 'nonsense';
    const nonsense = await evalJson(['--no-cache'], 1);
    expect(nonsense.composite).toBeNull();
    expect(nonsense.invalid).toBe(nonsense.total);
    mode = 'gold';
    const database = readFileSync(path.join(study, '.kloop', 'kloop.db'));
    expect(database.includes(Buffer.from(PLANTED_KEY))).toBe(false);
  });
});
