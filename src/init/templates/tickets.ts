/**
 * The support-ticket samples the classification and custom templates share:
 * four tickets, the queues, the seed routing rules (`rules.json`) and the
 * command program that routes by them (`run.mjs`).
 *
 * `rules.json` is in kloop's routing-rules format (version 1, the JSON form;
 * src/executors/routing-rules/routing-rules.ts), which the keyword-rules
 * proposer edits and keeps JSON:
 *
 * ```json
 * { "queues": ["billing", "technical"], "default": "technical",
 *   "rules": [{ "id": "billing", "queue": "billing", "any": ["invoice*", "refund*"], "none": ["gift card"] }] }
 * ```
 *
 * `run.mjs` routes exactly as that format says: the first rule whose `any`
 * has a term in the text, whose `all` terms all occur and whose `none` terms
 * do not, gives the queue; no rule: `default`. Terms match whole words (see
 * `MENTIONS` in `command-program.ts`; `word*` a prefix).
 *
 * @module
 */
import { yamlString } from './common.ts';
import { COMMAND_PROTOCOL, MENTIONS, READ_REQUEST } from './command-program.ts';

/** The queues, in report order, with what each is for. */
export const QUEUES: ReadonlyArray<readonly [label: string, description: string]> = [
  ['billing', 'invoices, charges, refunds, payment methods, receipts and VAT'],
  ['technical', 'errors, crashes, slow or broken features of the product'],
  ['account', 'signing in, passwords, profile details, users and closing an account'],
  ['shipping', 'delivery dates, tracking, lost or damaged parcels, where we ship'],
];

/** The queue names. */
export const LABELS: readonly string[] = QUEUES.map(([label]) => label);

/** One sample ticket. */
export interface SampleTicket {
  id: string;
  text: string;
  label: string;
  priority: 'low' | 'normal' | 'high';
  tags: readonly string[];
  partition: 'optimization' | 'anchor' | 'shadow';
}

/** The four tickets `kloop init` writes to corpus/examples.yaml. */
export const SAMPLE_TICKETS: readonly SampleTicket[] = [
  {
    id: 'ticket-0001',
    text: 'I was charged twice for my March subscription. Please refund the second payment.',
    label: 'billing',
    priority: 'high',
    tags: ['source:email'],
    partition: 'optimization',
  },
  {
    id: 'ticket-0002',
    text: "I can't log in since I changed my password yesterday; the site says my username does not exist.",
    label: 'account',
    priority: 'high',
    tags: ['source:chat'],
    partition: 'anchor',
  },
  {
    id: 'ticket-0003',
    text: "My parcel was supposed to arrive on Monday and the tracking page hasn't changed for four days.",
    label: 'shipping',
    priority: 'normal',
    tags: ['source:email'],
    partition: 'optimization',
  },
  {
    id: 'ticket-0004',
    text: 'The app crashes every time I open the settings screen on my Android phone.',
    label: 'technical',
    priority: 'high',
    tags: ['source:app-store'],
    partition: 'shadow',
  },
];

/** The seed routing rules: a deliberately modest first version the loop grows from evidence. */
export const SEED_ROUTING_RULES = `${JSON.stringify(
  {
    queues: ['billing', 'technical', 'account', 'shipping'],
    default: 'technical',
    rules: [
      { id: 'billing', queue: 'billing', any: ['invoice*', 'refund*', 'charged', 'payment*'] },
      { id: 'account', queue: 'account', any: ['password*', 'log in', 'username*'] },
      { id: 'shipping', queue: 'shipping', any: ['delivery', 'tracking', 'parcel*'] },
      { id: 'technical', queue: 'technical', any: ['error*', 'crash*', 'bug*'] },
    ],
  },
  null,
  2,
)}\n`;

