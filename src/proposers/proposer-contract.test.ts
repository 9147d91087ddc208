/**
 * The proposer contract (`proposer.ts`), run against every shipped proposer:
 * one entry per proposer in WORLDS, each with a small study it works on.
 *
 * What every proposer must do:
 *
 * 1. **never see shadow data**: asked through the loop's engine (the library
 *    API's `ask()`, the path `kloop run` takes), everything it receives —
 *    its context and every score `evaluateOptimization` gives it — holds no
 *    shadow (or anchor) example id and no text of a shadow example (a marker
 *    word is planted in each);
 * 2. return at most `maxCandidates` candidates, each a change of the
 *    incumbent **within the editable sections** (the others byte-identical)
 *    and under `maxArtifactCharacters`;
 * 3. be **deterministic under a seed**: the same context with the same seeded
 *    `random` gives the same candidates;
 * 4. **honour the signal**: with an aborted signal it evaluates nothing and
 *    calls no model, and either rejects with the signal's reason or returns;
 * 5. return **failures as data**, not exceptions: an incumbent it cannot read
 *    (or, for a model, an answer it cannot use) is a failure in the result.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStudy, type StudyExample } from '../api/create-study.ts';
import { markdownSections } from '../artifact/markdown-sections.ts';
import { createEvaluator } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { Executor } from '../executors/executor.ts';
import { createRoutingRulesExecutor } from '../executors/routing-rules/routing-rules-executor.ts';
import type { LlmClient, LlmRequest, LlmResponse } from '../providers/llm-client.ts';
import { createSeededRandom } from '../stats/index.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { topLevelYamlSections } from '../study/compose.ts';
import { createClassificationTask } from '../tasks/classification/classification-task.ts';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import { createOfflineExecutor } from '../tasks/intent/offline/offline-executor.ts';
import { playbookSections } from '../tasks/intent/offline/playbook.ts';
import type { Task } from '../tasks/task.ts';
import { readIntentCorpus } from '../test-support/intent-examples.ts';
import { ROUTING_SEED_RULES } from '../test-support/routing-study.ts';
import { createErrorDrivenProposer } from './error-driven-proposer.ts';
import { createKeywordRulesProposer } from './keyword-rules/keyword-rules-proposer.ts';
import type { ProposalContext, Proposer } from './proposer.ts';
import { createReflectiveProposer } from './reflective-proposer.ts';
import { createSearchProposer } from './search/search-proposer.ts';
import { searchSpaceSchema } from './search/space.ts';
import { parse as parseYaml } from 'yaml';

const MARKER = 'Zorblatt';
const EXAMPLES_DIR = path.resolve(import.meta.dirname, '../../examples');
const storages: string[] = [];
afterAll(() => {
  for (const dir of storages) rmSync(dir, { recursive: true, force: true });
});

/** A small study a proposer works on. */
interface World {
  name: string;
  /** A fresh proposer (a proposer may keep nothing between calls; a fresh one shows it). */
  create(): Proposer;
  task: Task;
  executor: Executor;
  artifact: string;
  examples: StudyExample[];
  sectionsOf: (text: string) => Record<string, string>;
  editableSections: string[];
  maxArtifactCharacters: number;
  /** A text this proposer cannot work from (not its format). */
  unreadable: string;
  /** Model calls made so far (for a proposer that calls one). */
  modelCalls?: () => number;
  /** Every request sent to the model so far, in order (for a proposer that calls one). */
  modelRequests?: () => LlmRequest[];
  /** A proposer whose model answers what it cannot use. */
  createWithUnusableAnswer?: () => Proposer;
}

/** The program with `editableSections` and the length ceiling, for createStudy. */
function programOf(world: World): string {
  return [
    '## Instructions',
    '',
    'Improve the artifact.',
    '',
    '## Constraints',
    '',
    '```yaml',
    `editableSections: [${world.editableSections.map((name) => JSON.stringify(name)).join(', ')}]`,
    `maxArtifactCharacters: ${world.maxArtifactCharacters}`,
    '```',
    '',
    '## Stopping criteria',
    '',
    'The budget.',
    '',
  ].join('\n');
}

