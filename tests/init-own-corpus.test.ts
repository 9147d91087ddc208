/**
 * Issue 35, item 1: the studies `kloop init` writes accept a real change on a
 * corpus of the user's own, with the settings init wrote (nothing of
 * kloop.yaml changed but what its comments tell a user to change).
 *
 * The `llm` executor studies, for each task: `kloop init`, then the sample
 * corpus is replaced by 26 records of this test's own (optimization 12,
 * anchor 4, shadow 10), each with a distinct text and one of the samples'
 * gold answers. The model is a loopback server speaking OpenAI's API
 * (tests/llm-fake-openai-server.ts) whose truth the test knows:
 *
 * - without the seed's instructions in the prompt (the calibration's ablated
 *   prompt) every answer is wrong, so calibration measures a contrast;
 * - with them, the "easy" half of the records is answered right;
 * - with the hint line the proposer adds to the editable section, every
 *   record is answered right.
 *
 * So the one good change exists, the gate must accept it on the optimization
 * partition, and the shadow partition (which the proposer never sees)
 * confirms it. `kloop run --calibrate --base-url … --model
 * openai-compatible:fake`, as docs/llm.md says for one's own server.
 *
 * The command studies (custom, extraction, intent): 26 records of the
 * test's own, half written the way the seed's rules read, half in a way they
 * miss ("courier" in no routing rule; totals written "Amount: £240.00"; a
 * goal that says "reserve" where the cues know "book*"). The custom study's
 * offline error-driven proposer finds the keyword itself; the other two are
 * reflective, their model (the loopback server) proposing the rules.json
 * key's new value; each run accepts the change and the shadow confirms it.
 *
 * Elsewhere on corpora of their own: classification × command in
 * tests/new-user-classification.test.ts; intent × offline is
 * examples/intent, the README's main job.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../src/stats/index.ts';
import { markdownSections } from '../src/tasks/intent/llm/prompt-sections.ts';
import { kloop } from './cli-in-process.ts';
import { type FakeServer, startFakeOpenAiServer } from './llm-fake-openai-server.ts';

const root = mkdtempSync(path.join(tmpdir(), 'kloop-init-own-'));
const HINT = 'Before answering, read every sentence of the text, including the last one.';
let fake: FakeServer;
/** What the fake model serves now: each record's gold by its reference number, the wrong answer, the seed's marker line, the proposal. */
let serving: { gold: Map<number, unknown>; wrong: unknown; marker: string; proposal: unknown } | undefined;

