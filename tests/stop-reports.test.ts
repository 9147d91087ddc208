/**
 * Every stop prints its report, with the exit code of the one table of stop
 * reasons (docs/reliability.md, "Stopping honestly"): the documented table is
 * read and checked against the code's, and `kloop run` is driven into every
 * stop it lists — all but `interrupted` here, in-process, against a scripted
 * model server on 127.0.0.1 (tests/llm-stop-study.ts); `interrupted` is
 * driven by a real SIGINT in tests/interrupt-spending.test.ts.
 *
 * The budget stops are the ones that used to lose their report: the final
 * report evaluated the partitions the run had not, hit the cap again and
 * exited 1 with nothing but an error on stdout.
 */
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STOP_REASONS } from '../src/loop/stop-reasons.ts';
import type { ChatRequest, FakeResponse, FakeServer } from './llm-fake-openai-server.ts';
import type { LlmStopStudy, LlmStopStudyOptions } from './llm-stop-study.ts';
import { appendToRoles, makeLlmStopStudy, modelArgs, serveStudy, TEST_KEY } from './llm-stop-study.ts';
import { kloop } from './cli-in-process.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';

const RELIABILITY = path.resolve(import.meta.dirname, '../docs/reliability.md');

/** The rows of the stop-reason table of docs/reliability.md: reason → exit code. */
function documentedStopReasons(): Map<string, number> {
  const text = readFileSync(RELIABILITY, 'utf8');
  const section = text.slice(
    text.indexOf('## Stopping honestly'),
    text.indexOf('\n## ', text.indexOf('## Stopping honestly') + 1),
  );
  const rows = new Map<string, number>();
  for (const line of section.split('\n')) {
    const match = /^\| `([a-z_]+)` \| .* \| (\d+) \|$/.exec(line);
    if (match !== null) rows.set(match[1]!, Number(match[2]));
  }
  return rows;
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
let savedKey: string | undefined;
beforeAll(() => {
  savedKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = TEST_KEY;
});
afterAll(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

interface Report {
  stopReason: string;
  stopDetail: string;
  stopMeaning: string;
  exitCode: number;
  experiments: number;
  baseline: Record<string, number | null>;
  best: Record<string, number | null>;
  details: Record<'baseline' | 'best', Record<string, { composite: number | null; evaluated?: boolean }>>;
  notEvaluated: Array<{ artifact: string; version: number; partition: string; reason: string; detail: string }>;
  usage: { inputTokens: number; outputTokens: number; costUsd: number; calls: number };
}

interface Scenario {
  study?: LlmStopStudyOptions;
  proposer?: (chat: ChatRequest, call: number) => FakeResponse;
  executor?: (chat: ChatRequest, gold: Intent | undefined) => FakeResponse | undefined;
  args?: string[];
}

/** A proposer that adds a new rule each call (never a near-duplicate: each has its own words). */
const WORDS = [
  'amber',
  'basalt',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'garnet',
  'heron',
  'indigo',
  'jasper',
  'kelp',
  'lichen',
];
const freshRule = (chat: ChatRequest, call: number): FakeResponse =>
  appendToRoles(
    chat,
    `Rule ${WORDS[call % WORDS.length]}: ${WORDS[(call + 3) % WORDS.length]} ${WORDS[(call + 7) % WORDS.length]} roles.`,
  );
const BROKEN: FakeResponse = { content: '{"candidates": [{"rationale": "unfinished' };
/** Executor answers with every role wrong unless the prompt carries HINT. */
const HINT = 'Decide each role from what the record means in this business, not from its name alone.';
const hinted = (chat: ChatRequest, gold: Intent | undefined): FakeResponse | undefined => {
  if (gold === undefined || chat.system.includes(HINT)) return undefined;
  return {
    content: JSON.stringify({
      ...gold,
      entities: gold.entities.map((entity) => ({
        ...entity,
        role: entity.role === 'reference' ? 'party' : 'reference',
      })),
    }),
  };
};

async function start(scenario: Scenario): Promise<{ study: LlmStopStudy; server: FakeServer }> {
  const study = makeLlmStopStudy(scenario.study);
  cleanups.push(study.cleanup);
  let calls = 0;
  const server = await serveStudy(study, {
    proposer: (chat) => (scenario.proposer ?? freshRule)(chat, calls++),
    ...(scenario.executor !== undefined ? { executor: scenario.executor } : {}),
  });
  cleanups.push(() => server.close());
  return { study, server };
}

async function runJson(
  scenario: Scenario,
): Promise<{ code: number; report: Report; stderr: string; study: LlmStopStudy; server: FakeServer }> {
  const { study, server } = await start(scenario);
  const result = await kloop('run', study.dir, '--json', ...modelArgs(server), ...(scenario.args ?? []));
  let report: Report;
  try {
    report = JSON.parse(result.stdout) as Report;
  } catch {
    throw new Error(`no JSON report on stdout (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { code: result.code, report, stderr: result.stderr, study, server };
}

/** One scenario per documented row but `interrupted` (a real signal: tests/interrupt-spending.test.ts). */
const SCENARIOS: Record<string, Scenario> = {
  target_reached: { study: { stopping: 'stopping: { maxExperiments: 5, plateauRounds: 3, target: 0.5 }' } },
  plateau: { study: { stopping: 'stopping: { maxExperiments: 5, plateauRounds: 1 }' } },
  max_experiments: { args: ['--max-experiments', '1'] },
  max_rounds: { study: { stopping: 'stopping: { maxExperiments: 5, plateauRounds: 3, maxRounds: 1 }' } },
  no_new_proposals: {
    study: { stopping: 'stopping: { maxExperiments: 5, plateauRounds: 5 }' },
    proposer: (chat) => appendToRoles(chat, 'The one idea: weigh every role twice.'),
  },
  budget: {
    study: { stopping: 'stopping: { maxExperiments: 10, plateauRounds: 10 }' },
    executor: (_chat, gold) => ({
      content: JSON.stringify(gold),
      usage: { prompt_tokens: 2000, completion_tokens: 500 },
    }),
    args: ['--max-tokens', '50000'],
  },
  consecutive_failures: {
    study: { stopping: 'stopping: { maxExperiments: 5, plateauRounds: 3, maxConsecutiveFailures: 2 }' },
    proposer: () => BROKEN,
  },
  // Every candidate's prompt makes the model answer off-format (each output invalid, not transient); the seed's is answered.
  candidates_failed: {
    executor: (chat) => (chat.system.includes('Rule ') ? { content: 'I cannot help with that.' } : undefined),
  },
  failure_rate: {
    study: {
      stopping: 'stopping: { maxExperiments: 5, plateauRounds: 3, maxConsecutiveFailures: 50, maxFailureRate: 0.5 }',
    },
    proposer: () => BROKEN,
  },
  infrastructure_failure: {
    executor: () => ({ status: 401, body: { error: { message: 'Incorrect API key provided' } } }),
  },
  shadow_spent: {
    study: {
      optimization: 8,
      anchor: 2,
      shadow: 5,
      stopping: 'stopping: { maxExperiments: 5, plateauRounds: 5 }',
      extra: ['corpusPolicy: { maxShadowExposures: 1 }'],
    },
    executor: hinted,
    proposer: (chat) => appendToRoles(chat, HINT),
  },
};

describe('the stop-reason table', () => {
  it('documents every stop reason of the code, with its exit code, and nothing else', () => {
    const documented = documentedStopReasons();
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(Object.entries(STOP_REASONS).map(([reason, info]) => [reason, info.exitCode])),
    );
    expect([...documented.keys()].sort()).toEqual([...Object.keys(SCENARIOS), 'interrupted'].sort());
  });

  for (const [reason, scenario] of Object.entries(SCENARIOS)) {
    it(`${reason}: kloop run prints its JSON report and exits with the documented code`, async () => {
      const expected = documentedStopReasons().get(reason)!;
      const { code, report, stderr } = await runJson(scenario);
      expect(report.stopReason, `${report.stopDetail}\n${stderr}`).toBe(reason);
      expect(report.exitCode).toBe(expected);
      expect(code).toBe(expected);
      expect(report.stopMeaning).toBe(STOP_REASONS[reason as keyof typeof STOP_REASONS].meaning);
      expect(Object.keys(report.details.baseline).sort()).toEqual(['anchor', 'optimization', 'shadow']);
    }, 60_000);
  }
});

describe('a budget stop', () => {
  it('--max-tokens: the report makes no call past the stop, lists what it could not evaluate, and the run exits 0', async () => {
    const { code, report, study, server } = await runJson(SCENARIOS.budget!);
    expect(code).toBe(0);
    expect(report.stopReason).toBe('budget');
    expect(report.stopDetail).toMatch(/^token budget reached: \d+ tokens spent/);
    // The run never evaluated the shadow (no candidate got that far): the report did not either.
    const shadowGoals = new Set(
      study.examples.filter((example) => example.partition === 'shadow').map((example) => example.goal),
    );
    expect(server.requests.filter((chat) => shadowGoals.has(chat.user))).toEqual([]);
    expect(report.notEvaluated.map(({ artifact, partition, reason }) => ({ artifact, partition, reason }))).toEqual([
      { artifact: 'baseline', partition: 'shadow', reason: 'budget' },
      { artifact: 'best', partition: 'shadow', reason: 'budget' },
    ]);
    expect(report.notEvaluated[0]!.detail).toBe(
      'the budget is spent, and the report makes no call beyond it: 3 of 3 example-repeats have no stored result',
    );
    expect(report.baseline).toEqual({ optimization: 1, anchor: 1, shadow: null });
    expect(report.details.baseline.shadow).toMatchObject({ composite: null, evaluated: false });
    expect(report.details.baseline.optimization).toMatchObject({ composite: 1, evaluated: true });
    // What the run spent, and not a call more for the report: the stop's own figure plus the calls that were in flight
    // (2500 tokens each here; at most 8 in flight per server, the rate limiter's ceiling).
    const atStop = Number(/(\d+) tokens spent/.exec(report.stopDetail)![1]);
    expect(report.usage.inputTokens + report.usage.outputTokens).toBeGreaterThanOrEqual(atStop);
    expect(report.usage.inputTokens + report.usage.outputTokens).toBeLessThan(atStop + 8 * 2500);
  }, 60_000);

  it('--max-cost-usd, text: the report is printed on stdout with the unevaluated partitions, exit 0', async () => {
    const { study, server } = await start({
      study: { stopping: 'stopping: { maxExperiments: 10, plateauRounds: 10 }' },
      executor: (_chat, gold) => ({
        content: JSON.stringify(gold),
        usage: { prompt_tokens: 10_000, completion_tokens: 1000 },
      }),
    });
    // A priced model on the scripted server: openai:gpt-4.1-mini, $0.40 / $1.60 per million tokens, $0.0056 per executor call here.
    const result = await kloop(
      'run',
      study.dir,
      ...modelArgs(server),
      '--model',
      'openai:gpt-4.1-mini',
      '--max-cost-usd',
      '0.1',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^stop reason: budget \(the cost or token budget is spent\) — cost budget reached: \$0\.\d+ spent/m,
    );
    expect(result.stdout).toMatch(/^baseline \(v1\)\s+optimization \(4\)\s+1\.0000/m);
    expect(result.stdout).toMatch(/^\s+shadow \(3\)\s+not evaluated \(budget\)$/m);
    expect(result.stdout).toContain('not evaluated: 2 of 6 partition scores');
    expect(result.stdout).toContain(
      '  baseline (v1) shadow: budget — the budget is spent, and the report makes no call beyond it: 3 of 3 example-repeats have no stored result',
    );
    const shadowGoals = new Set(
      study.examples.filter((example) => example.partition === 'shadow').map((example) => example.goal),
    );
    expect(server.requests.filter((chat) => shadowGoals.has(chat.user))).toEqual([]);
  }, 60_000);
});

describe('an infrastructure failure of the baseline', () => {
  it('--json prints the report on stdout, nothing evaluated, and exits 1', async () => {
    const { code, report, server } = await runJson(SCENARIOS.infrastructure_failure!);
    expect(code).toBe(1);
    expect(report.stopReason).toBe('infrastructure_failure');
    expect(report.stopDetail).toContain('HTTP 401');
    expect(report.experiments).toBe(0);
    expect(report.notEvaluated).toHaveLength(6);
    expect(new Set(report.notEvaluated.map((entry) => entry.reason))).toEqual(new Set(['infrastructure_failure']));
    // The failing server was not called again for the report: the run's one refused call (the first request) and no other.
    expect(server.calls).toBeLessThanOrEqual(4);
  }, 60_000);
});

describe('an incumbent with no valid output at all', () => {
  it('stops as infrastructure_failure with exit 1, naming the first invalid output, instead of a clean stop', async () => {
    // The model answers every extraction with text that is not JSON: each output is invalid (not transient), so
    // nothing can be measured. Before, the run went on proposing and stopped on plateau or no_new_proposals with exit 0.
    const { code, report } = await runJson({
      executor: () => ({ content: 'I cannot help with that.' }),
      proposer: (chat) => appendToRoles(chat, 'Weigh every role twice.'),
    });
    expect(code).toBe(1);
    expect(report.stopReason).toBe('infrastructure_failure');
    expect(report.stopDetail).toMatch(
      /^the incumbent \(version 1\) gave no valid output on any of the \d+ optimization example-repeats, so nothing can be measured \(/,
    );
    expect(report.stopDetail).toContain('check the executor with `kloop eval`');
    expect(report.experiments).toBe(0);
  }, 60_000);
});

describe('a budget too small for a single proposal', () => {
  it('is refused with exit 2 before the corpus files are admitted: nothing written', async () => {
    const { study, server } = await start({
      study: { stopping: 'stopping: { maxExperiments: 10, plateauRounds: 10 }' },
    });
    const result = await kloop(
      'run',
      study.dir,
      ...modelArgs(server),
      '--model',
      'openai:gpt-4.1-mini',
      '--max-cost-usd',
      '0.000001',
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('full proposals');
    expect(server.calls).toBe(0);
    // Before, it had admitted the corpus (every record a corpus member, with its event) before refusing.
    const file = path.join(study.dir, '.kloop', 'kloop.db');
    if (existsSync(file)) {
      const db = new Database(file, { readonly: true });
      try {
        expect((db.prepare('select count(*) as n from corpus_members').get() as { n: number }).n).toBe(0);
      } finally {
        db.close();
      }
    }
  }, 60_000);
});