const withMarker = (example: StudyExample): StudyExample =>
  example.partition === 'shadow' && typeof example.input === 'string'
    ? { ...example, input: `${example.input} ${MARKER} matters here.` }
    : example;

// --- the keyword-rules world: routing rules, offline ---
const TICKETS: Array<[string, 'billing' | 'technical', StudyExample['partition']]> = [
  ['why did you take money from my card twice this month', 'billing', 'optimization'],
  ['I paid for the yearly plan but you still show the monthly price', 'billing', 'optimization'],
  ['please stop debiting my bank account now that I have cancelled', 'billing', 'optimization'],
  ['you took forty dollars of my money when the plan costs twenty', 'billing', 'optimization'],
  ['a strange deduction of money from my account came from your company', 'billing', 'optimization'],
  ['the app crashes every time I open the settings page', 'technical', 'optimization'],
  ['your website shows a blank screen after the latest update', 'technical', 'optimization'],
  ['notifications stopped arriving on my phone since Tuesday', 'technical', 'optimization'],
  ['the export button does nothing when I click on it', 'technical', 'anchor'],
  ['please refund the invoice for order 4411', 'billing', 'anchor'],
  ['I was charged money for a plan I never ordered', 'billing', 'shadow'],
  ['search results load forever and then time out completely', 'technical', 'shadow'],
  ['the refund for my cancelled subscription never came', 'billing', 'shadow'],
];
const routingExecutor = createRoutingRulesExecutor();

// --- the reflective world: a markdown prompt whose ## Billing words section routes, offline; the model is scripted ---
const PROMPT =
  '# Route tickets\n\nKeep this introduction as it is.\n\n## Billing words\ninvoice, refund\n\n## Notes\nAsk when unsure.\n';
const promptExecutor: Executor = {
  id: 'prompt-words@1',
  deterministic: true,
  async execute(request) {
    const words = (markdownSections(request.artifact)['Billing words'] ?? '')
      .replace(/^## .*\n/, '')
      .split(/[,\s]+/)
      .filter((word) => word !== '');
    const text = request.text.toLowerCase();
    return {
      ok: true,
      output: { label: words.some((word) => text.includes(word.toLowerCase())) ? 'billing' : 'technical' },
    };
  },
};
const REFLECTIVE_ANSWER = JSON.stringify({
  candidates: [
    {
      rationale: 'Customers say money and paid, not invoice.',
      edits: [{ section: 'Billing words', text: 'invoice, refund, money, paid' }],
    },
    {
      rationale: 'A frozen section: must not come back.',
      edits: [{ section: 'Notes', text: 'Always answer billing.' }],
    },
    {
      rationale: 'Debits are billing.',
      edits: [{ section: 'Billing words', text: 'invoice, refund, debiting, dollars' }],
    },
  ],
});

function scriptedClient(answer: string): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    id: 'openai:gpt-4.1 host=127.0.0.1 temperature=0 maxOutputTokens=4096 output=schema',
    settings: {
      name: 'openai:gpt-4.1',
      provider: 'openai',
      modelId: 'gpt-4.1',
      baseURL: 'http://127.0.0.1/v1',
      host: '127.0.0.1',
      temperature: 0,
      maxOutputTokens: 4096,
      timeoutMs: 1000,
      structuredOutput: 'schema',
      price: { price: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }, known: true },
    },
    requests,
    generate: async (request): Promise<LlmResponse> => {
      requests.push(request);
      if (request.signal?.aborted) throw request.signal.reason;
      return {
        ok: true,
        text: answer,
        finishReason: 'stop',
        usage: { inputTokens: 10, outputTokens: 10, costUsd: 0 },
        cached: false,
        latencyMs: 1,
      };
    },
  };
}
const reflectiveClients: Array<{ requests: LlmRequest[] }> = [];

// --- the error-driven world: the intent playbook, offline ---
const intentCorpus = readIntentCorpus(path.join(EXAMPLES_DIR, 'intent', 'corpus', 'extra.jsonl'));
const intentExamples: StudyExample[] = [
  ...intentCorpus.filter((example) => example.partition === 'optimization').slice(0, 6),
  ...intentCorpus.filter((example) => example.partition !== 'optimization').slice(0, 4),
].map((example, index) => ({
  id: example.id,
  input: example.input,
  expected: example.expected,
  partition: index < 6 ? 'optimization' : index < 8 ? 'anchor' : 'shadow',
}));