/** The routing function of run.mjs: kloop's routing-rules format, version 1 (see the module comment). */
const ROUTE = String.raw`/** The queue of the first rule that matches the text (an "any" term, every "all" term, no "none" term); else the default. */
function route(rules, text) {
  if (typeof rules.default !== 'string' || !Array.isArray(rules.rules)) {
    throw new Error('the rules file needs "default" (a queue) and "rules" (a list of { queue, any, all?, none? })');
  }
  const matches = (rule) =>
    (rule.any ?? []).some((term) => mentions(text, term)) &&
    (rule.all ?? []).every((term) => mentions(text, term)) &&
    !(rule.none ?? []).some((term) => mentions(text, term));
  return rules.rules.find(matches)?.queue ?? rules.default;
}`;

/** The priority rule of the custom template's run.mjs: the program's own, not the artifact's. */
const PRIORITY = String.raw`// The priority is this program's own rule, not the artifact's: the loop tunes
// the routing rules in rules.json; change these lists by hand (or move them
// into the artifact) if the priority should be learned too.
const HIGH = ['urgent', 'asap', 'immediately', 'twice', "can't", 'cannot', 'not working', 'is down'];
const LOW = ['question', 'how do i', 'can i', 'is it possible', 'when you have time'];

function priority(text) {
  if (HIGH.some((term) => mentions(text, term))) return 'high';
  if (LOW.some((term) => mentions(text, term))) return 'low';
  return 'normal';
}`;

/**
 * The routing program: reads the request, routes its text by the rules file,
 * prints `{"label"}` (classification) or `{"label","priority"}` (custom).
 */
export function routingProgram(options: { priority: boolean }): string {
  const answer = options.priority
    ? '{ label: route(rules, request.text), priority: priority(request.text) }'
    : '{ label: route(rules, request.text) }';
  return [
    '#!/usr/bin/env node',
    options.priority
      ? '// Ticket triage for kloop: routes one support ticket to a queue by the rules file and sets its priority.'
      : '// Ticket routing for kloop: routes one support ticket to a queue by the rules file (the artifact).',
    '//',
    COMMAND_PROTOCOL,
    '//',
    "// The artifact is rules.json, in kloop's routing-rules format (version 1):",
    '//   { "queues": [...], "default": <queue>, "rules": [{ "id", "queue", "any": [term, ...], "all"?: [...], "none"?: [...] }] }',
    '// The first rule that matches gives the queue: one of its "any" terms occurs,',
    '// every "all" term occurs, no "none" term does; no rule matches: the default.',
    '// A term is a word or phrase matched on whole words, any case; "refund*" also',
    '// matches "refunds" and "refunded". A rules file that is not valid JSON makes',
    '// the program fail: an invalid output, never a crash of the loop.',
    "import { readFileSync } from 'node:fs';",
    '',
    READ_REQUEST,
    '',
    MENTIONS,
    '',
    ROUTE,
    '',
    ...(options.priority ? [PRIORITY, ''] : []),
    'const request = JSON.parse(await readRequest());',
    "const rules = JSON.parse(readFileSync(request.artifact ?? process.env.KLOOP_ARTIFACT, 'utf8'));",
    `process.stdout.write(JSON.stringify(${answer}) + '\\n');`,
    '',
  ].join('\n');
}

/** The ticket records of corpus/examples.yaml, with the priority for the custom task. */
export function ticketRecords(options: { priority: boolean }): string {
  return SAMPLE_TICKETS.map((ticket) =>
    [
      `- id: ${ticket.id}`,
      `  input: ${yamlString(ticket.text)}`,
      options.priority
        ? `  expected: { label: ${ticket.label}, priority: ${ticket.priority} }`
        : `  expected: { label: ${ticket.label} }`,
      `  tags: [${ticket.tags.join(', ')}]`,
      `  partition: ${ticket.partition}`,
      '',
    ].join('\n'),
  ).join('\n');
}

/** The queue list of a prompt. */
export function queueList(): string {
  return QUEUES.map(([label, description]) => `- \`${label}\`: ${description}.`).join('\n');
}
