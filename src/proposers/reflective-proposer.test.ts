import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { InfrastructureError } from '../errors.ts';
import type { LlmClient, LlmRequest, LlmResponse } from '../providers/llm-client.ts';
import { rebaseText } from '../artifact/three-way-merge.ts';
import { markdownSections } from '../artifact/markdown-sections.ts';
import type { ProposalContext } from './proposer.ts';
import {
  COPIES_EXAMPLE_TEXT_FLAG,
  createReflectiveProposer,
  findCopiedExamples,
  historyText,
} from './reflective-proposer.ts';

const INCUMBENT =
  '# Extract intents\n\nRead the description.\n\n## Roles\nA party acts.\n\n## Behaviours\nList behaviours.\n\n## Views\nList views.\n';
const GOAL = 'A physio clinic wants patients to book sessions with therapists, get reminders and pay invoices.';
const USAGE = { inputTokens: 100, outputTokens: 50, costUsd: 0.0001 };

const examples: Example[] = [
  { id: 'opt-1', input: GOAL, text: GOAL, expected: { appType: 'booking' }, tags: [], partition: 'optimization' },
  {
    id: 'opt-2',
    input: 'Sales reps track leads and deals through a pipeline.',
    text: 'Sales reps track leads and deals through a pipeline.',
    expected: { appType: 'crm' },
    tags: [],
    partition: 'optimization',
  },
];

const scores: PartitionScore = {
  partition: 'optimization',
  artifactHash: 'h',
  fingerprint: 'f',
  repeats: 1,
  composite: 0.6,
  components: { roleAccuracy: 0.5 },
  metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
  invalid: 0,
  transient: 0,
  total: 1,
  runComposites: [0.6],
  examples: [
    {
      exampleId: 'opt-1',
      repeat: 0,
      valid: true,
      composite: 0.6,
      components: { roleAccuracy: 0.5 },
      skipped: [],
      metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
      diagnostics: {
        missedEntities: ['Invoice'],
        spuriousEntities: [],
        wrongRoles: [{ entity: 'Session', expected: 'commitment', predicted: 'transaction' }],
        missingBehaviors: ['notification'],
        extraBehaviors: [],
        missedRelations: [],
        missingProjections: [],
      },
      feedback:
        'missed entities Invoice; wrong roles: Session is commitment, not transaction; missing behaviours notification.',
    },
  ],
  usage: USAGE,
  latencyMs: 0,
};

function fakeClient(
  respond: LlmResponse | ((request: LlmRequest) => LlmResponse | Promise<LlmResponse>),
): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    id: 'openai:gpt-4.1 host=api.openai.com temperature=default maxOutputTokens=8192 output=schema',
    settings: {
      name: 'openai:gpt-4.1',
      provider: 'openai',
      modelId: 'gpt-4.1',
      baseURL: 'https://api.openai.com/v1',
      host: 'api.openai.com',
      maxOutputTokens: 8192,
      timeoutMs: 60_000,
      structuredOutput: 'schema',
      price: { price: { inputUsdPerMillion: 2, outputUsdPerMillion: 8 }, known: true },
    },
    requests,
    generate: async (request) => {
      requests.push(request);
      return typeof respond === 'function' ? respond(request) : respond;
    },
  };
}

function text(content: string, finishReason = 'stop'): LlmResponse {
  return { ok: true, text: content, finishReason, usage: USAGE, cached: false, latencyMs: 1 };
}

function answer(candidates: unknown[]): LlmResponse {
  return text(JSON.stringify({ candidates }));
}

function context(overrides: Partial<ProposalContext> = {}): ProposalContext {
  return {
    incumbentText: INCUMBENT,
    instructions: 'Fix role confusions first.',
    constraints: 'Keep the introduction.',
    limits: { editableSections: ['Roles', 'Behaviours', 'Views'], maxArtifactCharacters: 2000 },
    examples,
    incumbentScores: scores,
    evaluateOptimization: async () => scores,
    history: [
      { delta: '## Views\nList views and boards.', decision: 'refused', reason: 'specialization' },
      { delta: '## Roles\nParties act.', decision: 'accepted', reason: 'accepted' },
    ],
    triedHashes: new Set<string>(),
    maxCandidates: 4,
    random: () => 0.25,
    ...overrides,
  };
}

