/**
 * A small LLM study for the tests of how runs stop (budget, interrupt,
 * failing candidates, the exit-code table): the prompt and program of
 * examples/intent-llm, a slice of the reference corpus in one JSONL file, a
 * reflective proposer, and a scripted OpenAI-compatible server on 127.0.0.1
 * (tests/llm-fake-openai-server.ts) that answers the executor from the gold
 * and the proposer from a script.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IntentExampleRecord } from '../src/corpus/intent-example.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import type { ChatRequest, FakeResponse, FakeServer } from './llm-fake-openai-server.ts';
import { startFakeOpenAiServer } from './llm-fake-openai-server.ts';
import { referenceCorpus } from './small-intent-study.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../examples/intent-llm');

/** The key the child processes get (a fake one: the server is on loopback). */
export const TEST_KEY = 'sk-stop-tests-0000';

export interface LlmStopStudyOptions {
  /** Examples per partition, from the start of each reference partition. Default 4 / 2 / 3. */
  optimization?: number;
  anchor?: number;
  shadow?: number;
  /** kloop.yaml lines after the defaults (a later key of the same name is an error: pass whole blocks via `proposer`, `gate`, `stopping`). */
  proposer?: string;
  gate?: string;
  stopping?: string;
  extra?: string[];
}

export interface LlmStopStudy {
  dir: string;
  /** The study's examples, as written. */
  examples: IntentExampleRecord[];
  /** The gold intent of a goal text. */
  goldOf(goal: string): Intent | undefined;
  cleanup(): void;
}

function goldIntent(example: IntentExampleRecord): Intent {
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

/** Writes the study to a new temporary folder. */
export function makeLlmStopStudy(options: LlmStopStudyOptions = {}): LlmStopStudy {
  const reference = referenceCorpus();
  const examples = [
    ...reference.optimization.slice(0, options.optimization ?? 4),
    ...reference.anchor.slice(0, options.anchor ?? 2),
    ...reference.shadow.slice(0, options.shadow ?? 3),
  ];
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-llm-stop-'));
  mkdirSync(path.join(dir, 'corpus'));
  copyFileSync(path.join(EXAMPLE, 'prompt.md'), path.join(dir, 'prompt.md'));
  copyFileSync(path.join(EXAMPLE, 'program.md'), path.join(dir, 'program.md'));
  writeFileSync(
    path.join(dir, 'corpus', 'small.jsonl'),
    `${examples.map((example) => JSON.stringify(example)).join('\n')}\n`,
  );
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    [
      'task: intent',
      'executor: { kind: llm, model: "openai-compatible:fake", temperature: 0, maxOutputTokens: 1024, timeoutMs: 30000 }',
      'artifact: prompt.md',
      'corpus: corpus/small.jsonl',
      options.proposer ?? 'proposer: { kind: reflective, candidatesPerRound: 1, concurrency: 1 }',
      options.gate ?? 'gate: { repeats: 1, requireCalibration: false }',
      options.stopping ?? 'stopping: { maxExperiments: 3, plateauRounds: 3, maxConsecutiveFailures: 3 }',
      'seed: 5',
      ...(options.extra ?? []),
    ].join('\n'),
  );
  const gold = new Map(examples.map((example) => [example.goal, goldIntent(example)]));
  return {
    dir,
    examples,
    goldOf: (goal) => gold.get(goal),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** True for a request of the reflective proposer (its response format is named `proposal`). */
export const isProposal = (chat: ChatRequest): boolean => chat.body.response_format?.json_schema?.name === 'proposal';

/** The `## name` section of a prompt. */
export function sectionOf(prompt: string, name: string): string {
  return new RegExp(`## ${name}\\n([\\s\\S]*?)\\n## `).exec(prompt)![1]!.trim();
}

/** The incumbent prompt a proposer request carries. */
export function incumbentOf(chat: ChatRequest): string {
  return /<<<PROMPT\n([\s\S]*?)\nPROMPT>>>/.exec(chat.user)![1]!;
}

/** A proposer answer that appends `line` to the Roles section of the incumbent it was shown. */
export function appendToRoles(chat: ChatRequest, line: string): FakeResponse {
  const roles = sectionOf(incumbentOf(chat), 'Roles');
  return {
    content: JSON.stringify({
      candidates: [{ rationale: `add: ${line}`, edits: [{ section: 'Roles', text: `${roles}\n\n${line}` }] }],
    }),
  };
}

/**
 * Starts the server: executor requests get the gold intent of their goal
 * (HTTP 400 for an unknown goal) unless `executor` answers otherwise;
 * proposer requests go to `proposer`.
 */
export function serveStudy(
  study: LlmStopStudy,
  handlers: {
    proposer: (chat: ChatRequest) => FakeResponse | Promise<FakeResponse>;
    executor?: (chat: ChatRequest, gold: Intent | undefined) => FakeResponse | Promise<FakeResponse> | undefined;
  },
): Promise<FakeServer> {
  return startFakeOpenAiServer(async (chat) => {
    if (isProposal(chat)) return handlers.proposer(chat);
    const gold = study.goldOf(chat.user);
    const scripted = await handlers.executor?.(chat, gold);
    if (scripted !== undefined) return scripted;
    return gold === undefined
      ? { status: 400, body: { error: { message: 'unknown goal' } } }
      : { content: JSON.stringify(gold) };
  });
}

/** The arguments that point a command at the fake server. */
export function modelArgs(server: FakeServer): string[] {
  return ['--base-url', server.baseURL, '--deterministic'];
}
