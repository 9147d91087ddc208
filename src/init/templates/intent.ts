/**
 * The `intent` template: kloop's reference task, a business application's
 * intent (app type, entities with roles, relations, behaviours, views) from
 * its plain-language description. The artifact is the offline extractor's
 * playbook (`offline`, in the seed playbook's format), a prompt (`llm`), or
 * the cue lists a small program reads (`command`: `run.mjs`, `rules.json`).
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
import { COMMAND_PROTOCOL, MENTIONS, READ_REQUEST } from './command-program.ts';
import { RECORDS } from './intent-records.ts';

/** A minimal valid playbook in the seed playbook's format (examples/intent/playbook.yaml). */
const PLAYBOOK = `# Seed playbook for kloop's offline intent extractor.
#
# The extractor reads a description of a business application and infers
# its intent: an app type, entities with roles, relations, behaviours and
# views. Its code knows English grammar only; everything it knows about
# business applications is in this file, and the loop grows it from evidence.
#
# Matching is on lower-case word boundaries against each word and its lemma:
# the cue "book" matches "book", "books", "booked" and "booking". Every
# section is optional; the values come from the closed vocabularies of
# src/tasks/intent/vocabulary.ts (an unknown app type, role, behaviour or
# view makes the playbook invalid, and every output with it).

# App type → cue words. The type whose distinct cues weigh most wins; ties go
# to the type listed first. A cue is a word or phrase, or { cue, weight }.
appTypeCues:
  booking: [book, appointment, reservation, {cue: time slot, weight: 2}]
  helpdesk: [ticket, support]
  inventory: [stock, warehouse, inventory]
  expenses: [expense, reimburse]

# When no cue matches.
defaultAppType: other

# Known nouns (singular) → role: party, resource, transaction, commitment,
# document or reference.
entityTerms:
  customer: party
  staff: party
  booking: commitment
  appointment: commitment
  order: transaction
  payment: transaction
  invoice: document
  ticket: document

# Surface term → canonical entity name.
entityAliases:
  reservation: Booking

# Nouns that are never entities.
stopList: [app, application, system, way, thing, people, time, day, week, information]

# Nouns that are properties of a record, never records themselves.
attributeTerms: [name, date, address, email, phone, price, amount, status, description]

# What to do with nouns the playbook does not know.
unknownNounPolicy:
  include: true          # unknown nouns become entities
  role: resource         # when no suffix rule applies
  actorRole: party       # nouns the NLP library tags as people (manager, driver)
  compounds: auto        # "loyalty card" stays whole unless the text uses "card" alone

# Behaviour → cue words.
behaviorCues:
  scheduling: [schedule, calendar, slot]
  approval: [approve, approval]
  notification: [notify, remind, reminder, alert]
  payment: [pay, payment, invoice]
  reporting: [report, dashboard]

# View → cue words.
projectionCues:
  calendar: [calendar]
  dashboard: [dashboard]
  kanban: [board]

# Views every app gets.
defaultProjections: [list, form]

# Relation phrases: the subject noun(s) before them relate to the object
# noun(s) after them in the same clause.
relationCues:
  has: {kind: association}
  with: {kind: association}
  belong to: {kind: composition, reverse: true}

# Output caps and entity ranking.
extraction:
  maxEntities: 10
  rankBy: salience
`;

const PROMPT = `# Intent extraction

You read a plain-language description of a business application, written by
the person who wants it, and extract its intent: what kind of application it
is, the records it keeps, how they relate, what it must do, and the views it
shows. Answer from the description only.

## App type

Pick the one app type that describes the application as a whole, from what
the business does rather than from a single word. Use \`other\` only when no
type fits.

## Entities

List the core records the application stores, one entity per kind of
record, named with a singular noun in Title Case (\`Patient\`, \`Booking\`).
Leave out the app itself, the screens, and words like "system" or "people".

## Roles

- \`party\`: a person, team or organisation that acts.
- \`resource\`: a thing that is offered, used, stocked or scheduled.
- \`transaction\`: a discrete event that moves money, goods or stock.
- \`commitment\`: a time-bound promise between parties (booking, contract).
- \`document\`: a record that is authored, submitted or reviewed.
- \`reference\`: lookup or place data that other records point to.

## Behaviours and views

List what the application must do and the views its users need, only when
the description asks for them.

## Description

{{input}}
`;