const ROLE_EDIT = {
  rationale: 'Commitments are confused with transactions.',
  edits: [{ section: 'Roles', text: 'A party acts. A booking or session is a commitment, not a transaction.' }],
};
const BEHAVIOUR_EDIT = {
  rationale: 'Reminders are notifications.',
  edits: [{ section: '## Behaviours', text: 'List behaviours; reminders and alerts are notification.' }],
};

describe('createReflectiveProposer', () => {
  it('turns section rewrites into candidates whose deltas are the lines they change, and which compose by three-way merge', async () => {
    const client = fakeClient(answer([ROLE_EDIT, BEHAVIOUR_EDIT]));
    const proposer = createReflectiveProposer({ client });
    expect(proposer.id).toBe(`reflective@1 ${client.id}`);
    const result = await proposer.propose(context());
    expect(result.failures).toEqual([]);
    expect(result.repeats).toBe(0);
    expect(result.candidates).toHaveLength(2);
    const [roles, behaviours] = result.candidates;
    expect(markdownSections(roles!.text).Roles).toBe(
      '## Roles\nA party acts. A booking or session is a commitment, not a transaction.\n\n',
    );
    expect(markdownSections(roles!.text).Views).toBe(markdownSections(INCUMBENT).Views);
    expect(roles!.delta).toBe(
      '## Roles\n- A party acts.\n+ A party acts. A booking or session is a commitment, not a transaction.',
    );
    expect(roles!.rationale).toBe(ROLE_EDIT.rationale);
    expect(roles!.flags).toBeUndefined();
    expect(markdownSections(behaviours!.text).Behaviours).toContain('reminders and alerts are notification');
    // No section-replacing rebase of its own: the loop's three-way merge keeps both edits.
    expect(behaviours!.rebase).toBeUndefined();
    const rebased = rebaseText(INCUMBENT, behaviours!.text, roles!.text).text;
    expect(markdownSections(rebased).Roles).toBe(markdownSections(roles!.text).Roles);
    expect(markdownSections(rebased).Behaviours).toBe(markdownSections(behaviours!.text).Behaviours);
  });

  it('asks with the program, the incumbent, capped diagnostics and the history, from the context only', async () => {
    const client = fakeClient(answer([ROLE_EDIT]));
    await createReflectiveProposer({ client, maxDiagnosticsCharacters: 500, maxHistoryCharacters: 400 }).propose(
      context({ maxCandidates: 3, outputContract: 'Answer with {"label": ...}.' }),
    );
    const request = client.requests[0]!;
    expect(request.prompt).toContain('Fix role confusions first.');
    expect(request.prompt).toContain('Keep the introduction.');
    expect(request.prompt).toContain(INCUMBENT);
    // The task's feedback, by problem, and the component means: no task wording of the proposer's own.
    expect(request.prompt).toContain(
      'Problems most often named: missed entities Invoice (×1), missing behaviours notification (×1), wrong roles: Session is commitment, not transaction (×1).',
    );
    expect(request.prompt).toContain('Components (mean where scored, each in [0, 1]): roleAccuracy 0.50.');
    expect(request.prompt).toContain(
      'kloop appends this fixed output contract after the artifact; you cannot change it:\nAnswer with {"label": ...}.',
    );
    expect(request.prompt).not.toMatch(/business application|entities with roles|app type/i);
    expect(request.prompt).toContain('REFUSED (specialization): ## Views List views and boards.');
    expect(request.prompt).toContain('ACCEPTED: ## Roles Parties act.');
    expect(request.prompt).toContain('Propose 3 different candidates');
    expect(request.prompt).toContain('"(preamble)"');
    expect(request.schema?.name).toBe('proposal');
    expect(request.repeat).toBe(Math.floor(0.25 * 2 ** 31));
    const fixed = INCUMBENT.length + 'Fix role confusions first.'.length + 'Keep the introduction.'.length;
    expect(request.prompt.length).toBeLessThan(fixed + 500 + 400 + 2500);
  });

  it.each([
    ['an empty answer', text(''), /empty answer/],
    ['an unclosed code fence', text('```json\n{"candidates": ['), /unclosed code fence/],
    ['an unclosed <think> block', text('<think>Let me consider the roles'), /unclosed <think> block/],
    ['broken JSON', text('{"candidates": [{"rationale": "x", "edits": [}'), /broken JSON/],
    ['JSON of the wrong shape', text('{"ideas": ["be better"]}'), /proposal schema/],
    ['a truncated answer', text('{"candidates": [', 'length'), /cut off/],
    [
      'a failed call',
      { ok: false, reason: 'timeout', message: 'no answer', usage: USAGE, latencyMs: 1 } as LlmResponse,
      /timeout/,
    ],
  ])('returns %s as a failure, never a candidate', async (_name, response, reason) => {
    const result = await createReflectiveProposer({ client: fakeClient(response) }).propose(context());
    expect(result.candidates).toEqual([]);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]!.reason).toMatch(reason);
  });

  it('refuses candidates over the ceiling, on fixed sections, tried before, changing nothing or breaking structure', async () => {
    const tried = { rationale: 'same as before', edits: [{ section: 'Views', text: 'List views and boards.' }] };
    const triedText = INCUMBENT.replace('## Views\nList views.\n', '## Views\nList views and boards.\n');
    const client = fakeClient(
      answer([
        { rationale: 'long', edits: [{ section: 'Roles', text: 'word '.repeat(1000) }] },
        { rationale: 'intro', edits: [{ section: '(preamble)', text: 'Something else.' }] },
        { rationale: 'missing', edits: [{ section: 'Examples', text: 'x' }] },
        tried,
        { rationale: 'noop', edits: [{ section: 'Views', text: 'List views.' }] },
        { rationale: 'sneaky', edits: [{ section: 'Roles', text: 'ok\n## Injected\nnew section' }] },
        ROLE_EDIT,
      ]),
    );
    const result = await createReflectiveProposer({ client }).propose(
      context({
        maxCandidates: 10,
        triedHashes: new Set([contentHash(triedText)]),
        limits: { editableSections: ['Roles', 'Views'], maxArtifactCharacters: 400 },
      }),
    );
    expect(result.candidates.map((candidate) => candidate.rationale)).toEqual([ROLE_EDIT.rationale]);
    const reasons = result.failures.map((failure) => failure.reason);
    expect(reasons[0]).toMatch(/over the ceiling of 400/);
    expect(reasons[1]).toMatch(/may not change: "\(preamble\)"/);
    expect(reasons[2]).toMatch(/may not change: "Examples"/);
    expect(reasons[3]).toMatch(/heading/);
    expect(reasons).toHaveLength(4);
    expect(result.failures.every((failure) => failure.scope === 'candidate')).toBe(true);
    // A candidate tried before, or one that changes nothing, is the proposer running out of ideas, not a failure.
    expect(result.repeats).toBe(2);
  });

  it('fails the whole answer once when none of its candidates is usable, with the raw answer', async () => {
    const client = fakeClient(
      answer([{ rationale: 'intro', edits: [{ section: '(preamble)', text: 'Something else.' }] }]),
    );
    const result = await createReflectiveProposer({ client }).propose(
      context({ limits: { editableSections: ['Roles'], maxArtifactCharacters: 4000 } }),
    );
    expect(result.candidates).toEqual([]);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]).toMatchObject({ code: 'no_usable_candidate', scope: 'answer' });
    expect(result.failures[0]!.raw).toContain('Something else.');
  });

  it('counts an answer of candidates all tried before as repeats, not failures', async () => {
    const tried = INCUMBENT.replace('## Views\nList views.\n', '## Views\nList views and boards.\n');
    const client = fakeClient(
      answer([{ rationale: 'same as before', edits: [{ section: 'Views', text: 'List views and boards.' }] }]),
    );
    const result = await createReflectiveProposer({ client }).propose(
      context({ triedHashes: new Set([contentHash(tried)]) }),
    );
    expect(result).toMatchObject({ candidates: [], failures: [], repeats: 1 });
  });

  it('flags a candidate that pastes optimization-example text', async () => {
    const copy = {
      rationale: 'Add an example.',
      edits: [{ section: 'Behaviours', text: `List behaviours. For instance: "${GOAL}"` }],
    };
    const result = await createReflectiveProposer({ client: fakeClient(answer([copy, ROLE_EDIT])) }).propose(context());
    expect(result.candidates[0]!.flags).toEqual([COPIES_EXAMPLE_TEXT_FLAG]);
    expect(result.candidates[0]!.rationale).toMatch(/copies-example-text.*opt-1/);
    expect(result.candidates[1]!.flags).toBeUndefined();
  });

  it('lets infrastructure errors through so the run stops', async () => {
    const client = fakeClient(() => {
      throw new InfrastructureError('HTTP 401', { statusCode: 401 });
    });
    await expect(createReflectiveProposer({ client }).propose(context())).rejects.toBeInstanceOf(InfrastructureError);
  });
});

