/**
 * `providers.<name>.maxInFlight`: the number of model requests in flight at
 * once is the number configured, whatever `proposer.concurrency`, for the
 * executor and the proposer together. Measured on a real HTTP server on
 * 127.0.0.1 speaking the OpenAI chat-completions API, which holds every
 * request for a latency and records the most it held at once.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.ts';
import { createStudyEvaluator } from '../src/loop/evaluate-partition.ts';
import { createLlmStudyPlugins } from '../src/providers-subpath.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import { loadStudyConfig } from '../src/config/config.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { loopbackFetch, startFakeOpenAiServer, type ChatRequest, type FakeServer } from './llm-fake-openai-server.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../examples/support-routing-llm');
const KEY = 'sk-in-flight-test-key-0123456789';
/** How long the server holds each request, in ms: long enough for the client's requests to pile up. */
const LATENCY_MS = 150;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TICKETS: Array<[string, string]> = [
  ['I was charged twice for my subscription this month', 'billing'],
  ['The invoice shows the wrong VAT number', 'billing'],
  ['My card payment keeps failing at checkout', 'billing'],
  ['Why did my plan price go up without notice', 'billing'],
  ['Please send me a receipt for order 4411', 'billing'],
  ['The promo code was not applied to my bill', 'billing'],
  ['I need a refund for a charge I did not make', 'billing'],
  ['Can I pay by bank transfer instead of card', 'billing'],
  ['The app crashes every time I open settings', 'technical'],
  ['The website is very slow since yesterday', 'technical'],
  ['The checkout button does nothing when I click it', 'technical'],
  ['I get error 500 on the orders page', 'technical'],
  ['Images do not load on the product pages', 'technical'],
  ['The app logs me out every few minutes because of a bug', 'technical'],
  ['Search returns nothing even for products you sell', 'technical'],
  ['The page layout is broken on my phone', 'technical'],
  ['Charged for shipping although it was free', 'billing'],
  ['Download of my invoice PDF fails with an error', 'technical'],
  ['Two payments were taken for one order', 'billing'],
  ['The app freezes on the loading screen', 'technical'],
  ['Annual plan billed monthly by mistake', 'billing'],
  ['Notifications stopped working after the update', 'technical'],
  ['Please update the billing address on my invoices', 'billing'],
  ['The map on the tracking page is blank', 'technical'],
];

/** A small classification study with an LLM executor and a reflective proposer: 16 optimization, 3 anchor, 5 shadow tickets. */
function makeStudy(extraYaml: string[]): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-in-flight-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  copyFileSync(path.join(EXAMPLE, 'prompt.md'), path.join(directory, 'prompt.md'));
  copyFileSync(path.join(EXAMPLE, 'program.md'), path.join(directory, 'program.md'));
  mkdirSync(path.join(directory, 'corpus'));
  const records = TICKETS.map(([input, label], index) => ({
    id: `ticket-${String(index + 1).padStart(2, '0')}`,
    input,
    expected: { label },
    partition: index < 16 ? 'optimization' : index < 19 ? 'anchor' : 'shadow',
  }));
  writeFileSync(
    path.join(directory, 'corpus', 'tickets.jsonl'),
    `${records.map((record) => JSON.stringify(record)).join('\n')}\n`,
  );
  writeFileSync(
    path.join(directory, 'kloop.yaml'),
    [
      'task: { kind: classification, labels: [billing, technical, account, shipping, returns, security] }',
      'executor: { kind: llm, model: "openai:gpt-4.1-mini", temperature: 0, maxOutputTokens: 64, timeoutMs: 20000 }',
      'artifact: prompt.md',
      'corpus: corpus/tickets.jsonl',
      'gate: { repeats: 1, requireCalibration: false }',
      'stopping: { maxExperiments: 2, maxRounds: 1, plateauRounds: 1 }',
      'seed: 3',
      ...extraYaml,
    ].join('\n'),
  );
  return directory;
}

interface CountingServer extends FakeServer {
  /** Most requests the server held at once. */
  readonly maxInFlight: number;
  /** Most requests held at once while a proposer request was also held. */
  readonly maxWithProposer: number;
}

/** The server: every request held LATENCY_MS; the executor gets a label, the proposer one rewrite of `## Deciding`. */
async function startServer(): Promise<CountingServer> {
  let inFlight = 0;
  let proposerInFlight = 0;
  let maxInFlight = 0;
  let maxWithProposer = 0;
  const labelOf = new Map(TICKETS);
  const fake = await startFakeOpenAiServer(async (chat: ChatRequest) => {
    const proposer = chat.body.response_format?.json_schema?.name === 'proposal';
    inFlight += 1;
    if (proposer) proposerInFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (proposerInFlight > 0) maxWithProposer = Math.max(maxWithProposer, inFlight);
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS));
    if (proposerInFlight > 0) maxWithProposer = Math.max(maxWithProposer, inFlight);
    inFlight -= 1;
    if (proposer) {
      proposerInFlight -= 1;
      const candidates = [
        {
          rationale: 'Route by the issue the customer asks to have fixed.',
          edits: [{ section: 'Deciding', text: 'Route a ticket by the issue the customer asks to have fixed.' }],
        },
        {
          rationale: 'Name the fallback queue explicitly.',
          edits: [
            { section: 'Deciding', text: 'When no queue fits, answer `technical`; otherwise the main issue decides.' },
          ],
        },
      ];
      return { content: JSON.stringify({ candidates }) };
    }
    const ticket = [...labelOf.keys()].find((text) => chat.user.includes(text) || chat.system.includes(text));
    return { content: JSON.stringify({ label: ticket === undefined ? 'technical' : labelOf.get(ticket) }) };
  });
  cleanups.push(() => fake.close());
  return Object.defineProperties(fake, {
    maxInFlight: { get: () => maxInFlight },
    maxWithProposer: { get: () => maxWithProposer },
  }) as CountingServer;
}

