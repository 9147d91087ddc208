/**
 * Issue #36, fault 2 (promptfoo PR #8070, DSPy #1544): an HTTP 200 whose body
 * is an error — a gateway's `{"error": {"message": "Rate limit exceeded",
 * "code": 429}}`, a proxy's HTML page — was read as the prompt's outcome
 * (`INVALID (error): HTTP 200: Invalid JSON response`), stored in
 * `example_results` and replayed for ever: after the server recovered,
 * `kloop eval` made 0 calls, and `--no-cache` measured anew without
 * replacing what was stored.
 *
 * Through the CLI (in-process, tests/cli-in-process.ts) on a study made by
 * `kloop init --task classification --executor llm`, against a scripted
 * OpenAI chat-completions server on 127.0.0.1 (tests/llm-fake-openai-server.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeOpenAiServer, type FakeResponse, type FakeServer } from '../llm-fake-openai-server.ts';

/** The gold labels of the sample corpus `kloop init --task classification` writes, by a phrase of each ticket. */
const GOLD: ReadonlyArray<[phrase: string, label: string]> = [
  ['charged twice', 'billing'],
  ["can't log in", 'account'],
  ['My parcel', 'shipping'],
];
const RATE_LIMIT_BODY = { error: { message: 'Rate limit exceeded', code: 429 } };
const HTML_PAGE = '<html><body><h1>502 Bad Gateway</h1></body></html>';

type Mode = 'answer' | 'rate-limit-200' | 'html-200' | 'wrong-shipping';
let mode: Mode = 'answer';
/** Requests answered with the rate-limit body before the server answers again (mode `rate-limit-200`). */
let rateLimitedLeft = 0;
let fake: FakeServer;
let root: string;
let kloop: typeof import('../cli-in-process.ts')['kloop'];

function answer(user: string): FakeResponse {
  const label = GOLD.find(([phrase]) => user.includes(phrase))?.[1] ?? 'technical';
  return { content: JSON.stringify({ label: mode === 'wrong-shipping' && label === 'shipping' ? 'billing' : label }) };
}

const FAULTS = '../../src/providers/faults.ts';

/**
 * The CLI in-process with the model client's back-off at 0 ms (src/providers/faults.ts `backoffDelayMs`): the retries
 * and their number are what is asserted, not how long they wait (0.5 s doubling with jitter: about 15 s of this file's
 * waiting). The mock is this file's alone: undone, and the modules loaded again, when it ends (vitest.config.ts).
 */
beforeAll(async () => {
  vi.resetModules();
  vi.doMock(FAULTS, async (importOriginal) => ({
    ...(await importOriginal<typeof import('../../src/providers/faults.ts')>()),
    backoffDelayMs: () => 0,
  }));
  ({ kloop } = await import('../cli-in-process.ts'));
});
afterAll(() => {
  vi.doUnmock(FAULTS);
  vi.resetModules();
});

beforeAll(async () => {
  fake = await startFakeOpenAiServer((request) => {
    if (mode === 'rate-limit-200' && rateLimitedLeft > 0) {
      rateLimitedLeft -= 1;
      return { status: 200, body: RATE_LIMIT_BODY };
    }
    if (mode === 'html-200') return { status: 200, rawBody: HTML_PAGE, headers: { 'content-type': 'text/html' } };
    return answer(request.user);
  });
  root = mkdtempSync(path.join(tmpdir(), 'kloop-http-200-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

/** A new classification study with an llm executor: one repeat, no calibration required. */
async function newStudy(name: string): Promise<string> {
  const study = path.join(root, name);
  const init = await kloop('init', study, '--task', 'classification', '--executor', 'llm');
  expect(init.code).toBe(0);
  const config = path.join(study, 'kloop.yaml');
  writeFileSync(
    config,
    readFileSync(config, 'utf8')
      .replace(/repeats: \d+/, 'repeats: 1')
      .replace('requireCalibration: true', 'requireCalibration: false'),
  );
  return study;
}

/** Rows of the study database's stores of measurements. */
function storedResults(study: string): { results: number; cachedAnswers: number } {
  const db = new Database(path.join(study, '.kloop', 'kloop.db'), { readonly: true });
  try {
    const count = (table: string): number =>
      (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { results: count('example_results'), cachedAnswers: count('response_cache') };
  } finally {
    db.close();
  }
}

const model = (): string[] => ['--model', 'openai-compatible:m', '--base-url', fake.baseURL];

interface EvalJson {
  composite: number | null;
  invalid: number;
  total: number;
  examples: Array<{ id: string; valid: boolean; composite: number | null; invalidReason?: string; message?: string }>;
}

async function evalOptimization(
  study: string,
  ...extra: string[]
): Promise<{ code: number; json: EvalJson; calls: number; stderr: string }> {
  const before = fake.calls;
  const result = await kloop('eval', study, ...model(), '--partition', 'optimization', '--json', ...extra);
  return {
    code: result.code,
    json: JSON.parse(result.stdout) as EvalJson,
    calls: fake.calls - before,
    stderr: result.stderr,
  };
}

describe('an HTTP 200 whose body is not an answer (issue #36, fault 2)', () => {
  it('a rate limit sent with status 200 is waited out and retried; only the answers that follow are stored', async () => {
    const study = await newStudy('rate-limit');
    mode = 'rate-limit-200';
    rateLimitedLeft = 2;
    const first = await evalOptimization(study);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ composite: 1, invalid: 0, total: 2 });
    expect(first.stderr).toContain('rate limited (HTTP 200 naming a rate limit)');
    expect(first.calls).toBe(4); // two rate-limited answers, then one answer per example
    const again = await evalOptimization(study);
    expect(again.calls).toBe(0); // stored: the valid answers
    expect(again.json).toMatchObject({ composite: 1, invalid: 0 });
  });

  it('an HTML page with status 200 stops the run as infrastructure_failure, stores nothing, and kloop eval asks again once the server recovers', async () => {
    const study = await newStudy('html');
    mode = 'html-200';
    const before = fake.calls;
    const run = await kloop('run', study, ...model(), '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { stopReason: string; stopDetail: string };
    expect(report.stopReason).toBe('infrastructure_failure');
    expect(report.stopDetail).toContain(
      'HTTP 200: a body that is not an answer: "<html><body><h1>502 Bad Gateway</h1></body></html>"',
    );
    expect((fake.calls - before) % 4).toBe(0); // every request tried 4 times (3 retries)
    expect(storedResults(study)).toEqual({ results: 0, cachedAnswers: 0 });
    mode = 'answer';
    const recovered = await evalOptimization(study);
    expect(recovered.calls).toBe(2);
    expect(recovered.code).toBe(0);
    expect(recovered.json).toMatchObject({ composite: 1, invalid: 0, total: 2 });
  });

  it('kloop eval --no-cache replaces the results it measured again: the next eval reads the new ones', async () => {
    const study = await newStudy('no-cache');
    mode = 'wrong-shipping';
    const wrong = await evalOptimization(study);
    expect(wrong.json.composite).toBe(0.5);
    mode = 'answer';
    const stored = await evalOptimization(study);
    expect(stored.calls).toBe(0);
    expect(stored.json.composite).toBe(0.5);
    const measured = await evalOptimization(study, '--no-cache');
    expect(measured.calls).toBe(2);
    expect(measured.json.composite).toBe(1);
    const after = await evalOptimization(study);
    expect(after.calls).toBe(0);
    expect(after.json.composite).toBe(1);
    expect(after.json.examples.map((example) => [example.id, example.composite])).toEqual([
      ['ticket-0001', 1],
      ['ticket-0003', 1],
    ]);
  });
});
