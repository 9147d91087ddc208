/**
 * The `custom` template: the user's own metric in `score.ts`, here a ticket
 * triage (a queue and a priority, the queue weighing 3 and the priority 1,
 * a priority one step off earning half). The artifact is a prompt (`llm`) or
 * the routing rules of a small program (`command`: `run.mjs`, `rules.json`).
 *
 * `score.ts` follows the contract kloop's custom task loads
 * (src/tasks/custom/custom-task.ts): named exports `score`, `components`,
 * `outputSchema`, `expectedSchema`, `inputSchema`, `outcome`; the schemas are
 * JSON Schema objects, so the study folder needs no zod of its own.
 *
 * @module
 */
import {
  commented,
  configHeader,
  corpusHeader,
  executorBlock,
  filesBlock,
  gateBlock,
  type InitExecutor,
  programMarkdown,
  proposerBlock,
  type RenderedStudy,
  MONEY_STOP,
  STUDY_GITIGNORE,
  stoppingBlock,
} from './common.ts';
import { LABELS, queueList, routingProgram, SAMPLE_TICKETS, SEED_ROUTING_RULES, ticketRecords } from './tickets.ts';

/** The sample scorer. Plain TypeScript: kloop transpiles it on load (esbuild), no build step. */
export const SCORE_TS = `/**
 * The metric of this study. kloop calls \`score(output, expected, input)\` once
 * per example (kloop.yaml \`task: { kind: custom, module: score.ts }\`):
 *
 * - \`output\`: the executor's answer, already checked against \`outputSchema\`
 *   (an answer that does not fit is invalid: counted, never scored);
 * - \`expected\`, \`input\`: the record's fields in corpus/examples.yaml,
 *   checked against \`expectedSchema\` and \`inputSchema\` when the corpus loads.
 *
 * It returns every declared component in [0, 1], a \`feedback\` text the
 * proposer reads (what went wrong, in words; empty when right) and optional
 * \`diagnostics\` (JSON). kloop computes the composite: the weighted mean of
 * the components under the weights of \`components\` below (kloop.yaml
 * \`weights:\` may override them), in [0, 1]. (Without \`components\`, return
 * \`{ score, feedback }\` and the score is the composite.)
 *
 * \`score\` must be synchronous and return numbers in [0, 1]: a throw, a
 * Promise or a number out of range is a scorer bug. On a candidate's output,
 * that candidate is refused (invalid) with the message; on the seed's, the run
 * stops (exit 2) naming the example. Editing this file is a new evaluator:
 * results before and after are never compared.
 *
 * This sample scores a ticket triage: the queue matters most (weight 3), the
 * priority less (weight 1), and a priority one step off earns half. Replace it
 * with your own metric; keep the exported names.
 */

export const QUEUES = [${LABELS.map((label) => `'${label}'`).join(', ')}] as const;
export const PRIORITIES = ['low', 'normal', 'high'] as const;

export type Queue = (typeof QUEUES)[number];
export type Priority = (typeof PRIORITIES)[number];

/** What the executor answers, and what a record's \`expected\` holds. */
export interface Triage {
  label: Queue;
  priority: Priority;
}

/** What \`score\` returns. */
export interface ScoreResult {
  components: { label: number; priority: number };
  feedback: string;
  diagnostics: { expected: Queue; predicted: Queue; expectedPriority: Priority; predictedPriority: Priority; words: number };
}

/** JSON Schema of a triage (kloop reads it with zod's fromJSONSchema). */
const triageSchema = {
  type: 'object',
  properties: {
    label: { type: 'string', enum: [...QUEUES] },
    priority: { type: 'string', enum: [...PRIORITIES] },
  },
  required: ['label', 'priority'],
};

/** The executor's answer must fit this (an LLM executor is asked for it as structured output). */
export const outputSchema = triageSchema;
/** A record's \`expected\`. */
export const expectedSchema = { ...triageSchema, additionalProperties: false };
/** A record's \`input\`: the ticket text. */
export const inputSchema = { type: 'string', minLength: 1 };

/** The components of the composite and their default weights (only ratios matter). */
export const components = [
  { name: 'label', weight: 3, description: 'the ticket went to the queue that resolves it' },
  { name: 'priority', weight: 1, description: 'the priority is right (one step off: 0.5)' },
];

/** Scores between 0 and 1 occur, so the gate uses the paired t-test (\`'binary'\`: McNemar's exact test). */
export const outcome = 'continuous';

export function score(output: Triage, expected: Triage, input: string): ScoreResult {
  const label = output.label === expected.label ? 1 : 0;
  const steps = Math.abs(PRIORITIES.indexOf(output.priority) - PRIORITIES.indexOf(expected.priority));
  const priority = steps === 0 ? 1 : steps === 1 ? 0.5 : 0;
  const problems: string[] = [];
  if (label === 0) problems.push(\`expected \${expected.label}, routed to \${output.label}\`);
  if (priority < 1) problems.push(\`priority \${output.priority}, expected \${expected.priority}\`);
  return {
    components: { label, priority },
    feedback: problems.join('; '),
    diagnostics: {
      expected: expected.label,
      predicted: output.label,
      expectedPriority: expected.priority,
      predictedPriority: output.priority,
      words: input.split(/\\s+/).filter((word) => word !== '').length,
    },
  };
}
`;