/** The command program's cue lists, in the playbook's section names. */
const COMMAND_RULES = `${JSON.stringify(
  {
    defaultAppType: 'other',
    appTypeCues: {
      booking: ['book*', 'appointment*'],
      helpdesk: ['ticket*', 'support'],
      inventory: ['stock', 'warehouse*'],
      expenses: ['expense*', 'reimburse*'],
    },
    entityTerms: {
      'customer*': 'party',
      'member*': 'party',
      'agent*': 'party',
      'employee*': 'party',
      'ticket*': 'document',
      'receipt*': 'document',
      delivery: 'transaction',
      'supplier*': 'party',
    },
    behaviorCues: {
      scheduling: ['schedule*', 'calendar'],
      notification: ['remind*', 'alert*'],
      approval: ['approve*'],
      payment: ['pay*', 'reimburse*'],
      reporting: ['dashboard', 'report*'],
    },
    projectionCues: { calendar: ['calendar'], dashboard: ['dashboard'], list: ['list'] },
  },
  null,
  2,
)}\n`;

const COMMAND_PROGRAM = [
  '#!/usr/bin/env node',
  "// Intent extraction for kloop: a keyword reading of one application's description, by the cue lists of the rules file.",
  '//',
  COMMAND_PROTOCOL,
  '//',
  '// The artifact is rules.json: { "defaultAppType", "appTypeCues": { <type>: [cue, ...] },',
  '// "entityTerms": { <noun>: <role> }, "behaviorCues": { <behaviour>: [cue, ...] },',
  '// "projectionCues": { <view>: [cue, ...] } }, values from the intent vocabularies.',
  '// A cue or term matches whole words, any case; "remind*" also matches "reminder"',
  '// (an entity is named after its term: "customer*" gives Customer).',
  "import { readFileSync } from 'node:fs';",
  '',
  READ_REQUEST,
  '',
  MENTIONS,
  '',
  '/** The keys of a cue map whose cues the text mentions. */',
  'function found(cues, text) {',
  '  return Object.entries(cues ?? {}).filter(([, words]) => words.some((word) => mentions(text, word))).map(([key]) => key);',
  '}',
  '',
  '/** "time slot" → "TimeSlot", "customer*" → "Customer". */',
  'function entityName(term) {',
  "  return words(term).map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');",
  '}',
  '',
  'const request = JSON.parse(await readRequest());',
  "const rules = JSON.parse(readFileSync(request.artifact ?? process.env.KLOOP_ARTIFACT, 'utf8'));",
  'const text = request.text;',
  'let appType = rules.defaultAppType;',
  'let most = 0;',
  'for (const [type, cues] of Object.entries(rules.appTypeCues ?? {})) {',
  '  const hits = cues.filter((cue) => mentions(text, cue)).length;',
  '  if (hits > most) [appType, most] = [type, hits];',
  '}',
  'const entities = Object.entries(rules.entityTerms ?? {}).filter(([term]) => mentions(text, term)).map(([term, role]) => ({ name: entityName(term), role }));',
  'const answer = { appType, entities, relations: [], behaviors: found(rules.behaviorCues, text), projections: found(rules.projectionCues, text) };',
  "process.stdout.write(JSON.stringify(answer) + '\\n');",
  '',
].join('\n');

const WEIGHTS = [
  commented('weights:', 'the intent composite; part of the evaluator fingerprint'),
  '  appType: 0.25',
  '  entityRecall: 0.35',
  '  roleAccuracy: 0.20',
  '  behaviorCoverage: 0.20',
  '',
].join('\n');

