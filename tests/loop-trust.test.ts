/**
 * The loop around the gate judges what it pays for and never dies of one bad
 * answer: transient failures are not stored, a malformed proposer answer is
 * retried with a fresh sample (in the run and in the next run), two good
 * candidates of one round that edit the same section are both merged, a
 * lucky first draw of a noisy incumbent is diluted by topping it up, and a
 * proposer out of ideas stops the run as `no_new_proposals`.
 */
import { asIntentExamples } from '../src/corpus/intent-example.ts';
import { intentTask } from '../src/tasks/intent/intent-task.ts';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../src/artifact/content-hash.ts';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { createEvaluator } from '../src/evaluator/evaluator.ts';
import { createLlmStudyPlugins } from '../src/providers-subpath.ts';
import type { Proposer } from '../src/proposers/proposer.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getActiveArtifactText } from '../src/storage/registry.ts';
import { loadStudy } from '../src/study/load-study.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import type { Executor } from '../src/executors/executor.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import {
  loopbackFetch,
  startFakeOpenAiServer,
  type ChatRequest,
  type FakeResponse,
  type FakeServer,
} from './llm-fake-openai-server.ts';
import { makeSmallStudy } from './small-intent-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../examples/intent-llm');
const CORPUS = path.resolve(import.meta.dirname, '../examples/intent/corpus');
const ROLE_HINT = 'Decide each role from what the record means in this business, not from its name alone.';
const BEHAVIOUR_HINT =
  'Every verb the users must perform names a behaviour: reminders are notification, sign-off is approval.';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function goldOf(example: IntentExample): Intent {
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

/** A copy of examples/intent-llm (prompt, program) with its own kloop.yaml lines. */
function makeLlmStudy(lines: string[]): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-loop-trust-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  copyFileSync(path.join(EXAMPLE, 'prompt.md'), path.join(directory, 'prompt.md'));
  copyFileSync(path.join(EXAMPLE, 'program.md'), path.join(directory, 'program.md'));
  writeFileSync(
    path.join(directory, 'kloop.yaml'),
    [
      'executor: { kind: llm, model: "openai-compatible:fake", temperature: 0, maxOutputTokens: 1024, timeoutMs: 2000 }',
      'artifact: prompt.md',
      `corpus: ["${CORPUS}/*.yaml", "${CORPUS}/*.jsonl"]`,
      'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 2 }',
      'gate: { repeats: 1, requireCalibration: false }',
      ...lines,
    ].join('\n'),
  );
  return directory;
}

/**
 * The executor half of a fake server: the gold intent, with every role wrong unless the prompt
 * carries ROLE_HINT and every behaviour missing unless it carries BEHAVIOUR_HINT.
 */
function hintedAnswer(goldByGoal: Map<string, Intent>, chat: ChatRequest): FakeResponse {
  const gold = goldByGoal.get(chat.user);
  if (gold === undefined) return { status: 400, body: { error: { message: 'unknown goal' } } };
  const roles = chat.system.includes(ROLE_HINT);
  const behaviours = chat.system.includes(BEHAVIOUR_HINT);
  return {
    content: JSON.stringify({
      ...gold,
      entities: gold.entities.map((entity) => ({
        ...entity,
        role: roles ? entity.role : entity.role === 'reference' ? 'party' : 'reference',
      })),
      behaviors: behaviours ? gold.behaviors : [],
    }),
  };
}

async function serve(respond: (chat: ChatRequest) => FakeResponse | Promise<FakeResponse>): Promise<FakeServer> {
  const fake = await startFakeOpenAiServer(respond);
  cleanups.push(() => fake.close());
  return fake;
}

async function open(study: string): Promise<StudyDatabase> {
  const db = await openDatabase(studyDatabasePath(study));
  cleanups.push(() => db.destroy());
  return db;
}

function loadLlm(study: string, fake: FakeServer, getDatabase: () => StudyDatabase | undefined): LoadedStudy {
  return loadStudy(
    study,
    createLlmStudyPlugins({
      baseURL: fake.baseURL,
      deterministic: true,
      getDatabase,
      fetch: loopbackFetch,
      maxRetries: 0,
      sleep: async () => undefined,
    }),
  );
}

function corpusGold(study: string): Map<string, Intent> {
  const probe = loadStudy(
    study,
    createLlmStudyPlugins({ baseURL: 'http://127.0.0.1:9/v1', getDatabase: () => undefined }),
  );
  return new Map(asIntentExamples(probe.corpus).map((example) => [example.text, goldOf(example)]));
}