const PROMPT = `# Support ticket triage

You triage one customer support ticket: the queue whose team can resolve it,
and how urgent it is. Answer from the ticket only.

## Queues

${queueList()}

## Priority

- \`high\`: the customer cannot use the product or has lost money (charged
  twice, cannot sign in, the service is down).
- \`low\`: a question or a request that can wait.
- \`normal\`: everything else.

## Ticket

{{input}}
`;

function config(executor: InitExecutor): string {
  return [
    configHeader('support ticket triage (custom metric)', [
      executor === 'llm'
        ? 'A language model reads prompt.md with the ticket in place of {{input}} and answers {"label", "priority"}.'
        : 'run.mjs routes each ticket by the keyword rules in rules.json and sets a priority; offline, no API key.',
      'Score: score.ts, your metric (here: queue weighs 3, priority 1).',
    ]),
    'task:',
    '  kind: custom',
    '  module: score.ts           # exports score(output, expected, input), components and the schemas',
    '',
    commented('# weights:', "optional: override score.ts's component weights"),
    '#   label: 3',
    '#   priority: 1',
    '',
    executorBlock(executor, { maxOutputTokens: 256 }),
    filesBlock(
      executor === 'llm' ? 'prompt.md' : 'rules.json',
      executor === 'llm'
        ? 'the editable artifact: the prompt template'
        : 'the editable artifact: the routing rules run.mjs reads',
    ),
    executor === 'llm'
      ? proposerBlock('reflective', "a language model reads score.ts's feedback and rewrites sections of the prompt")
      : proposerBlock(
          'error-driven',
          "offline: proposes keyword edits of the routing rules from score.ts's diagnostics (expected, predicted)",
        ),
    gateBlock(executor, { binary: false }),
    stoppingBlock(executor),
  ].join('\n');
}

