/**
 * The whole LLM study over loopback HTTP: loadStudy with the LLM plugins
 * (example study files from examples/intent-llm), the reflective proposer and
 * the LLM executor on a scripted OpenAI chat-completions server, runStudy.
 */
import { asIntentExamples } from '../src/corpus/intent-example.ts';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.ts';
import { createLlmStudyPlugins } from '../src/providers-subpath.ts';
import { replaceSections } from '../src/artifact/markdown-sections.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getActiveArtifactText } from '../src/storage/registry.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import {
  loopbackFetch,
  startFakeOpenAiServer,
  type ChatRequest,
  type FakeResponse,
  type FakeServer,
} from './llm-fake-openai-server.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../examples/intent-llm');
const CORPUS = path.resolve(import.meta.dirname, '../examples/intent/corpus');
const KEY = 'sk-loop-planted-key-9876543210';
const HINT = 'Decide each role from what the record means in this business, not from its name alone.';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function makeStudy(extraYaml = ''): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-llm-loop-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  copyFileSync(path.join(EXAMPLE, 'prompt.md'), path.join(directory, 'prompt.md'));
  copyFileSync(path.join(EXAMPLE, 'program.md'), path.join(directory, 'program.md'));
  writeFileSync(
    path.join(directory, 'kloop.yaml'),
    [
      'task: intent',
      'executor: { kind: llm, model: "openai:gpt-4.1-mini", temperature: 0, maxOutputTokens: 1024, timeoutMs: 5000 }',
      'artifact: prompt.md',
      `corpus: ["${CORPUS}/*.yaml", "${CORPUS}/*.jsonl"]`,
      'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 2 }',
      'gate: { repeats: 1 }',
      'stopping: { maxExperiments: 6, plateauRounds: 1, maxConsecutiveFailures: 2, maxRounds: 2 }',
      'seed: 3',
      extraYaml,
    ].join('\n'),
  );
  return directory;
}

/** Executor answers: gold, but every role is wrong unless the prompt carries HINT. */
function executorAnswer(goldByGoal: Map<string, Intent>, chat: ChatRequest): FakeResponse {
  const gold = goldByGoal.get(chat.user);
  if (gold === undefined) return { status: 400, body: { error: { message: 'unknown goal' } } };
  if (chat.system.includes(HINT)) return { content: JSON.stringify(gold) };
  const wrong: Intent = {
    ...gold,
    entities: gold.entities.map((entity) => ({ ...entity, role: entity.role === 'reference' ? 'party' : 'reference' })),
  };
  return { content: JSON.stringify(wrong) };
}

async function startServer(study: string, proposer: (chat: ChatRequest) => FakeResponse): Promise<FakeServer> {
  const loaded = loadStudy(
    study,
    createLlmStudyPlugins({ getDatabase: () => undefined, env: { OPENAI_API_KEY: KEY } }),
  );
  const goldByGoal = new Map<string, Intent>(
    asIntentExamples(loaded.corpus).map((example) => [
      example.text,
      {
        appType: (acceptedAppTypes(example.expected)[0] ?? 'other') as Intent['appType'],
        entities: (example.expected.entities ?? []).map((entity) => ({
          name: entity.name,
          role: entity.role ?? 'reference',
        })),
        relations: example.expected.relations ?? [],
        behaviors: example.expected.behaviors ?? [],
        projections: example.expected.projections ?? [],
      },
    ]),
  );
  const fake = await startFakeOpenAiServer((chat) =>
    chat.body.response_format?.json_schema?.name === 'proposal' ? proposer(chat) : executorAnswer(goldByGoal, chat),
  );
  cleanups.push(() => fake.close());
  return fake;
}

async function open(study: string): Promise<StudyDatabase> {
  const db = await openDatabase(studyDatabasePath(study));
  cleanups.push(() => db.destroy());
  return db;
}