const isProposal = (chat: ChatRequest): boolean => chat.body.response_format?.json_schema?.name === 'proposal';

function sectionOf(prompt: string, name: string): string {
  return new RegExp(`## ${name}\\n([\\s\\S]*?)\\n## `).exec(prompt)![1]!.trim();
}

describe('transient failures are never stored as results', () => {
  it('a timeout, then a healthy server: the second evaluation calls the executor again, only where it failed', async () => {
    const study = makeLlmStudy([]);
    const gold = corpusGold(study);
    let slow = true;
    const fake = await serve(async (chat) => {
      const answer = hintedAnswer(gold, chat);
      return slow && chat.user.length % 2 === 0 ? { ...answer, delayMs: 3000 } : answer;
    });
    const db = await open(study);
    const loaded = loadLlm(study, fake, () => db);
    const examples = loaded.partitions.optimization.slice(0, 6);
    const evaluator = createEvaluator({
      task: intentTask,
      executor: loaded.executor,
      corpus: loaded.corpus,
      results: openNotebook(db),
      concurrency: 6,
    });
    const prompt = readFileSync(path.join(study, 'prompt.md'), 'utf8');
    const first = await evaluator.evaluate({ artifactText: prompt, partition: 'optimization', examples });
    const timedOut = examples.filter((example) => example.text.length % 2 === 0).length;
    expect(timedOut).toBeGreaterThan(0);
    expect(first.transient).toBe(timedOut);
    expect(first.invalid).toBe(timedOut);
    const stored = await db.selectFrom('example_results').select('example_id').execute();
    expect(stored).toHaveLength(examples.length - timedOut); // the timeouts were not stored
    const before = fake.calls;
    slow = false;
    const second = await evaluator.evaluate({ artifactText: prompt, partition: 'optimization', examples });
    expect(fake.calls - before).toBe(timedOut);
    expect(second.invalid).toBe(0);
    expect(second.transient).toBe(0);
  });
});

