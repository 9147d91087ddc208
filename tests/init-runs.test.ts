/**
 * Issue 35, item 1: the studies `kloop init` offers run as written. For each
 * task × executor, `kloop init`, then `kloop run` on its own four sample
 * records with nothing of kloop.yaml changed: the run starts, evaluates the
 * seed and stops cleanly. Where a model is called (an `llm` executor and its
 * reflective proposer), `--base-url` and `--model openai-compatible:fake`
 * point it at a loopback server speaking OpenAI's API
 * (tests/llm-fake-openai-server.ts), which answers each sample right when
 * the prompt holds the seed's instructions (so `--calibrate` measures a
 * contrast with the ablated prompt) and proposes one section rewrite.
 *
 * No change can be accepted on four samples, and the run says why: the
 * optimization partition has 2 records and the shadow 1, so neither the
 * paired test (McNemar's needs 5 fixed at α = 0.05) nor the shadow check can
 * pass; the power check warns before the run.
 *
 * Acceptance on a corpus of the test's own, with the settings init writes:
 * classification × command in tests/new-user-classification.test.ts (the
 * FAQ router: a bundle accepted, the shadow confirming); the keyword-rules
 * proposer's budget in tests/stuck-factors.test.ts. Not yet here (todo):
 * the command studies with a reflective proposer (intent, extraction),
 * whose rules.json candidates must be ones run.mjs reads (item 3, another
 * branch), and own corpora for the other combinations.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownSections } from '../src/tasks/intent/llm/prompt-sections.ts';
import { kloop } from './cli-in-process.ts';
import { startFakeOpenAiServer, type FakeServer } from './llm-fake-openai-server.ts';

const root = mkdtempSync(path.join(tmpdir(), 'kloop-init-runs-'));
let fake: FakeServer;
/** The study the fake model serves now: its samples' expected outputs by input text, its wrong answer and its proposal. */
let serving: { gold: Map<string, unknown>; wrong: unknown; proposal: unknown; marker: string } | undefined;
beforeAll(async () => {
  fake = await startFakeOpenAiServer((request) => {
    if (/candidates/.test(JSON.stringify(request.body.response_format ?? {})))
      return { content: JSON.stringify(serving!.proposal) };
    const prompt = `${request.system}\n${request.user}`;
    // Right only with the seed's instructions in the prompt (the ablated prompt of the calibration drops them).
    if (prompt.includes(serving!.marker))
      for (const [input, expected] of serving!.gold)
        if (prompt.includes(input)) return { content: JSON.stringify(expected) };
    return { content: JSON.stringify(serving!.wrong) };
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

/** The combinations that call no model (the offline proposers), and what the power check says of their samples. */
const COMBINATIONS = [
  ['intent', 'offline'],
  ['classification', 'command'],
  ['custom', 'command'],
] as const;
/** The `llm` executor studies: a model answers through prompt.md, a reflective proposer rewrites its sections. */
const LLM = ['intent', 'classification', 'extraction', 'custom'] as const;
/** The command studies whose rules.json a reflective proposer edits. */
const COMMAND_WITH_A_MODEL = ['intent', 'extraction'] as const;

/**
 * What the fake model answers to a prompt without the seed's instructions
 * (the calibration's ablated prompt, whose section bodies are dropped): a
 * valid answer, wrong on the optimization samples.
 */
const WRONG: Record<(typeof LLM)[number], unknown> = {
  intent: { appType: 'other', entities: [], relations: [], behaviors: [], projections: [] },
  classification: { label: 'shipping' },
  extraction: { vendor: null, invoiceNumber: null, total: null, dueDate: null },
  custom: { label: 'shipping', priority: 'low' },
};

interface RunJson {
  baseline: Record<'optimization' | 'anchor' | 'shadow', number | null>;
  accepted: number;
  stopReason: string;
  powerWarnings?: Array<{ partition: string; have: number; needed: number }>;
}

describe('every study kloop init writes runs on its samples as written', () => {
  for (const [task, executor] of COMBINATIONS) {
    it(`${task} × ${executor}`, { timeout: 120_000 }, async () => {
      const dir = path.join(root, `${task}-${executor}`);
      const init = await kloop('init', dir, '--task', task, '--executor', executor);
      expect(init.code, init.stderr).toBe(0);
      const run = await kloop('run', dir, '--json');
      expect(run.code, run.stderr.split('\n').slice(-8).join('\n')).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      for (const partition of ['optimization', 'anchor', 'shadow'] as const)
        expect(report.baseline[partition], partition).not.toBeNull();
      expect(report.accepted).toBe(0);
      expect(['plateau', 'no_new_proposals', 'max_rounds', 'max_experiments']).toContain(report.stopReason);
      // Why nothing could pass: the power check names the shadow (1 sample), and for classification optimization too.
      expect(run.stderr).toContain('WARNING: the shadow partition holds 1 example(s)');
    });
  }

  // The model: a loopback server speaking OpenAI's API (--base-url), answering each sample with its expected output
  // when the prompt holds the seed's first editable section (so the calibration's ablated prompt is wrong), and
  // proposing one rewrite of that section a round.
  for (const task of LLM) {
    it(`${task} × llm (a loopback model, kloop run --calibrate)`, { timeout: 120_000 }, async () => {
      const dir = path.join(root, `${task}-llm`);
      const init = await kloop('init', dir, '--task', task, '--executor', 'llm');
      expect(init.code, init.stderr).toBe(0);
      const records = parseYaml(readFileSync(path.join(dir, 'corpus', 'examples.yaml'), 'utf8')) as Array<{
        input?: string;
        goal?: string;
        expected: unknown;
      }>;
      const program = readFileSync(path.join(dir, 'program.md'), 'utf8');
      const section = /editableSections: \[([^,\]]+)/.exec(program)![1]!.trim();
      const body = markdownSections(readFileSync(path.join(dir, 'prompt.md'), 'utf8'))[section]!;
      expect(body, section).toBeDefined();
      serving = {
        gold: new Map(records.map((record) => [record.input ?? record.goal!, record.expected])),
        wrong: WRONG[task],
        marker: body
          .split('\n')
          .find((line) => line.trim() !== '' && !line.startsWith('#'))!
          .trim(), // a line of the section's body, not its heading
        proposal: {
          candidates: [
            {
              rationale: 'say to read the whole text first',
              edits: [{ section, text: `${body.trimEnd()}\n\nRead the whole text before you answer.\n` }],
            },
          ],
        },
      };
      const run = await kloop(
        'run',
        dir,
        '--json',
        '--calibrate',
        '--base-url',
        fake.baseURL,
        '--model',
        'openai-compatible:fake',
      );
      expect(run.code, run.stderr.split('\n').slice(-8).join('\n')).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      // Every sample answered right. (The intent study's report leaves the shadow null when no decision consulted it.)
      for (const partition of ['optimization', 'anchor'] as const)
        expect(report.baseline[partition], partition).toBe(1);
      expect(report.baseline.shadow).toBe(task === 'intent' ? null : 1);
      expect(report.accepted).toBe(0); // the rewrite changes no answer: nothing to gain on the samples
      expect(['plateau', 'no_new_proposals', 'max_rounds', 'max_experiments']).toContain(report.stopReason);
    });
  }
  for (const task of COMMAND_WITH_A_MODEL) {
    it.todo(
      `${task} × command (the reflective proposer rewrites "## " sections; on rules.json its candidate must be one run.mjs reads: issue 35 item 3)`,
    );
  }
});