function program(executor: InitExecutor): string {
  const llm = executor === 'llm';
  return programMarkdown({
    title: 'support ticket triage',
    intro: [
      llm
        ? 'A language model triages each support ticket, reading `prompt.md` with the\nticket in place of `{{input}}`; kloop appends the answer format (the\n`outputSchema` of `score.ts`).'
        : '`run.mjs` routes each support ticket by the keyword rules in `rules.json`,\nthe artifact the loop edits, and sets its priority by its own fixed rule.',
      '',
      'The metric is `score.ts`: the queue weighs 3, the priority 1, and a priority',
      'one step off earns half.',
    ].join('\n'),
    instructions: [
      'Raise the triage score on the optimization partition, the queue first (it',
      'weighs three times the priority).',
      '',
      'Work from the feedback of `score.ts`, largest group first ("expected billing,',
      'routed to technical"; "priority normal, expected high"):',
      '',
      llm
        ? '- say more precisely what belongs to each queue in `## Queues`, with the\n  words customers actually use;\n- sharpen `## Priority` where the urgency is misjudged.'
        : "- add the words customers actually use for a queue to its rule's `any` list\n  (`refund*` for every form of a word);\n- when a term pulls tickets into the wrong queue, add a `none` term or make it\n  a longer phrase rather than removing it; the first rule that matches wins.",
      '',
      'Prefer general words to phrases from one ticket: an edit that only fixes the',
      'tickets it was read from is refused by the shadow partition as',
      'specialization. One small, coherent edit per candidate.',
    ].join('\n'),
    constraints: [
      llm
        ? 'Only the `## Queues` and `## Priority` sections may change; the introduction\nand the `## Ticket` section (with `{{input}}`) stay as they are.'
        : 'Only the rules file changes; `run.mjs` (its matching and its priority rule)\nstays as it is. The rules file stays valid JSON with `default` and `rules`.',
      'The metric (`score.ts`), its weights, the corpus and the partitions are\nfrozen for the whole study: editing `score.ts` makes a new evaluator.',
    ].join('\n\n'),
    invariants: [
      `the queues: ${LABELS.join(', ')}, and the priorities low, normal, high (\`score.ts\`)`,
      llm
        ? 'the ticket is given to the model whole, in the `## Ticket` section'
        : 'every queue keeps a rule, and there is a `default` queue for tickets no rule matches',
      'no ticket text, customer name or order number is copied into the artifact',
      'the artifact stays short enough to read',
    ],
    stoppingExtra: llm ? [MONEY_STOP] : [],
    mechanical: llm
      ? [
          'editableSections: [Queues, Priority]',
          'maxArtifactCharacters: 6000',
          'forbiddenText: ["TODO", "FIXME", "ignore previous"]',
          'requiredText: ["{{input}}", "## Ticket"]',
        ]
      : [
          'maxArtifactCharacters: 8000',
          'forbiddenText: ["TODO", "FIXME"]',
          'requiredText: [\'"default"\', \'"rules"\']',
        ],
  });
}

/** Renders the custom study for an executor (`llm` or `command`). */
export function renderCustom(executor: InitExecutor): RenderedStudy {
  const artifactFiles =
    executor === 'llm'
      ? [{ path: 'prompt.md', text: PROMPT }]
      : [
          { path: 'rules.json', text: SEED_ROUTING_RULES },
          { path: 'run.mjs', text: routingProgram({ priority: true }) },
        ];
  const corpus = [
    corpusHeader('Support tickets, each with its queue and priority (checked by score.ts).', [
      'id:        unique, e.g. ticket-0042',
      'input:     the ticket text (score.ts inputSchema)',
      `expected:  { label: <one of ${LABELS.join(', ')}>, priority: low | normal | high } (score.ts expectedSchema)`,
    ]),
    ticketRecords({ priority: true }),
  ].join('\n');
  return {
    files: [
      { path: 'kloop.yaml', text: config(executor) },
      { path: 'program.md', text: program(executor) },
      { path: 'score.ts', text: SCORE_TS },
      ...artifactFiles,
      { path: 'corpus/examples.yaml', text: corpus },
      { path: '.gitignore', text: STUDY_GITIGNORE },
    ],
    artifact: artifactFiles[0]!.path,
    sampleRecords: SAMPLE_TICKETS.length,
    metric: 'score.ts, a sample triage metric (queue 3 : priority 1)',
    metricTodo: 'write your own metric in score.ts (score, components, the schemas)',
    metricIsSample: true,
    proposer: executor === 'llm' ? 'reflective' : 'error-driven',
  };
}