describe('a malformed proposer answer is never replayed', () => {
  it('is retried with a fresh sample in the same round, and the next round proposes', async () => {
    const study = makeLlmStudy(['stopping: { maxExperiments: 2, plateauRounds: 3, maxConsecutiveFailures: 3 }']);
    const gold = corpusGold(study);
    const seeds: number[] = [];
    let proposals = 0;
    const fake = await serve((chat) => {
      if (!isProposal(chat)) return hintedAnswer(gold, chat);
      proposals += 1;
      seeds.push(chat.body.seed!);
      if (proposals === 1) return { content: '{"candidates": [{"rationale": "unfinished' };
      const roles = sectionOf(/<<<PROMPT\n([\s\S]*?)\nPROMPT>>>/.exec(chat.user)![1]!, 'Roles');
      const hint = roles.includes(ROLE_HINT) ? BEHAVIOUR_HINT : ROLE_HINT;
      return {
        content: JSON.stringify({
          candidates: [{ rationale: 'One more rule.', edits: [{ section: 'Roles', text: `${roles}\n\n${hint}` }] }],
        }),
      };
    });
    let db: StudyDatabase | undefined;
    const loaded = loadLlm(study, fake, () => db);
    db = await open(study);
    const outcome = await runStudy({ study: loaded, notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('max_experiments');
    const calls = await db
      .selectFrom('proposals')
      .select(['round', 'attempt', 'outcome', 'failures'])
      .orderBy('id')
      .execute();
    expect(calls.map(({ round, attempt, outcome }) => ({ round, attempt, outcome }))).toEqual([
      { round: 1, attempt: 0, outcome: 'failed' },
      { round: 1, attempt: 1, outcome: 'candidates' },
      { round: 2, attempt: 0, outcome: 'candidates' },
    ]);
    const failure = JSON.parse(calls[0]!.failures) as Array<{ code: string; raw: string }>;
    expect(failure[0]).toMatchObject({ code: 'broken_json' });
    expect(failure[0]!.raw).toContain('unfinished');
    // The retry asked again with another nonce: a fresh sample, not the cached failure.
    expect(new Set(seeds).size).toBe(seeds.length);
    const decided = await db.selectFrom('experiments').select(['round', 'decision']).orderBy('id').execute();
    expect(decided.map((row) => [row.round, row.decision])).toEqual([
      [1, 'accepted'],
      [2, 'accepted'],
    ]);
  });

  it('a study stopped by failed answers proposes again on the next run against a healthy server', async () => {
    const study = makeLlmStudy(['stopping: { maxExperiments: 1, plateauRounds: 3, maxConsecutiveFailures: 2 }']);
    const gold = corpusGold(study);
    let healthy = false;
    let proposerCalls = 0;
    const fake = await serve((chat) => {
      if (!isProposal(chat)) return hintedAnswer(gold, chat);
      proposerCalls += 1;
      if (!healthy) return { content: '```json\n{"candidates": [' };
      const roles = sectionOf(/<<<PROMPT\n([\s\S]*?)\nPROMPT>>>/.exec(chat.user)![1]!, 'Roles');
      return {
        content: JSON.stringify({
          candidates: [
            { rationale: 'Say how to decide roles.', edits: [{ section: 'Roles', text: `${roles}\n\n${ROLE_HINT}` }] },
          ],
        }),
      };
    });
    let db: StudyDatabase | undefined;
    db = await open(study);
    const first = await runStudy({ study: loadLlm(study, fake, () => db), notebook: openNotebook(db) });
    expect(first.stopReason).toBe('consecutive_failures');
    expect(proposerCalls).toBe(2);
    healthy = true;
    const second = await runStudy({ study: loadLlm(study, fake, () => db), notebook: openNotebook(db) });
    expect(proposerCalls).toBe(3); // asked again: no replayed failure
    expect(second.stopReason).toBe('max_experiments');
    expect(await getActiveArtifactText(db)).toContain(ROLE_HINT);
  });
});

describe('edits that compose', () => {
  it('merges two good candidates of one round that edit the same section: the second is rebased and judged again', async () => {
    const study = makeLlmStudy(['stopping: { maxExperiments: 2, plateauRounds: 3, maxRounds: 1 }']);
    const gold = corpusGold(study);
    const fake = await serve((chat) => {
      if (!isProposal(chat)) return hintedAnswer(gold, chat);
      const roles = sectionOf(/<<<PROMPT\n([\s\S]*?)\nPROMPT>>>/.exec(chat.user)![1]!, 'Roles');
      return {
        content: JSON.stringify({
          candidates: [
            { rationale: 'Say how to decide roles.', edits: [{ section: 'Roles', text: `${roles}\n\n${ROLE_HINT}` }] },
            { rationale: 'Name the behaviours.', edits: [{ section: 'Roles', text: `${roles}\n\n${BEHAVIOUR_HINT}` }] },
          ],
        }),
      };
    });
    let db: StudyDatabase | undefined;
    const loaded = loadLlm(study, fake, () => db);
    db = await open(study);
    const rebased: boolean[] = [];
    await runStudy({
      study: loaded,
      notebook: openNotebook(db),
      onEvent: (event) => (event.type === 'decision' ? rebased.push(event.rebased === true) : undefined),
    });
    const decided = await db
      .selectFrom('experiments')
      .select(['decision', 'reason', 'evidence'])
      .orderBy('id')
      .execute();
    expect(decided.map((row) => row.decision)).toEqual(['accepted', 'accepted']);
    expect(rebased).toEqual([false, true]);
    expect(JSON.parse(decided[1]!.evidence).rebased).toMatchObject({ method: 'three-way-merge', conflicts: 0 });
    const active = await getActiveArtifactText(db);
    expect(active).toContain(ROLE_HINT);
    expect(active).toContain(BEHAVIOUR_HINT);
  });
});

describe('a noisy incumbent is re-measured', () => {
  /**
   * A seeded stochastic executor: the app type is right with probability q, read from the
   * artifact's last `# quality q` line (0.5 without one); everything else is gold. The seed
   * artifact was lucky on its first five repeats (q = 1 there).
   */
  function luckyIncumbentExecutor(seedText: string, examples: readonly IntentExample[]): Executor {
    const byGoal = new Map(examples.map((example) => [example.text, example]));
    return {
      id: 'lucky-incumbent@1',
      deterministic: false,
      async execute(request) {
        const example = byGoal.get(request.text)!;
        const gold = goldOf(example);
        const quality = Number(/# quality ([\d.]+)\s*$/.exec(request.artifact)?.[1] ?? 0.5);
        const q = request.artifact === seedText && request.repeat < 5 ? 1 : quality;
        const draw = createSeededRandom(
          Number.parseInt(
            contentHash(`${request.text}|${request.repeat}|${contentHash(request.artifact)}`).slice(0, 8),
            16,
          ),
        )();
        const wrong = gold.appType === 'crm' ? 'helpdesk' : 'crm';
        return { ok: true, output: { ...gold, appType: draw < q ? gold.appType : wrong } as Intent };
      },
    };
  }

  /** One better candidate per round (q = 0.95), each with its own words so none is a near-duplicate. */
  function betterProposer(): Proposer {
    const words = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord'];
    return {
      id: 'better@1',
      async propose(context) {
        const round = context.history.filter((entry) => entry.decision !== 'skipped').length;
        const word = words[round % words.length]!;
        return {
          candidates: [
            {
              text: `${context.incumbentText}\n# ${word} ${word}s\n# quality 0.95\n`,
              delta: `note ${word} ${word}s quality`,
              rationale: 'better app types',
            },
          ],
          failures: [],
        };
      },
    };
  }

  async function run(incumbentRepeats: number): Promise<string[]> {
    const small = makeSmallStudy({
      optimization: 30,
      anchor: 5,
      shadow: 20,
      config: [
        'proposer: { candidatesPerRound: 1, concurrency: 1 }',
        `gate: { repeats: 5, incumbentRepeats: ${incumbentRepeats}, requireCalibration: false }`,
        'stopping: { maxExperiments: 2, plateauRounds: 5, maxRounds: 2 }',
        'corpusPolicy: { graduateAfterDecisions: 1000, maxShadowExposures: 1000 }',
      ],
    });
    cleanups.push(small.cleanup);
    // Every section may change: the candidates carry their quality in a trailing comment.
    const programFile = path.join(small.dir, 'program.md');
    writeFileSync(programFile, readFileSync(programFile, 'utf8').replace(/^editableSections:\n(?: {2}- .*\n)+/m, ''));
    const loaded = loadStudy(small.dir);
    const study: LoadedStudy = {
      ...loaded,
      executor: luckyIncumbentExecutor(loaded.artifactText, asIntentExamples(loaded.corpus)),
      proposer: betterProposer(),
    };
    const db = await openDatabase(':memory:');
    cleanups.push(() => db.destroy());
    // Calibrated per-example noise for the anchors: a Bernoulli app type, weight 0.25.
    const exampleSds = Object.fromEntries(study.corpus.map((example) => [example.id, 0.125]));
    await runStudy({ study, notebook: openNotebook(db), calibration: { noiseSd: 0.02, exampleSds } });
    return (await db.selectFrom('experiments').select('reason').orderBy('id').execute()).map((row) => row.reason);
  }

  it('tops the incumbent up each round, so its lucky first draw stops blocking a real gain', async () => {
    // Round 1: the incumbent's 5 lucky repeats (q = 1) beat the candidate (q = 0.95). Round 2: topped
    // up to 10 repeats its mean falls to q = 0.75, and the next candidate's real gain is accepted.
    expect(await run(20)).toEqual(['below_margin', 'accepted']);
    // Without the top-up (incumbentRepeats = repeats) the lucky draw blocks every round.
    expect(await run(5)).toEqual(['below_margin', 'below_margin']);
  });
});

describe('an exhausted proposer', () => {
  it('stops the run as no_new_proposals, exit 0, after its idle patience of rounds with nothing new', async () => {
    const small = makeSmallStudy({
      optimization: 14,
      anchor: 3,
      shadow: 8,
      config: ['stopping: { maxExperiments: 20, plateauRounds: 10, idleRounds: 3 }'],
    });
    cleanups.push(small.cleanup);
    const loaded = loadStudy(small.dir);
    let calls = 0;
    const same: Proposer = {
      id: 'same@1',
      async propose(context) {
        calls += 1;
        return {
          candidates: [
            { text: `${loaded.artifactText}\n# the one idea\n`, delta: 'the one idea', rationale: 'always the same' },
          ],
          failures: [],
          repeats: 0,
        };
      },
    };
    const db = await openDatabase(':memory:');
    cleanups.push(() => db.destroy());
    const outcome = await runStudy({ study: { ...loaded, proposer: same }, notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('no_new_proposals');
    // Patience = stopping.idleRounds 3 + ⌊19 experiments left / (2 × 6 candidates per round)⌋ = 4 (src/loop/idle-patience.ts).
    expect(outcome.stopDetail).toContain('4 rounds in a row brought nothing new');
    expect(outcome.stopDetail).toContain('patience 4');
    // One round evaluated the idea; four idle rounds followed.
    expect(calls).toBe(5);
    const rows = await db.selectFrom('experiments').select('decision').execute();
    expect(rows.filter((row) => row.decision !== 'skipped')).toHaveLength(1);
  });
});