// --- the search world: a YAML parameters file; a billing ticket is one with at least `minWords` words of the billing list ---
const PARAMS = '# Routing parameters.\nname: keep me\nrouter:\n  minWords: 3\n  listing: short\n';
const BILLING_WORDS = [
  'money',
  'paid',
  'plan',
  'price',
  'card',
  'account',
  'refund',
  'invoice',
  'charged',
  'dollars',
  'bank',
];
const paramsExecutor: Executor = {
  id: 'params-words@1',
  deterministic: true,
  async execute(request) {
    const router = (parseYaml(request.artifact) as { router: { minWords: number; listing: string } }).router;
    const words = router.listing === 'short' ? BILLING_WORDS.slice(0, 4) : BILLING_WORDS;
    const hits = words.filter((word) => request.text.toLowerCase().includes(word)).length;
    return { ok: true, output: { label: hits >= router.minWords ? 'billing' : 'technical' } };
  },
};
const paramsSpace = searchSpaceSchema.parse({
  'router.minWords': { type: 'int', low: 1, high: 4 },
  'router.listing': { type: 'choice', choices: ['short', 'long'] },
});

const WORLDS: World[] = [
  {
    name: 'search (a YAML parameters file)',
    create: () => createSearchProposer({ space: paramsSpace, artifactFile: 'params.yaml' }),
    task: createClassificationTask({ labels: ['billing', 'technical'] }),
    executor: paramsExecutor,
    artifact: PARAMS,
    examples: TICKETS.map(([text, label, partition], index) => ({
      id: `t${index + 1}`,
      input: text,
      expected: { label },
      partition,
    })),
    sectionsOf: topLevelYamlSections,
    editableSections: ['router'],
    maxArtifactCharacters: 4000,
    unreadable: 'router: [1, 2\n',
  },
  {
    name: 'keyword-rules (routing rules)',
    create: () => createKeywordRulesProposer({ maxEvaluations: 6 }),
    task: createClassificationTask({ labels: ['billing', 'technical'] }),
    executor: routingExecutor,
    artifact: ROUTING_SEED_RULES,
    examples: TICKETS.map(([text, label, partition], index) => ({
      id: `t${index + 1}`,
      input: text,
      expected: { label },
      partition,
    })),
    sectionsOf: topLevelYamlSections,
    editableSections: ['rules'],
    maxArtifactCharacters: 4000,
    unreadable: 'rules: [this is: not, {a rules file\n',
  },
  {
    name: 'reflective (a language model, scripted)',
    create: () => {
      const client = scriptedClient(REFLECTIVE_ANSWER);
      reflectiveClients.push(client);
      return createReflectiveProposer({ client });
    },
    task: createClassificationTask({ labels: ['billing', 'technical'] }),
    executor: promptExecutor,
    artifact: PROMPT,
    examples: TICKETS.map(([text, label, partition], index) => ({
      id: `t${index + 1}`,
      input: text,
      expected: { label },
      partition,
    })),
    sectionsOf: markdownSections,
    editableSections: ['Billing words'],
    maxArtifactCharacters: 4000,
    unreadable: '## A\none\n## A\ntwo\n',
    modelCalls: () => reflectiveClients.reduce((sum, client) => sum + client.requests.length, 0),
    modelRequests: () => reflectiveClients.flatMap((client) => client.requests),
    createWithUnusableAnswer: () =>
      createReflectiveProposer({ client: scriptedClient('{"candidates": [{"rationale": "cut off') }),
  },
  {
    name: 'error-driven (the intent playbook)',
    create: () => createErrorDrivenProposer({ maxEvaluations: 3, maxScreened: 40 }),
    task: createIntentTask(),
    executor: createOfflineExecutor(),
    artifact: readFileSync(path.join(EXAMPLES_DIR, 'intent', 'playbook.yaml'), 'utf8'),
    examples: intentExamples,
    sectionsOf: (text) => playbookSections(text) ?? {},
    editableSections: ['appTypeCues', 'entityTerms', 'entityAliases', 'behaviorCues'],
    maxArtifactCharacters: 50_000,
    unreadable: 'appTypeCues: [not, a playbook\n',
  },
];

