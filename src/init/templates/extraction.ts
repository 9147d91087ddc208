/**
 * The `extraction` template: four fields read from invoices (vendor, invoice
 * number, total, due date), scored field by field. The artifact is a prompt
 * (`llm`) or the patterns a small program reads (`command`: `run.mjs` and
 * `rules.json`).
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
  yamlString,
} from './common.ts';
import { COMMAND_PROTOCOL, READ_REQUEST } from './command-program.ts';

/** The fields, in report order, as kloop.yaml declares them. */
const FIELDS = ['vendor', 'invoiceNumber', 'total', 'dueDate'] as const;

interface SampleInvoice {
  id: string;
  text: string;
  expected: { vendor: string; invoiceNumber: string; total: number; dueDate: string };
  tags: readonly string[];
  partition: 'optimization' | 'anchor' | 'shadow';
}

const SAMPLES: readonly SampleInvoice[] = [
  {
    id: 'invoice-0001',
    text: 'INVOICE INV-2041\nFrom: Northwind Traders Ltd\nIssued: 2026-03-02   Due date: 2026-04-01\n2 x Descaler 5 l @ 38.00      76.00\nVAT 20%                       15.20\nTotal due: EUR 91.20',
    expected: { vendor: 'Northwind Traders Ltd', invoiceNumber: 'INV-2041', total: 91.2, dueDate: '2026-04-01' },
    tags: ['layout:header'],
    partition: 'optimization',
  },
  {
    id: 'invoice-0002',
    text: 'Hi, please find attached our invoice no. 7733 for the March window cleaning.\nAmount: £240.00, payable by 15 April 2026.\nThanks, Sparkle Window Services',
    expected: { vendor: 'Sparkle Window Services', invoiceNumber: '7733', total: 240, dueDate: '2026-04-15' },
    tags: ['layout:email'],
    partition: 'anchor',
  },
  {
    id: 'invoice-0003',
    text: 'Acme Office Supplies - Invoice #A-1189\nDate: 2026-02-20\nPayment due: 2026-03-22\nPrinter paper (10 reams)   54.90\nToner cartridge            89.00\nTOTAL 143.90 USD',
    expected: { vendor: 'Acme Office Supplies', invoiceNumber: 'A-1189', total: 143.9, dueDate: '2026-03-22' },
    tags: ['layout:title-line'],
    partition: 'optimization',
  },
  {
    id: 'invoice-0004',
    text: 'Invoice number: 2026-0415\nFrom: Lindqvist Consulting AB\nConsulting, April (12 h)   SEK 14,400.00\nTotal: SEK 14,400.00\nDue: 2026-05-31',
    expected: { vendor: 'Lindqvist Consulting AB', invoiceNumber: '2026-0415', total: 14400, dueDate: '2026-05-31' },
    tags: ['layout:header'],
    partition: 'shadow',
  },
];

/** The seed patterns: a first version that reads the tidy layouts and misses the others. */
const SEED_RULES = `${JSON.stringify(
  {
    fields: {
      vendor: { patterns: ['^from:\\s*(.+)$'] },
      invoiceNumber: { patterns: ['invoice\\s*(?:no\\.?|number|#)?\\s*:?\\s*#?([A-Z0-9][A-Z0-9-]*\\d)'] },
      total: {
        type: 'number',
        patterns: ['total(?: due)?\\s*:?\\s*(?:[A-Z]{3}|[€$£])?\\s*([0-9][0-9,]*(?:\\.[0-9]+)?)'],
      },
      dueDate: { patterns: ['due(?: date)?\\s*:?\\s*(\\d{4}-\\d{2}-\\d{2})'] },
    },
  },
  null,
  2,
)}\n`;

