/**
 * The `classification` template: support tickets routed to one of four
 * queues, the seed's "support routing / misroute rate / routing_rules.json"
 * row. The artifact is a prompt (`llm`) or the routing rules a small program
 * reads (`command`: `run.mjs` and `rules.json`).
 *
 * @module
 */
import {
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

const PROMPT = `# Support ticket routing

You route one customer support ticket to the queue whose team can resolve
it. Read the ticket, decide what the customer needs done, and answer with
exactly one queue.

## Queues

${queueList()}

## How to decide

- Route by what must be done, not by the first word that sounds like a
  queue: "my card was declined" is billing even though it mentions an account.
- When two queues fit, pick the one whose team can act without handing the
  ticket on.

## Ticket

{{input}}
`;

function config(executor: InitExecutor): string {
  const artifact = executor === 'llm' ? 'prompt.md' : 'rules.json';
  return [
    configHeader('support ticket routing (classification)', [
      executor === 'llm'
        ? 'A language model reads prompt.md with the ticket in place of {{input}} and answers {"label"}.'
        : 'run.mjs routes each ticket by the keyword rules in rules.json and answers {"label"}; offline, no API key.',
      'Score: 1 when the label is the expected one, else 0; reported as the misroute rate.',
    ]),
    'task:',
    '  kind: classification',
    `  labels: [${LABELS.join(', ')}]   # the closed set; an answer outside it is invalid, never scored`,
    '  reportAs: misroute rate    # the share of tickets sent to the wrong queue (1 − accuracy); or: accuracy',
    '',
    executorBlock(executor, { maxOutputTokens: 256 }),
    filesBlock(
      artifact,
      executor === 'llm'
        ? 'the editable artifact: the prompt template'
        : 'the editable artifact: the routing rules run.mjs reads',
    ),
    executor === 'llm'
      ? proposerBlock('reflective', 'a language model reads the misroutes and rewrites sections of the prompt')
      : proposerBlock(
          'error-driven',
          'offline: proposes keyword edits of the routing rules from the misroutes, ranked by net fixes',
        ),
    gateBlock(executor, { binary: true }),
    stoppingBlock(executor),
  ].join('\n');
}

function program(executor: InitExecutor): string {
  const llm = executor === 'llm';
  return programMarkdown({
    title: 'support ticket routing',
    intro: llm
      ? 'A language model routes each support ticket to one queue, reading `prompt.md`\nwith the ticket in place of `{{input}}`; kloop appends the answer format\n(`{"label": ...}`, one of the labels in `kloop.yaml`).'
      : '`run.mjs` routes each support ticket to one queue by the keyword rules in\n`rules.json`, the artifact the loop edits. The program itself stays as it is.',
    instructions: [
      'Lower the misroute rate on the optimization partition: send more tickets to',
      'the queue whose team can resolve them.',
      '',
      'Work from the misroutes, largest group first (feedback such as',
      '"expected billing, routed to technical"):',
      '',
      llm
        ? '- say more precisely what belongs to each queue in `## Queues`, with the\n  words customers actually use;\n- where two queues are confused, add a rule to `## How to decide` that tells\n  them apart by what must be done.'
        : '- add the words customers actually use for a queue to its rule\'s `any` list\n  ("money back" for billing, "sign in" for account; `refund*` for every form\n  of a word);\n- when a term pulls tickets into the wrong queue, add a `none` term or make it\n  a longer phrase rather than removing it; the first rule that matches wins,\n  so a rule\'s place matters.',
      '',
      'Prefer general words to phrases from one ticket: an edit that only fixes the',
      'tickets it was read from is refused by the shadow partition as',
      'specialization. One small, coherent edit per candidate is easier to judge.',
    ].join('\n'),
    constraints: [
      llm
        ? 'Only the `## Queues` and `## How to decide` sections may change; the\nintroduction and the `## Ticket` section (with `{{input}}`) stay as they are.'
        : 'Only the rules file changes; `run.mjs`, its matching rules and the answer\nformat stay as they are. The rules file stays valid JSON with `default` and\n`rules`.',
      'The labels, the corpus, the scorer and the partitions are frozen for the\nwhole study.',
    ].join('\n\n'),
    invariants: [
      `the set of queues: ${LABELS.join(', ')} (kloop.yaml \`task.labels\`); a new queue is a new study`,
      llm
        ? 'the ticket is given to the model whole, in the `## Ticket` section'
        : 'every queue keeps a rule, and there is a `default` queue for tickets no rule matches',
      'no ticket text, customer name or order number is copied into the artifact',
      'the artifact stays short enough to read',
    ],
    stoppingExtra: llm ? [MONEY_STOP] : [],
    mechanical: llm
      ? [
          'editableSections: [Queues, How to decide]',
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

/** Renders the classification study for an executor (`llm` or `command`). */
export function renderClassification(executor: InitExecutor): RenderedStudy {
  const artifactFiles =
    executor === 'llm'
      ? [{ path: 'prompt.md', text: PROMPT }]
      : [
          { path: 'rules.json', text: SEED_ROUTING_RULES },
          { path: 'run.mjs', text: routingProgram({ priority: false }) },
        ];
  const corpus = [
    corpusHeader('Support tickets, each with the queue that resolved it.', [
      'id:        unique, e.g. ticket-0042',
      'input:     the ticket text (or an object of text fields: { subject: ..., body: ... })',
      `expected:  { label: <one of ${LABELS.join(', ')}> }`,
    ]),
    ticketRecords({ priority: false }),
  ].join('\n');
  return {
    files: [
      { path: 'kloop.yaml', text: config(executor) },
      { path: 'program.md', text: program(executor) },
      ...artifactFiles,
      { path: 'corpus/examples.yaml', text: corpus },
      { path: '.gitignore', text: STUDY_GITIGNORE },
    ],
    artifact: artifactFiles[0]!.path,
    sampleRecords: SAMPLE_TICKETS.length,
    metric: `the misroute rate (1 − accuracy) over ${LABELS.length} sample queues`,
    metricTodo: 'put your own queues in kloop.yaml (task.labels) and in the artifact',
    metricIsSample: false,
    proposer: executor === 'llm' ? 'reflective' : 'error-driven',
  };
}