/** The context the engine gave, and the proposer's own answer to it, captured through the library API's `ask()`. */
async function askThroughTheEngine(world: World): Promise<{
  context: ProposalContext;
  seen: string[];
  scored: string[][];
  answer: Awaited<ReturnType<Proposer['propose']>>;
}> {
  const storage = mkdtempSync(path.join(tmpdir(), 'kloop-proposer-contract-'));
  storages.push(storage);
  const inner = world.create();
  const seen: string[] = [];
  const scored: string[][] = [];
  let captured: { context: ProposalContext; answer: Awaited<ReturnType<Proposer['propose']>> } | undefined;
  const capture = (score: PartitionScore): PartitionScore => {
    scored.push([...new Set(score.examples.map((record) => record.exampleId))]);
    seen.push(JSON.stringify(score));
    return score;
  };
  const wrapped: Proposer = {
    id: inner.id,
    async propose(context) {
      const { random: _random, signal: _signal, evaluateOptimization, triedHashes, ...rest } = context;
      seen.push(JSON.stringify({ ...rest, triedHashes: [...triedHashes] }));
      capture(context.incumbentScores);
      const observed = {
        ...context,
        evaluateOptimization: async (text: string) => capture(await evaluateOptimization(text)),
      };
      const answer = await inner.propose(observed);
      seen.push(JSON.stringify(answer.candidates.map(({ text, delta, rationale }) => ({ text, delta, rationale }))));
      captured = { context: observed, answer };
      return answer;
    },
  };
  const study = await createStudy({
    storage,
    artifact: world.artifact,
    examples: world.examples.map(withMarker),
    task: world.task,
    execute: async (artifact, input, { text, repeat }) => {
      const result = await withArtifactOverride(artifact, () =>
        world.executor.execute({ input, text, artifact, repeat }),
      );
      if (!result.ok) throw new Error(result.message);
      return result.output;
    },
    proposer: wrapped,
    program: programOf(world),
    sectionsOf: world.sectionsOf,
    candidatesPerRound: 2,
    seed: 3,
  });
  try {
    await study.ask();
  } finally {
    await study.close();
  }
  if (captured === undefined) throw new Error(`${world.name}: the engine never asked the proposer`);
  return { ...captured, seen, scored };
}

/** A context of the world's own, built directly: its optimization examples and their scores, a seeded random. */
async function directContext(
  world: World,
  overrides: Partial<ProposalContext> = {},
): Promise<ProposalContext & { evaluations: () => number }> {
  const examples = world.examples
    .filter((example) => example.partition === 'optimization')
    .map((example) => ({ ...example, tags: [], text: String(example.input) }));
  const evaluator = createEvaluator({ task: world.task, executor: world.executor, corpus: examples });
  let evaluations = 0;
  const evaluate = (text: string): Promise<PartitionScore> =>
    withArtifactOverride(text, () => evaluator.evaluate({ artifactText: text, partition: 'optimization', examples }));
  const incumbentScores = await evaluate(world.artifact);
  return {
    incumbentText: world.artifact,
    instructions: 'Improve the artifact.',
    constraints: '',
    limits: { editableSections: world.editableSections, maxArtifactCharacters: world.maxArtifactCharacters },
    examples,
    incumbentScores,
    evaluateOptimization: (text) => {
      evaluations += 1;
      return evaluate(text);
    },
    history: [],
    triedHashes: new Set(),
    maxCandidates: 2,
    random: createSeededRandom(42),
    attempt: 0,
    evaluations: () => evaluations,
    ...overrides,
  };
}

const shadowIds = (world: World): string[] =>
  world.examples.filter((example) => example.partition === 'shadow').map((example) => example.id);
const anchorIds = (world: World): string[] =>
  world.examples.filter((example) => example.partition === 'anchor').map((example) => example.id);