describe('an LLM study over loopback HTTP', () => {
  it('accepts a reflective rewrite that generalizes, with every call cached and no key on disk', async () => {
    const study = makeStudy();
    const seed = readFileSync(path.join(study, 'prompt.md'), 'utf8');
    const roles = /## Roles\n([\s\S]*?)\n## /.exec(seed)![1]!;
    const proposals = [
      {
        rationale: 'Roles are confused; say how to decide them.',
        edits: [{ section: 'Roles', text: `${roles.trim()}\n\n${HINT}` }],
      },
      {
        rationale: 'Name the kanban view.',
        edits: [
          { section: 'Views', text: 'List the views the users need, including `kanban` boards for status columns.' },
        ],
      },
    ];
    const fake = await startServer(study, () => ({ content: JSON.stringify({ candidates: proposals }) }));
    let db: StudyDatabase | undefined;
    const plugins = createLlmStudyPlugins({
      baseURL: fake.baseURL,
      deterministic: true,
      getDatabase: () => db,
      env: { OPENAI_API_KEY: KEY },
      fetch: loopbackFetch,
    });
    const loaded = loadStudy(study, plugins);
    expect(loaded.executor.deterministic).toBe(true);
    db = await open(study);
    expect(plugins.checkBudget(loaded).proposalsCovered).toBe(Infinity);

    const outcome = await runStudy({ study: loaded, notebook: openNotebook(db) });
    const experiments = await db
      .selectFrom('experiments')
      .select(['decision', 'reason', 'delta', 'rationale'])
      .orderBy('id')
      .execute();
    const accepted = experiments.filter((row) => row.decision === 'accepted');
    expect(accepted.length).toBe(1);
    expect(accepted[0]!.delta).toContain(HINT);
    expect(await getActiveArtifactText(db)).toBe(
      (replaceSections(seed, [{ section: 'Roles', body: `${roles.trim()}\n\n${HINT}` }]) as { text: string }).text,
    );
    expect(outcome.stopReason).not.toBe('infrastructure_failure');
    expect(plugins.usage().calls).toBeGreaterThan(0);

    const cached = await db
      .selectFrom('response_cache')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(cached.count)).toBeGreaterThan(0);
    await db.destroy();
    cleanups.pop();
    for (const name of readdirSync(path.join(study, '.kloop'))) {
      expect(readFileSync(path.join(study, '.kloop', name)).includes(Buffer.from(KEY))).toBe(false);
    }
  });

  it('stops with infrastructure_failure when the proposer is refused with HTTP 401', async () => {
    const study = makeStudy();
    const fake = await startServer(study, () => ({
      status: 401,
      body: { error: { message: 'Incorrect API key provided' } },
    }));
    let db: StudyDatabase | undefined;
    const plugins = createLlmStudyPlugins({
      baseURL: fake.baseURL,
      getDatabase: () => db,
      env: { OPENAI_API_KEY: KEY },
      fetch: loopbackFetch,
    });
    const loaded = loadStudy(study, plugins);
    db = await open(study);
    const outcome = await runStudy({ study: loaded, notebook: openNotebook(db) });
    expect(outcome.stopReason).toBe('infrastructure_failure');
    expect(outcome.stopDetail).toContain('401');
    expect(outcome.stopDetail).not.toContain(KEY);
    expect(fake.requests.filter((chat) => chat.body.response_format?.json_schema?.name === 'proposal').length).toBe(1);
  });

  it('refuses to start when the budget covers fewer than 3 full proposals', async () => {
    const study = makeStudy();
    const plugins = createLlmStudyPlugins({
      maxCostUsd: 0.01,
      getDatabase: () => undefined,
      env: { OPENAI_API_KEY: KEY },
    });
    const loaded = loadStudy(study, plugins);
    expect(() => plugins.checkBudget(loaded)).toThrow(InputError);
    expect(() => plugins.checkBudget(loaded)).toThrow(/covers 0 full proposals, fewer than 3/);
    const roomy = createLlmStudyPlugins({
      maxCostUsd: 100,
      getDatabase: () => undefined,
      env: { OPENAI_API_KEY: KEY },
    });
    expect(roomy.checkBudget(loadStudy(study, roomy)).proposalsCovered).toBeGreaterThanOrEqual(3);
  });
});