const PROGRAM_JS = [
  '#!/usr/bin/env node',
  '// Invoice field extraction for kloop: reads fields from one invoice text by the patterns in the rules file.',
  '//',
  COMMAND_PROTOCOL,
  '//',
  '// The artifact is rules.json: { "fields": { <name>: { "patterns": [<regular expression>, ...], "type"?: "number" } } }.',
  '// Each pattern is a JavaScript regular expression, matched case-insensitively',
  '// with ^ and $ at line ends; the first pattern that matches gives the field',
  '// its first capture group, trimmed ("number": thousands commas removed, then',
  '// read as a number). A field no pattern matches is null ("the text has none").',
  "import { readFileSync } from 'node:fs';",
  '',
  READ_REQUEST,
  '',
  '/** The value of one field, or null. */',
  'function extract(field, text) {',
  '  for (const pattern of field.patterns) {',
  "    const match = new RegExp(pattern, 'im').exec(text);",
  '    if (match === null || match[1] === undefined) continue;',
  '    const value = match[1].trim();',
  "    if (field.type !== 'number') return value;",
  "    const number = Number(value.replace(/,/g, ''));",
  '    if (Number.isFinite(number)) return number;',
  '  }',
  '  return null;',
  '}',
  '',
  'const request = JSON.parse(await readRequest());',
  "const rules = JSON.parse(readFileSync(request.artifact ?? process.env.KLOOP_ARTIFACT, 'utf8'));",
  "if (typeof rules.fields !== 'object' || rules.fields === null) throw new Error('the rules file needs \"fields\"');",
  'const answer = Object.fromEntries(Object.entries(rules.fields).map(([name, field]) => [name, extract(field, request.text)]));',
  "process.stdout.write(JSON.stringify(answer) + '\\n');",
  '',
].join('\n');

const PROMPT = `# Invoice fields

You read one invoice, or an email about one, and extract four fields.
Answer from the text only: when the text does not give a field, leave it
out (null); never guess.

## Fields

- \`vendor\`: the company that issued the invoice, as written (without
  "From:").
- \`invoiceNumber\`: the invoice's number or code as written (INV-2041,
  A-1189), without "No." or "#".
- \`total\`: the amount to pay, tax included, as a number without currency
  or thousands separators (EUR 1,250.00 → 1250).
- \`dueDate\`: the date payment is due, as YYYY-MM-DD.

## Reading numbers and dates

- When the invoice gives several amounts, the total is the last amount to
  pay, after tax.
- A date written in words ("15 April 2026") is written as 2026-04-15.

## Invoice

{{input}}
`;

function config(executor: InitExecutor): string {
  return [
    configHeader('invoice field extraction (extraction)', [
      executor === 'llm'
        ? 'A language model reads prompt.md with the invoice in place of {{input}} and answers the four fields as JSON.'
        : 'run.mjs reads the four fields from each invoice by the patterns in rules.json; offline, no API key.',
      'Score: each field the gold gives is right or wrong by its match rule; the',
      'composite is their weighted mean (fields the gold leaves out are skipped).',
    ]),
    'task:',
    '  kind: extraction',
    '  fields:                    # name → how it is matched; weight: its share of the composite (default 1)',
    '    vendor: { match: exact }                           # strings compared trimmed, case-folded',
    '    invoiceNumber: { match: exact }',
    '    total: { match: number, tolerance: 0.01, weight: 2 }   # within ±0.01 of the gold; counts double',
    '    dueDate: { match: exact }                          # YYYY-MM-DD',
    '    # items: { match: set-f1 }                         # a list, scored by F1 against the gold list',
    '',
    executorBlock(executor, { maxOutputTokens: 512 }),
    filesBlock(
      executor === 'llm' ? 'prompt.md' : 'rules.json',
      executor === 'llm'
        ? 'the editable artifact: the prompt template'
        : 'the editable artifact: the patterns run.mjs reads',
    ),
    executor === 'llm'
      ? proposerBlock('reflective', 'a language model reads the wrong fields and rewrites sections of the prompt')
      : proposerBlock('reflective', 'a language model reads the wrong fields and proposes pattern edits', {
          model: true,
        }),
    gateBlock(executor, { binary: false }),
    stoppingBlock(executor),
  ].join('\n');
}

