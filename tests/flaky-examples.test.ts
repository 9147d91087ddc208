/**
 * Flaky examples are named (issue 18, item 8): with repeats, the examples
 * whose outcome varies across them (src/evaluator/flaky-examples.ts) are
 * listed, count and ids, by `kloop eval`, `kloop show` and the run report,
 * in text and `--json`. The study: support tickets routed by a program that
 * samples — for tickets that say "FLIP" it answers wrong in its second
 * repeat — so exactly those tickets are flaky.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Proposer } from '../src/proposers/proposer.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { kloop } from './cli-in-process.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

// One line of JSON on stdin; "FLIP" tickets are misrouted in repeat 1 (the second of three).
const FLIP_PROGRAM = `line=$(cat); case "$line" in *FLIP*'"repeat":1}'*) echo '{"label":"account"}';; *) echo '{"label":"billing"}';; esac`;

const TICKETS: Array<[string, string, 'optimization' | 'anchor' | 'shadow']> = [
  ['opt-01', 'I was charged twice for the March invoice FLIP', 'optimization'],
  ['opt-02', 'Please send me a copy of last year receipts for the tax office', 'optimization'],
  ['opt-03', 'The refund for my cancelled plan never arrived FLIP', 'optimization'],
  ['opt-04', 'Why did the monthly price go up without any notice', 'optimization'],
  ['opt-05', 'Can I pay the annual subscription by bank transfer instead', 'optimization'],
  ['opt-06', 'Our company needs invoices addressed to the head office', 'optimization'],
  ['anc-01', 'My credit card was declined although it has enough funds', 'anchor'],
  ['anc-02', 'How do I add a purchase order number to the bill FLIP', 'anchor'],
  ['anc-03', 'The discount code was not applied to my last payment', 'anchor'],
  ['sha-01', 'You billed me for two seats but we only use one', 'shadow'],
  ['sha-02', 'The VAT on my statement looks wrong for Germany FLIP', 'shadow'],
  ['sha-03', 'Stop the automatic renewal and return the fee please', 'shadow'],
  ['sha-04', 'Where can I download every invoice as a single PDF', 'shadow'],
  ['sha-05', 'I was charged in dollars instead of euros this month', 'shadow'],
];
const FLIPPED = TICKETS.filter(([, text]) => text.includes('FLIP')).map(([id]) => id);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-flaky-'));
  const study = path.join(dir, 'tickets');
  expect((await kloop('init', study, '--task', 'classification', '--executor', 'command', '--json')).code).toBe(0);
  const config = readFileSync(path.join(study, 'kloop.yaml'), 'utf8')
    .replace('command: [node, run.mjs]', `command: [sh, -c, ${JSON.stringify(FLIP_PROGRAM)}]`)
    .replace('deterministic: true', 'deterministic: false')
    .replace(/repeats: 1 .*$/m, 'repeats: 3')
    .replace('  - corpus/*.yaml', '  - corpus/*.jsonl');
  writeFileSync(path.join(study, 'kloop.yaml'), config);
  rmSync(path.join(study, 'corpus'), { recursive: true, force: true });
  mkdirSync(path.join(study, 'corpus'));
  writeFileSync(
    path.join(study, 'corpus', 'tickets.jsonl'),
    `${TICKETS.map(([id, input, partition]) =>
      JSON.stringify({ id, input, expected: { label: 'billing' }, partition }),
    ).join('\n')}\n`,
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const studyDir = (): string => path.join(dir, 'tickets');

describe('flaky examples', () => {
  it('kloop eval lists them, count and ids, and labels each repeat line (text and --json)', async () => {
    const json = await kloop('eval', studyDir(), '--json');
    expect(json.code).toBe(0);
    const payload = JSON.parse(json.stdout) as {
      repeats: number;
      flaky: { level: number; repeats: number; count: number; ids: string[] };
      partitions: Record<string, { flaky: number }>;
      examples: Array<{ id: string; repeat: number; flaky: boolean }>;
    };
    expect(payload.flaky).toMatchObject({ level: 0.2, repeats: 3, count: FLIPPED.length, ids: FLIPPED });
    expect(payload.partitions).toMatchObject({
      optimization: { flaky: 2 },
      anchor: { flaky: 1 },
      shadow: { flaky: 1 },
    });
    // examples counts examples, exampleRepeats what was evaluated (before, examples was 3 × the examples).
    const partitions = payload.partitions as unknown as Record<string, { examples: number; exampleRepeats: number }>;
    const sizes = Object.fromEntries(
      ['optimization', 'anchor', 'shadow'].map((name) => [
        name,
        TICKETS.filter(([, , partition]) => partition === name).length,
      ]),
    );
    for (const name of ['optimization', 'anchor', 'shadow'])
      expect(partitions[name]).toMatchObject({ examples: sizes[name], exampleRepeats: 3 * sizes[name]! });
    // Every repeat line of a flaky example says so, and only those.
    expect([...new Set(payload.examples.filter((example) => example.flaky).map((example) => example.id))]).toEqual(
      FLIPPED,
    );
    expect(payload.examples.filter((example) => example.flaky)).toHaveLength(3 * FLIPPED.length);

    const text = await kloop('eval', studyDir());
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `flaky examples (outcome varies across 3 repeats: valid in some and invalid in others, or a composite range ≥ 0.2): 4 — ${FLIPPED.join(', ')}`,
    );
    expect(text.stdout).toContain('opt-01 (repeat 2 of 3, FLAKY)  0.0000');
    expect(text.stdout).toContain('opt-01 (repeat 1 of 3, FLAKY)  1.0000');
    expect(text.stdout).toContain('opt-02 (repeat 2 of 3)  1.0000');
    // And on any corpus file.
    const file = JSON.parse(
      (await kloop('eval', studyDir(), '--corpus', path.join(studyDir(), 'corpus', 'tickets.jsonl'), '--json')).stdout,
    ) as { flaky: { count: number; ids: string[] } };
    expect(file.flaky).toMatchObject({ count: 4, ids: FLIPPED });
  }, 60_000);

  it('the run report lists them for the seed and the best artifact (text and --json)', async () => {
    const { code, stdout } = await kloop('run', studyDir(), '--json', '--max-experiments', '0');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      flaky: {
        level: number;
        repeats: number;
        baseline: { count: number; ids: string[] };
        best: { count: number; ids: string[] };
      };
    };
    expect(report.flaky).toMatchObject({
      level: 0.2,
      repeats: 3,
      baseline: { count: 4, ids: FLIPPED },
      best: { count: 4, ids: FLIPPED },
    });
    const text = await kloop('run', studyDir(), '--max-experiments', '0');
    expect(text.stdout).toContain(
      `baseline (v1): flaky examples (outcome varies across 3 repeats: valid in some and invalid in others, or a composite range ≥ 0.2): 4 — ${FLIPPED.join(', ')}`,
    );
    expect(text.stdout).toContain(`best (v1): flaky examples (outcome varies across 3 repeats`);
  }, 60_000);

  it('kloop show lists those of the candidate and of the incumbent it was judged against (text and --json)', async () => {
    // One candidate that changes the rules file but not the sampled answers: refused, its evaluation stored.
    const proposer: Proposer = {
      id: 'one-candidate-test-proposer',
      propose: async (context) => ({
        failures: [],
        candidates: [
          {
            text: context.incumbentText.replace('"password*",', '"password*", "passcode*",'),
            delta: 'rules.account += "passcode*"',
            rationale: 'a keyword no ticket contains',
          },
        ],
      }),
    };
    const study = loadStudy(studyDir(), { createProposer: () => proposer });
    study.stopping.maxExperiments = 1;
    const db = await openDatabase(studyDatabasePath(studyDir()));
    try {
      await runStudy({ study, notebook: openNotebook(db) });
    } finally {
      await db.destroy();
    }
    const json = await kloop('show', studyDir(), '1', '--json');
    expect(json.code).toBe(0);
    const shown = JSON.parse(json.stdout) as {
      decision: string;
      reason: string;
      flaky: { level: number; candidate: { repeats: number; ids: string[] }; incumbent: { ids: string[] } };
    };
    expect([shown.decision, shown.reason]).toEqual(['refused', 'below_margin']);
    // The candidate, over the 3 repeats of its evaluation (optimization and anchor; the shadow only when every earlier check passes), ids in id order.
    expect(shown.flaky.level).toBe(0.2);
    expect(shown.flaky.candidate).toMatchObject({ repeats: 3, ids: ['anc-02', 'opt-01', 'opt-03'] });
    // The incumbent, over every repeat stored (the run reports evaluated every partition).
    expect(shown.flaky.incumbent.ids).toEqual(['anc-02', 'opt-01', 'opt-03', 'sha-02']);
    const text = await kloop('show', studyDir(), '1');
    expect(text.stdout).toContain(
      'candidate: flaky examples (outcome varies across 3 repeats: valid in some and invalid in others, or a composite range ≥ 0.2): 3 — anc-02, opt-01, opt-03',
    );
    expect(text.stdout).toMatch(
      /incumbent \(version 1\): flaky examples \(outcome varies across \d+ repeats: valid in some and invalid in others, or a composite range ≥ 0\.2\): 4 — anc-02, opt-01, opt-03, sha-02/,
    );
  }, 60_000);
});
