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
 * proposer's budget in tests/stuck-factors.test.ts; extraction × command
 * with a reflective proposer in tests/new-user-extraction.test.ts.
 *
 * The command studies whose proposer is a model (intent, extraction) run
 * here with the one line kloop.yaml's comment tells a user with their own
 * server to change (proposer.model: openai-compatible:<model>) and
 * `--base-url`: the model's edit of one rules.json key becomes a candidate
 * run.mjs reads, judged on evidence.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** The loopback model's edit of each command study's rules.json: one top-level key and its new value. */
const RULES_EDIT: Record<(typeof COMMAND_WITH_A_MODEL)[number], (rules: Record<string, unknown>) => [string, unknown]> =
  {
    // One more cue for booking apps.
    intent: (rules) => {
      const cues = rules.appTypeCues as Record<string, string[]>;
      return ['appTypeCues', { ...cues, booking: [...(cues.booking ?? []), 'reserv*'] }];
    },
    // A second pattern for totals written "Amount: £240.00".
    extraction: (rules) => {
      const fields = rules.fields as Record<string, { patterns: string[] }>;
      const total = fields.total!;
      return [
        'fields',
        {
          ...fields,
          total: { ...total, patterns: [...total.patterns, 'amount\\s*:?\\s*[€$£]?\\s*([0-9][0-9,]*(?:\\.[0-9]+)?)'] },
        },
      ];
    },
  };
/**
 * The candidate's scores, as run.mjs computed them from the edited rules.json: the extraction edit reads the anchor
 * invoice "Amount: £240.00" (anchor 0.2 → 0.6; the incumbent misses it), the intent cue changes no sample.
 */
const CANDIDATE_SCORES: Record<(typeof COMMAND_WITH_A_MODEL)[number], { optimization: number; anchor: number }> = {
  intent: { optimization: 0.60625, anchor: 0.9 },
  extraction: { optimization: 0.9, anchor: 0.6 },
};
const RULES_EDIT_WHY: Record<(typeof COMMAND_WITH_A_MODEL)[number], string> = {
  intent: 'reservations are bookings',
  extraction: 'read totals written as "Amount:"',
};

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
  // The command studies whose proposer is a model: it edits rules.json by its top-level keys (src/proposers/data-edits.ts),
  // so its candidate is a rules file run.mjs reads. The loopback model proposes one key's new value; the candidate is
  // evaluated (not refused as unreadable, not a failed evaluation) and the run stops cleanly.
  for (const task of COMMAND_WITH_A_MODEL) {
    it(`${task} × command (a loopback model proposes a rules.json edit by key)`, { timeout: 120_000 }, async () => {
      const dir = path.join(root, `${task}-command`);
      const init = await kloop('init', dir, '--task', task, '--executor', 'command');
      expect(init.code, init.stderr).toBe(0);
      // The one line a user with their own server changes, as kloop.yaml's comment says: the proposer's model.
      const config = path.join(dir, 'kloop.yaml');
      const written = readFileSync(config, 'utf8');
      expect(written).toContain('model: openai:gpt-4.1-mini');
      writeFileSync(config, written.replace('model: openai:gpt-4.1-mini', 'model: openai-compatible:fake'));
      const rules = JSON.parse(readFileSync(path.join(dir, 'rules.json'), 'utf8')) as Record<string, unknown>;
      const [key, value] = RULES_EDIT[task](rules);
      serving = {
        gold: new Map(),
        wrong: {},
        marker: '',
        proposal: {
          candidates: [{ rationale: RULES_EDIT_WHY[task], edits: [{ section: key, text: JSON.stringify(value) }] }],
        },
      };
      const run = await kloop('run', dir, '--json', '--base-url', fake.baseURL);
      expect(run.code, run.stderr.split('\n').slice(-8).join('\n')).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      expect(report.accepted).toBe(0); // four samples: no test can pass (the power check says so)
      expect(['plateau', 'no_new_proposals', 'max_rounds', 'max_experiments']).toContain(report.stopReason);
      const history = await kloop('history', dir, '--json');
      expect(history.code, history.stderr).toBe(0);
      const { experiments } = JSON.parse(history.stdout) as {
        experiments: Array<{
          decision: string;
          reason: string | null;
          delta: string;
          scores: { candidate: { optimization: number | null; anchor: number | null } };
        }>;
      };
      expect(experiments.length).toBeGreaterThan(0);
      // The model's edit became a candidate run.mjs read and the gate judged: refused on evidence, never unreadable.
      const [first] = experiments;
      expect(first!.delta).toContain(key);
      expect(first!.decision, JSON.stringify(first)).toBe('refused');
      // No optimization sample changes (below the margin); the candidate's scores are its own, read by run.mjs.
      expect(first!.reason).toBe('below_margin');
      expect(first!.scores.candidate).toMatchObject(CANDIDATE_SCORES[task]);
    });
  }
});