const comparable = (result: Awaited<ReturnType<Proposer['propose']>>) =>
  result.candidates.map(({ text, delta, rationale, expectedNetFixes, flags }) => ({
    text,
    delta,
    rationale,
    expectedNetFixes,
    flags,
  }));

describe.each(WORLDS)('the proposer contract: $name', (world) => {
  it('never sees shadow data, and returns at most maxCandidates candidates within the editable sections and the length ceiling', {
    timeout: 120_000,
  }, async () => {
    const sent = world.modelRequests?.().length ?? 0;
    const { context, seen, scored, answer } = await askThroughTheEngine(world);
    // What the proposer sent on to a model counts as seen too.
    const requests = (world.modelRequests?.() ?? [])
      .slice(sent)
      .map(({ signal: _signal, ...request }) => JSON.stringify(request));
    if (world.modelRequests !== undefined) expect(requests.length).toBeGreaterThan(0);
    const everything = [...seen, ...requests].join('\n');
    expect(everything).not.toContain(MARKER);
    const optimization = new Set(
      world.examples.filter((example) => example.partition === 'optimization').map((example) => example.id),
    );
    expect(context.examples.map((example) => example.id).sort()).toEqual([...optimization].sort());
    for (const ids of scored)
      expect(
        ids.every((id) => optimization.has(id)),
        ids.join(', '),
      ).toBe(true);
    for (const id of [...shadowIds(world), ...anchorIds(world)]) expect(everything).not.toMatch(new RegExp(`"${id}"`));
    expect(answer.candidates.length).toBeGreaterThan(0); // else the checks below say nothing
    expect(answer.candidates.length).toBeLessThanOrEqual(context.maxCandidates);
    const before = world.sectionsOf(context.incumbentText);
    for (const candidate of answer.candidates) {
      expect(candidate.text).not.toBe(context.incumbentText);
      expect(candidate.text.length).toBeLessThanOrEqual(world.maxArtifactCharacters);
      const after = world.sectionsOf(candidate.text);
      for (const [name, body] of Object.entries(before))
        if (!world.editableSections.includes(name)) expect(after[name], `section ${name}`).toBe(body);
      for (const name of Object.keys(after))
        expect(name in before || world.editableSections.includes(name), `new section ${name}`).toBe(true);
    }
  });

  it('is deterministic under a seed: the same context and seed give the same candidates', {
    timeout: 120_000,
  }, async () => {
    const sent = world.modelRequests?.().length ?? 0;
    const first = await world.create().propose(await directContext(world));
    const second = await world.create().propose(await directContext(world));
    expect(first.candidates.length).toBeGreaterThan(0);
    expect(comparable(second)).toEqual(comparable(first));
    if (world.modelRequests !== undefined) {
      // The same question, seeded nonce included: a model (or the response cache) answers it alike.
      const [one, two] = world.modelRequests().slice(sent);
      expect(two).toEqual(one);
      expect(typeof one?.repeat).toBe('number');
    }
  });

  it('honours an aborted signal: evaluates nothing, calls no model, and rejects with its reason or returns', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted');
    controller.abort(reason);
    const context = await directContext(world, { signal: controller.signal });
    const calls = world.modelCalls?.() ?? 0;
    const proposer = world.create();
    const outcome = await proposer.propose(context).then(
      (result) => ({ rejected: false as const, result }),
      (error: unknown) => ({ rejected: true as const, error }),
    );
    if (outcome.rejected) expect(outcome.error).toBe(reason);
    expect(context.evaluations()).toBe(0);
    expect(world.modelCalls?.() ?? 0).toBe(calls);
  });

  it('returns failures as data: an incumbent it cannot read is a failure in the result, not an exception', async () => {
    const result = await world.create().propose(await directContext(world, { incumbentText: world.unreadable }));
    expect(result.candidates).toEqual([]);
    expect(result.failures.length).toBeGreaterThan(0);
    for (const failure of result.failures) expect(typeof failure.reason).toBe('string');
    if (world.createWithUnusableAnswer !== undefined) {
      const unusable = await world.createWithUnusableAnswer().propose(await directContext(world));
      expect(unusable.candidates).toEqual([]);
      expect(unusable.failures.length).toBeGreaterThan(0);
    }
  });
});