function artifactOf(executor: InitExecutor): string {
  return executor === 'offline' ? 'playbook.yaml' : executor === 'llm' ? 'prompt.md' : 'rules.json';
}

function config(executor: InitExecutor): string {
  const artifact = artifactOf(executor);
  const how =
    executor === 'offline'
      ? "kloop's offline extractor reads each description by the playbook; no API key, no network."
      : executor === 'llm'
        ? 'A language model reads prompt.md with the description in place of {{input}} and answers the intent as JSON.'
        : 'run.mjs reads each description by the cue lists of rules.json; offline, no API key.';
  const proposer =
    executor === 'offline'
      ? proposerBlock('error-driven', 'offline: reads the optimization failures, ranks playbook edits by net fixes')
      : executor === 'llm'
        ? proposerBlock('reflective', 'a language model reads the diagnostics and rewrites sections of the prompt')
        : proposerBlock('reflective', 'a language model reads the diagnostics and proposes cue-list edits', {
            model: true,
          });
  return [
    configHeader('intent extraction (intent)', [
      how,
      'Score: 0.25 app type + 0.35 entity recall + 0.20 role accuracy + 0.20 behaviour coverage.',
    ]),
    'task: intent',
    '',
    executorBlock(executor, {
      maxOutputTokens: 2048,
      offlineComment: 'the playbook extractor: deterministic, no API key, no network',
    }),
    filesBlock(
      artifact,
      executor === 'offline'
        ? 'the editable artifact: the seed playbook'
        : executor === 'llm'
          ? 'the editable artifact: the prompt template'
          : 'the editable artifact: the cue lists run.mjs reads',
    ),
    proposer,
    gateBlock(executor, { binary: false }),
    stoppingBlock(executor),
    WEIGHTS,
  ].join('\n');
}

function program(executor: InitExecutor): string {
  const intro = {
    offline:
      "kloop's offline extractor reads each description by `playbook.yaml`, the\nartifact the loop edits; its code knows English grammar only.",
    llm: 'A language model reads each description through `prompt.md` (the text in\nplace of `{{input}}`) and answers the intent as JSON; kloop appends the\nanswer format.',
    command:
      '`run.mjs` reads each description by the cue lists of `rules.json`, the\nartifact the loop edits. The program itself stays as it is.',
  }[executor];
  const work = {
    offline:
      '- **Missed entities**: add the word to `entityTerms` with its role, or map a\n  synonym in `entityAliases`, rather than loosening the generic rules.\n- **Spurious entities**: nouns that are never records belong in `stopList`,\n  properties of a record in `attributeTerms`.\n- **Wrong app type or missed behaviours**: add the words that name what the\n  business does to `appTypeCues`, and everyday verbs to `behaviorCues`.',
    llm: '- **Missed entities**: say more precisely which records count as entities.\n- **Wrong roles**: sharpen the role definitions the model confuses.\n- **Wrong app type, missed behaviours**: describe how to tell them apart.',
    command:
      '- **Missed entities**: add the noun to `entityTerms` with its role.\n- **Wrong app type, missed behaviours**: add the words that name what the\n  business does to `appTypeCues`, everyday verbs to `behaviorCues`.',
  }[executor];
  const mechanical = {
    offline: [
      '# Top-level playbook sections a candidate may change; any other section',
      '# (and the header comment) must stay byte-identical.',
      'editableSections: [appTypeCues, entityTerms, entityAliases, stopList, attributeTerms, unknownNounPolicy, behaviorCues, projectionCues, defaultProjections, relationCues, extraction]',
      'maxArtifactCharacters: 20000',
      'forbiddenText: ["TODO", "FIXME", "<<<<<<<", ">>>>>>>"]',
      'requiredText: ["appTypeCues:", "entityTerms:", "behaviorCues:"]',
    ],
    llm: [
      'editableSections: [App type, Entities, Roles, Behaviours and views]',
      'maxArtifactCharacters: 8000',
      'forbiddenText: ["TODO", "FIXME", "ignore previous"]',
      'requiredText: ["{{input}}", "## Description"]',
    ],
    command: [
      'maxArtifactCharacters: 12000',
      'forbiddenText: ["TODO", "FIXME"]',
      'requiredText: [\'"appTypeCues"\', \'"entityTerms"\']',
    ],
  }[executor];
  return programMarkdown({
    title: 'intent extraction',
    intro,
    instructions: [
      'Recover more of each gold intent on the optimization partition: the app type,',
      'the core entities with their roles, and the behaviours. The composite weighs',
      'entity recall most (0.35), then app type (0.25), role accuracy and behaviour',
      'coverage (0.20 each).',
      '',
      'Work from the failures, largest group first:',
      '',
      work,
      '',
      'Prefer general vocabulary to phrases from one description: an edit that only',
      'helps the examples it was read from is refused by the shadow partition as',
      'specialization. One small, coherent edit per candidate.',
    ].join('\n'),
    constraints: [
      executor === 'offline'
        ? 'The sections listed below may change; `defaultAppType` (what the extractor\nanswers when nothing matches is a product decision) and the header comment\nstay as they are. The playbook stays valid for the playbook schema.'
        : executor === 'llm'
          ? 'The introduction and the `## Description` section (with `{{input}}`) stay as\nthey are; the other sections may change.'
          : 'Only the rules file changes; `run.mjs` and the answer format stay as they\nare. The rules file stays valid JSON, its values from the intent vocabularies.',
      'The corpus, the scorer, its weights and the partitions are frozen for the\nwhole study.',
    ].join('\n\n'),
    invariants: [
      'the intent vocabularies (app types, roles, behaviours, views): src/tasks/intent/vocabulary.ts',
      'the composite weights in kloop.yaml (`weights`)',
      'no sentence or unusual name from the corpus is copied into the artifact',
      'the artifact stays short enough to read',
    ],
    mechanical,
    stoppingExtra: executor === 'llm' ? [MONEY_STOP] : [],
  });
}