async function runOnce(study: string, server: FakeServer): Promise<void> {
  let db: StudyDatabase | undefined;
  const plugins = createLlmStudyPlugins({
    baseURL: server.baseURL,
    deterministic: true,
    getDatabase: () => db,
    env: { OPENAI_API_KEY: KEY },
    fetch: loopbackFetch,
  });
  const loaded = loadStudy(study, plugins);
  db = await openDatabase(studyDatabasePath(study));
  const opened = db;
  cleanups.push(() => opened.destroy());
  const outcome = await runStudy({ study: loaded, notebook: openNotebook(db) });
  expect(outcome.stopReason).not.toBe('infrastructure_failure');
}

describe('requests in flight (providers.<name>.maxInFlight)', () => {
  it('holds a run to the configured number, whatever proposer.concurrency: 3 in flight with concurrency 2', async () => {
    const study = makeStudy([
      'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 2 }',
      'providers: { openai: { maxInFlight: 3 } }',
    ]);
    const server = await startServer();
    await runOnce(study, server);
    // Both candidates were evaluated (2 × 19 requests beside the baseline's): demand well above 3 at once.
    expect(server.calls).toBeGreaterThan(40);
    expect(server.maxInFlight).toBe(3);
  });

  it('reaches a number above 2 × proposer.concurrency: 12 in flight with concurrency 1', async () => {
    const study = makeStudy([
      'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 1 }',
      'providers: { openai: { maxInFlight: 12 } }',
    ]);
    const server = await startServer();
    await runOnce(study, server);
    expect(server.maxInFlight).toBe(12);
  });

  it('defaults to 8 in flight per provider (DEFAULT_MAX_IN_FLIGHT)', async () => {
    const study = makeStudy(['proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 2 }']);
    const server = await startServer();
    await runOnce(study, server);
    expect(server.maxInFlight).toBe(8);
  });

  it('shares the number between the evaluator and the proposer on the same provider', async () => {
    const study = makeStudy([
      'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 1 }',
      'providers: { openai: { maxInFlight: 2 } }',
    ]);
    const server = await startServer();
    const plugins = createLlmStudyPlugins({
      baseURL: server.baseURL,
      deterministic: true,
      getDatabase: () => undefined,
      env: { OPENAI_API_KEY: KEY },
      fetch: loopbackFetch,
    });
    const loaded = loadStudy(study, plugins);
    expect(plugins.clients().map((client) => client.maxInFlight)).toEqual([2, 2]);
    const evaluator = createStudyEvaluator(loaded);
    const optimization = loaded.partitions.optimization;
    // The evaluation of 16 examples and a proposer call, started together: 17 requests wanted at once.
    const evaluation = evaluator.evaluate({
      artifactText: loaded.artifactText,
      partition: 'optimization',
      examples: optimization,
      repeats: 1,
    });
    const baseline = await evaluator.evaluate({
      artifactText: loaded.artifactText,
      partition: 'optimization',
      examples: optimization.slice(0, 1),
      repeats: 1,
      firstRepeat: 1,
    });
    const proposal = loaded.proposer.propose({
      incumbentText: loaded.artifactText,
      instructions: loaded.instructions,
      constraints: loaded.constraintsText,
      limits: {
        editableSections: loaded.constraints.editableSections,
        maxArtifactCharacters: loaded.constraints.maxArtifactCharacters,
      },
      examples: optimization,
      incumbentScores: baseline,
      evaluateOptimization: () => Promise.reject(new Error('the reflective proposer scores nothing')),
      history: [],
      triedHashes: new Set(),
      maxCandidates: 2,
      random: createSeededRandom(1),
      attempt: 0,
    });
    const [scores, proposed] = await Promise.all([evaluation, proposal]);
    expect(scores.total).toBe(16);
    expect(proposed.candidates.length).toBe(2);
    expect(server.maxInFlight).toBe(2);
    expect(server.maxWithProposer).toBeLessThanOrEqual(2);
  });

  it('refuses 0 (and anything but a whole number ≥ 1) by name, and an unknown provider', () => {
    const zero = makeStudy(['proposer: { kind: reflective }', 'providers:', '  openai:', '    maxInFlight: 0']);
    const error = (() => {
      try {
        loadStudyConfig(zero);
      } catch (thrown) {
        return thrown as InputError;
      }
      throw new Error('expected an InputError');
    })();
    expect(error).toBeInstanceOf(InputError);
    expect(error.field).toBe('providers.openai.maxInFlight');
    expect(error.line).toBe(11);
    expect(error.message).toMatch(
      /kloop\.yaml:11: providers\.openai\.maxInFlight: must be at least 1: 0 requests in flight would send none/,
    );
    expect(() =>
      loadStudyConfig(makeStudy(['proposer: { kind: reflective }', 'providers: { openai: { maxInFlight: 2.5 } }'])),
    ).toThrow(/providers\.openai\.maxInFlight/);
    expect(() =>
      loadStudyConfig(makeStudy(['proposer: { kind: reflective }', 'providers: { openia: { maxInFlight: 2 } }'])),
    ).toThrow(/providers\.openia: unknown key "openia" \(allowed: openai, anthropic, openai-compatible, ollama\)/);
  });
});