function program(executor: InitExecutor): string {
  const llm = executor === 'llm';
  return programMarkdown({
    title: 'invoice field extraction',
    intro: llm
      ? 'A language model reads each invoice through `prompt.md` (the invoice in place\nof `{{input}}`) and answers the fields as JSON; kloop appends the answer\nformat.'
      : '`run.mjs` reads the fields of each invoice by the regular expressions in\n`rules.json`, the artifact the loop edits. The program itself stays as it is.',
    instructions: [
      'Get more fields right on the optimization partition; `total` counts double.',
      '',
      'Work from the wrong fields, largest group first (feedback such as',
      '"total is missing, expected 240"):',
      '',
      llm
        ? '- say more precisely where each field is found and how it is written in\n  `## Fields`;\n- add a rule to `## Reading numbers and dates` for each way of writing an\n  amount or a date that the model gets wrong.'
        : '- add a pattern for each layout the current patterns miss ("Amount: £240.00",\n  "payable by 15 April 2026"), most specific first;\n- make a pattern that captures too much stricter rather than removing it.',
      '',
      'Prefer rules that read a layout over rules that name one vendor: an edit',
      'that only fixes the invoices it was read from is refused by the shadow',
      'partition as specialization. One small, coherent edit per candidate.',
    ].join('\n'),
    constraints: [
      llm
        ? 'Only the `## Fields` and `## Reading numbers and dates` sections may change;\nthe introduction and the `## Invoice` section (with `{{input}}`) stay as they\nare.'
        : 'Only the rules file changes; `run.mjs`, its matching rules and the answer\nformat stay as they are. The rules file stays valid JSON with one entry per\nfield under `fields`.',
      'The fields, their match rules and weights, the corpus and the partitions are\nfrozen for the whole study.',
    ].join('\n\n'),
    invariants: [
      `the fields: ${FIELDS.join(', ')} (kloop.yaml \`task.fields\`), with their match rules`,
      llm
        ? 'the invoice is given to the model whole, in the `## Invoice` section'
        : '`total` stays a number field (`"type": "number"`)',
      'no vendor name, amount or invoice number from the corpus is copied into the artifact',
      'the artifact stays short enough to read',
    ],
    stoppingExtra: llm ? [MONEY_STOP] : [],
    mechanical: llm
      ? [
          'editableSections: [Fields, Reading numbers and dates]',
          'maxArtifactCharacters: 6000',
          'forbiddenText: ["TODO", "FIXME", "ignore previous"]',
          'requiredText: ["{{input}}", "## Invoice"]',
        ]
      : [
          'maxArtifactCharacters: 8000',
          'forbiddenText: ["TODO", "FIXME"]',
          `requiredText: [${FIELDS.map((name) => `'"${name}"'`).join(', ')}]`,
        ],
  });
}

function records(): string {
  return SAMPLES.map((sample) =>
    [
      `- id: ${sample.id}`,
      '  input: |-',
      ...sample.text.split('\n').map((line) => `    ${line}`),
      `  expected: { vendor: ${yamlString(sample.expected.vendor)}, invoiceNumber: ${yamlString(sample.expected.invoiceNumber)}, total: ${sample.expected.total}, dueDate: ${yamlString(sample.expected.dueDate)} }`,
      `  tags: [${sample.tags.join(', ')}]`,
      `  partition: ${sample.partition}`,
      '',
    ].join('\n'),
  ).join('\n');
}

/** Renders the extraction study for an executor (`llm` or `command`). */
export function renderExtraction(executor: InitExecutor): RenderedStudy {
  const artifactFiles =
    executor === 'llm'
      ? [{ path: 'prompt.md', text: PROMPT }]
      : [
          { path: 'rules.json', text: SEED_RULES },
          { path: 'run.mjs', text: PROGRAM_JS },
        ];
  const corpus = [
    corpusHeader('Invoices, each with the fields a person read from it.', [
      'id:        unique, e.g. invoice-0042',
      'input:     the invoice text (a YAML block: `input: |-` and the lines indented),',
      '           or an object of text fields: { subject: ..., body: ... }',
      `expected:  the fields the text gives: ${FIELDS.join(', ')}; leave out a field`,
      '           you did not check (skipped, not scored), null for one the text lacks',
    ]),
    records(),
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
    sampleRecords: SAMPLES.length,
    metric: `the field-by-field score over ${FIELDS.join(', ')} (total weighs 2)`,
    metricTodo: 'declare your own fields in kloop.yaml (task.fields) and in the artifact',
    metricIsSample: false,
    proposer: 'reflective',
  };
}