/** Renders the intent study for an executor (`offline`, `llm` or `command`). */
export function renderIntent(executor: InitExecutor): RenderedStudy {
  const artifact = artifactOf(executor);
  const artifactFiles =
    executor === 'offline'
      ? [{ path: 'playbook.yaml', text: PLAYBOOK }]
      : executor === 'llm'
        ? [{ path: 'prompt.md', text: PROMPT }]
        : [
            { path: 'rules.json', text: COMMAND_RULES },
            { path: 'run.mjs', text: COMMAND_PROGRAM },
          ];
  const corpus = [
    corpusHeader('Descriptions of business applications, each with its gold intent.', [
      'id:        unique, e.g. booking-dental-01',
      'goal:      the description, as its author wrote it (a YAML block: `goal: >-`)',
      'expected:  the gold intent: appType, entities [{ name, role, aliases? }],',
      '           relations [{ from, to, cardinality, kind }], behaviors, projections;',
      '           values from src/tasks/intent/vocabulary.ts; every entity name (or',
      '           an alias) must appear in the goal; a component may be left out',
    ]),
    RECORDS,
  ].join('\n');
  return {
    files: [
      { path: 'kloop.yaml', text: config(executor) },
      { path: 'program.md', text: program(executor) },
      ...artifactFiles,
      { path: 'corpus/examples.yaml', text: corpus },
      { path: '.gitignore', text: STUDY_GITIGNORE },
    ],
    artifact,
    sampleRecords: (RECORDS.match(/^- id:/gm) ?? []).length,
    metric: 'the intent composite (0.25 app type + 0.35 entity recall + 0.20 role accuracy + 0.20 behaviour coverage)',
    metricTodo: 'change the weights in kloop.yaml (weights) before the first run, never during a study',
    metricIsSample: false,
    proposer: executor === 'offline' ? 'error-driven' : 'reflective',
  };
}