describe('findCopiedExamples', () => {
  it('finds 8-word windows of a goal that the previous text did not contain', () => {
    expect(findCopiedExamples('patients to book sessions with therapists, get reminders', '', examples)).toEqual([
      'opt-1',
    ]);
    expect(findCopiedExamples('patients to book sessions with therapists get', '', examples)).toEqual([]);
    expect(
      findCopiedExamples(
        'patients to book sessions with therapists, get reminders',
        'patients to book sessions with therapists get reminders',
        examples,
      ),
    ).toEqual([]);
    expect(findCopiedExamples('Sales reps track leads and deals through a pipeline', '', examples)).toEqual(['opt-2']);
  });
});

describe('createReflectiveProposer on a JSON or YAML artifact (issue #35, item 3)', () => {
  const RULES_JSON =
    '{\n  "fields": {\n    "total": { "patterns": ["^total:\\\\s*(.+)$"] }\n  },\n  "normalize": true\n}\n';
  const RULES_YAML = '# extraction rules\nfields:\n  total:\n    patterns: ["^total:\\\\s*(.+)$"]\nnormalize: true\n';
  const FIELDS = { total: { patterns: ['^total:\\s*(.+)$', '^amount due:\\s*(.+)$'] } };
  const dataContext = (incumbentText: string): ProposalContext =>
    context({ incumbentText, limits: { editableSections: [], maxArtifactCharacters: 2000 }, history: [] });

  it("replaces a top-level key of rules.json with the JSON value the model writes: the candidate parses, and its delta is the value's lines", async () => {
    const client = fakeClient(
      answer([
        {
          rationale: 'Totals are also written as amount due.',
          edits: [{ section: 'fields', text: JSON.stringify(FIELDS) }],
        },
      ]),
    );
    const result = await createReflectiveProposer({ client, artifactFile: 'rules.json' }).propose(
      dataContext(RULES_JSON),
    );
    expect(result.failures).toEqual([]);
    const candidate = result.candidates[0]!;
    expect(JSON.parse(candidate.text)).toEqual({ fields: FIELDS, normalize: true });
    expect(candidate.text).toBe(`${JSON.stringify({ fields: FIELDS, normalize: true }, null, 2)}\n`);
    // The value's lines without their trailing commas: a kept line is not shown as removed and added again.
    expect(candidate.delta).toBe('## fields\n+       "^amount due:\\\\s*(.+)$"');
    // Re-applied to a newer incumbent as a key replacement: the newer incumbent's other keys are kept.
    expect(JSON.parse(candidate.rebase!(RULES_JSON.replace('true', 'false'))!)).toEqual({
      fields: FIELDS,
      normalize: false,
    });
    expect(client.requests[0]!.system).toContain('The artifact is a JSON file holding one object');
    expect(client.requests[0]!.prompt).toContain('- Top-level keys you may replace: "fields", "normalize".');
    expect(client.requests[0]!.prompt).toContain('# Current artifact (rules.json)');
  });

  it('a value that is not JSON, or a key edited twice, is a failure of that candidate naming the key and the file; the other candidate stands', async () => {
    const client = fakeClient(
      answer([
        { rationale: 'broken', edits: [{ section: 'fields', text: '{"total": {"patterns": ["^total:\\s*(.+)$"]}}' }] },
        {
          rationale: 'twice',
          edits: [
            { section: 'normalize', text: 'false' },
            { section: 'normalize', text: 'true' },
          ],
        },
        { rationale: 'off', edits: [{ section: 'normalize', text: 'false' }] },
      ]),
    );
    const result = await createReflectiveProposer({ client, artifactFile: 'rules.json' }).propose(
      dataContext(RULES_JSON),
    );
    expect(result.candidates.map((candidate) => JSON.parse(candidate.text).normalize)).toEqual([false]);
    expect(result.failures).toEqual([
      {
        code: 'unusable_candidate',
        scope: 'candidate',
        reason:
          'candidate 1 is not usable: the new value of "fields" is not JSON: Bad escaped character in JSON at position 33',
      },
      {
        code: 'unusable_candidate',
        scope: 'candidate',
        reason: 'candidate 2 is not usable: key "normalize" is replaced twice',
      },
    ]);
  });

  it('edits a YAML file by key, keeping its comment, and never yields a file that does not parse', async () => {
    const client = fakeClient(
      answer([{ rationale: 'amount due', edits: [{ section: 'fields', text: JSON.stringify(FIELDS) }] }]),
    );
    const result = await createReflectiveProposer({ client, artifactFile: 'rules.yaml' }).propose(
      dataContext(RULES_YAML),
    );
    expect(result.failures).toEqual([]);
    const text = result.candidates[0]!.text;
    expect(text.startsWith('# extraction rules\n')).toBe(true);
    expect(parseYaml(text)).toEqual({ fields: FIELDS, normalize: true });
  });

  it('an incumbent that is not a JSON object: every candidate fails, naming the file and the parser', async () => {
    const client = fakeClient(answer([{ rationale: 'x', edits: [{ section: 'fields', text: '{}' }] }]));
    const result = await createReflectiveProposer({ client, artifactFile: 'rules.json' }).propose(
      dataContext('fields: {}\n'),
    );
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]!.reason).toMatch(
      /^no usable candidate in the answer: candidate 1 is not usable: rules\.json is not valid JSON: Unexpected token/,
    );
  });
});

describe('historyText: every tried delta, compact', () => {
  it('keeps all 60 entries within the budget by cutting each delta, and puts identical deltas on one line with each outcome', () => {
    const history = Array.from({ length: 60 }, (_, index) => ({
      delta: `## Hints\n+ hint number ${index} ${'x'.repeat(200)}`,
      decision: 'refused' as const,
      reason: 'refused',
    }));
    const text = historyText(
      [...history, { delta: history[0]!.delta, decision: 'accepted', reason: 'accepted' }],
      6000,
    );
    const lines = text.split('\n');
    expect(lines).toHaveLength(60);
    expect(lines[0]).toMatch(/^- ×2: REFUSED \(refused\), ACCEPTED: ## Hints \+ hint number 0 x+…?$/);
    expect(lines[59]).toContain('hint number 59');
    expect(text).not.toContain('older attempts not shown');
    expect([...text].length).toBeLessThanOrEqual(6000);
  });
});