beforeAll(async () => {
  fake = await startFakeOpenAiServer((request) => {
    if (/candidates/.test(JSON.stringify(request.body.response_format ?? {})))
      return { content: JSON.stringify(serving!.proposal) };
    const prompt = `${request.system}\n${request.user}`;
    const reference = /\bref(\d+)x\b/.exec(request.user);
    const gold = reference === null ? undefined : serving!.gold.get(Number(reference[1]));
    const easy = reference !== null && Number(reference[1]) % 2 === 0;
    const right = prompt.includes(serving!.marker) && (easy || prompt.includes(HINT));
    return { content: JSON.stringify(right && gold !== undefined ? answerOf(gold) : serving!.wrong) };
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

/** A valid answer that is wrong on the samples (as in tests/init-runs.test.ts). */
const WRONG: Record<string, unknown> = {
  intent: { appType: 'other', entities: [], relations: [], behaviors: [], projections: [] },
  classification: { label: 'shipping' },
  extraction: { vendor: null, invoiceNumber: null, total: null, dueDate: null },
  custom: { label: 'shipping', priority: 'low' },
};

/**
 * The model's right answer for a gold: every field of the answer (a gold may leave one out: it is skipped by the
 * scorer), and none that only a gold has (an intent gold's entity `aliases`, other names it may be given).
 */
function answerOf(gold: unknown): unknown {
  const answer: Record<string, unknown> = { ...(serving!.wrong as object), ...(gold as object) };
  if (Array.isArray(answer.entities))
    answer.entities = answer.entities.map(({ aliases: _aliases, ...entity }: Record<string, unknown>) => entity);
  return answer;
}

/** Words for the records' distinct texts (a seeded pick of 40 per record: no two texts are near-duplicates). */
const WORDS = (
  'amber basil cedar delta ember fjord garnet harbor iris juniper kelp lagoon maple nectar onyx pebble quartz ' +
  'raven saffron tundra umber violet willow xenon yarrow zephyr anchor beacon canyon dune estuary falcon glacier ' +
  'heron island jasper kestrel lantern meadow nimbus orchard prairie quill reef summit thicket upland vale ' +
  'wharf yew zinnia acorn bramble cobalt drizzle fennel grove hazel indigo jetty knoll lichen marsh nettle ' +
  'oasis pumice quarry ridge sorrel tide urchin vista wren'
).split(' ');

type Partition = 'optimization' | 'anchor' | 'shadow';
const PARTITIONS: Partition[] = [
  ...Array<Partition>(12).fill('optimization'),
  ...Array<Partition>(4).fill('anchor'),
  ...Array<Partition>(10).fill('shadow'),
];

/**
 * 26 records of the test's own: the i-th takes the gold of sample i mod 4 and a text of its own (the sample's
 * text, then 40 seeded words and its reference `ref<i>x`). Even references are "easy".
 */
function ownCorpus(samples: Array<Record<string, unknown>>): { records: unknown[]; gold: Map<number, unknown> } {
  const next = createSeededRandom(35);
  const gold = new Map<number, unknown>();
  const records = PARTITIONS.map((partition, index) => {
    const sample = samples[index % samples.length]!;
    const field = 'goal' in sample ? 'goal' : 'input';
    const words = Array.from({ length: 40 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
    gold.set(index, sample.expected);
    return {
      id: `own-${String(index).padStart(2, '0')}`,
      [field]: `${String(sample[field])} Notes: ${words}. ref${index}x`,
      expected: sample.expected,
      partition,
    };
  });
  return { records, gold };
}

interface RunJson {
  baseline: Record<Partition, number | null>;
  final?: Record<Partition, number | null>;
  accepted: number;
  stopReason: string;
}

describe('every llm study kloop init writes accepts the one good change on a corpus of its own', () => {
  for (const task of ['intent', 'classification', 'extraction', 'custom'] as const) {
    it(`${task} × llm`, { timeout: 180_000 }, async () => {
      const dir = path.join(root, `${task}-llm`);
      const init = await kloop('init', dir, '--task', task, '--executor', 'llm');
      expect(init.code, init.stderr).toBe(0);
      const corpusFile = path.join(dir, 'corpus', 'examples.yaml');
      const samples = parseYaml(readFileSync(corpusFile, 'utf8')) as Array<Record<string, unknown>>;
      const { records, gold } = ownCorpus(samples);
      writeFileSync(corpusFile, stringifyYaml(records));
      const program = readFileSync(path.join(dir, 'program.md'), 'utf8');
      const section = /editableSections: \[([^,\]]+)/.exec(program)![1]!.trim();
      const body = markdownSections(readFileSync(path.join(dir, 'prompt.md'), 'utf8'))[section]!;
      serving = {
        gold,
        wrong: WRONG[task],
        marker: body
          .split('\n')
          .find((line) => line.trim() !== '' && !line.startsWith('#'))!
          .trim(),
        proposal: {
          candidates: [
            { rationale: 'read the whole text first', edits: [{ section, text: `${body.trimEnd()}\n\n${HINT}\n` }] },
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
      expect(run.code, run.stderr.split('\n').slice(-12).join('\n')).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      expect(report.accepted, run.stdout).toBe(1);
      const history = await kloop('history', dir, '--json');
      const { experiments } = JSON.parse(history.stdout) as {
        experiments: Array<{
          decision: string;
          scores: { candidate: Record<Partition, number | null>; incumbentBefore: Record<Partition, number | null> };
        }>;
      };
      const accepted = experiments.find((experiment) => experiment.decision === 'accepted')!;
      // Every record answered right with the hint: the candidate scores 1 on each partition, the shadow included.
      expect(accepted.scores.candidate).toEqual({ optimization: 1, anchor: 1, shadow: 1 });
      expect(accepted.scores.incumbentBefore.optimization).toBeLessThan(1);
    });
  }
});

/** 40 seeded words: each record's own notes, so no two texts are near-duplicates. */
function notes(next: () => number): string {
  return Array.from({ length: 40 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

/** The gold of init's booking sample (an intent study's record). */
const BOOKING_GOLD = {
  appType: 'booking',
  entities: [
    { name: 'Member', role: 'party' },
    { name: 'Class', role: 'resource' },
    { name: 'Instructor', role: 'party' },
    { name: 'Room', role: 'resource' },
  ],
  relations: [
    { from: 'Instructor', to: 'Class', cardinality: 'one_to_many', kind: 'association' },
    { from: 'Room', to: 'Class', cardinality: 'one_to_many', kind: 'association' },
  ],
  behaviors: ['scheduling', 'notification'],
  projections: ['calendar'],
};

/**
 * The command studies: each program reads the artifact init wrote; half of the records (the odd ones) are written
 * in a way the seed's rules miss, the other half in the way they read.
 */
const COMMAND_STUDIES = {
  // Tickets routed by keyword rules (the offline error-driven proposer): "courier" is in no rule.
  custom: {
    record: (index: number, next: () => number) => ({
      input:
        index % 2 === 1
          ? `The courier never came to my door with the order. Notes: ${notes(next)}.`
          : `Please refund the amount you took for my order. Notes: ${notes(next)}.`,
      expected: { label: index % 2 === 1 ? 'shipping' : 'billing', priority: 'normal' },
    }),
    edit: undefined,
  },
  // Invoices read by regular expressions: "Amount: £240.00" is a total the seed's patterns miss.
  extraction: {
    record: (index: number, next: () => number) => ({
      input: [
        `Invoice INV-${1000 + index}`,
        `From: Vendor ${index} Ltd`,
        'Due date: 2026-04-01',
        index % 2 === 1 ? `Amount: £${100 + index}.00` : `Total due: EUR ${100 + index}.00`,
        `Notes: ${notes(next)}.`,
      ].join('\n'),
      expected: {
        vendor: `Vendor ${index} Ltd`,
        invoiceNumber: `INV-${1000 + index}`,
        total: 100 + index,
        dueDate: '2026-04-01',
      },
    }),
    edit: {
      rationale: 'read totals written as "Amount:"',
      change: (rules: Record<string, unknown>): [string, unknown] => {
        const fields = rules.fields as Record<string, { patterns: string[] }>;
        const pattern = 'amount\\s*:?\\s*[€$£]?\\s*([0-9][0-9,]*(?:\\.[0-9]+)?)';
        return ['fields', { ...fields, total: { ...fields.total!, patterns: [...fields.total!.patterns, pattern] } }];
      },
    },
  },
  // App goals read by keyword cues: "reserve" is a booking cue the seed's rules lack.
  intent: {
    record: (index: number, next: () => number) => ({
      goal: `Our yoga studio wants members to ${index % 2 === 1 ? 'reserve' : 'book'} classes online. Each class has an instructor and a room, and members get a reminder the day before. The front desk needs a calendar of the week's classes. Notes: ${notes(next)}.`,
      expected: BOOKING_GOLD,
    }),
    edit: {
      rationale: 'reservations are bookings',
      change: (rules: Record<string, unknown>): [string, unknown] => {
        const cues = rules.appTypeCues as Record<string, string[]>;
        return ['appTypeCues', { ...cues, booking: [...cues.booking!, 'reserv*'] }];
      },
    },
  },
};

describe('the command studies kloop init writes accept the one good change on a corpus of their own', () => {
  for (const [task, study] of Object.entries(COMMAND_STUDIES)) {
    it(`${task} × command`, { timeout: 180_000 }, async () => {
      const dir = path.join(root, `${task}-command`);
      const init = await kloop('init', dir, '--task', task, '--executor', 'command');
      expect(init.code, init.stderr).toBe(0);
      const next = createSeededRandom(36);
      const records = PARTITIONS.map((partition, index) => ({
        id: `own-${String(index).padStart(2, '0')}`,
        ...study.record(index, next),
        partition,
      }));
      writeFileSync(path.join(dir, 'corpus', 'examples.yaml'), stringifyYaml(records));
      // One experiment is enough to show an accepted change (each study's first candidate is its good one); the
      // settings that decide it are init's. (The rest of a run refuses the other keyword edits: 6 experiments, 56 s.)
      const flags: string[] = ['--max-experiments', '1'];
      if (study.edit !== undefined) {
        // The model proposer: the one kloop.yaml line a user with their own server changes, and --base-url.
        const config = path.join(dir, 'kloop.yaml');
        writeFileSync(
          config,
          readFileSync(config, 'utf8').replace('model: openai:gpt-4.1-mini', 'model: openai-compatible:fake'),
        );
        const rules = JSON.parse(readFileSync(path.join(dir, 'rules.json'), 'utf8')) as Record<string, unknown>;
        const [key, value] = study.edit.change(rules);
        serving = {
          gold: new Map(),
          wrong: {},
          marker: '',
          proposal: {
            candidates: [{ rationale: study.edit.rationale, edits: [{ section: key, text: JSON.stringify(value) }] }],
          },
        };
        flags.push('--base-url', fake.baseURL);
      }
      const run = await kloop('run', dir, '--json', ...flags);
      expect(run.code, run.stderr.split('\n').slice(-12).join('\n')).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      expect(report.accepted, run.stdout).toBeGreaterThanOrEqual(1);
      const history = await kloop('history', dir, '--json');
      const { experiments } = JSON.parse(history.stdout) as {
        experiments: Array<{
          decision: string;
          scores: { candidate: Record<Partition, number>; incumbentBefore: Record<Partition, number> };
        }>;
      };
      const { candidate, incumbentBefore } = experiments.find(
        (experiment) => experiment.decision === 'accepted',
      )!.scores;
      // The gain shows on the optimization partition and on the shadow the proposer never saw; no anchor drops.
      expect(candidate.optimization).toBeGreaterThan(incumbentBefore.optimization);
      expect(candidate.shadow).toBeGreaterThan(incumbentBefore.shadow);
      expect(candidate.anchor).toBeGreaterThanOrEqual(incumbentBefore.anchor);
    });
  }
});
