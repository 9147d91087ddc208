/**
 * The support-ticket samples the classification and custom templates share:
 * four tickets, the queues, the seed routing rules (`rules.json`) and the
 * command program that routes by them (`run.mjs`).
 *
 * The routing rules format (what `run.mjs` reads and the loop edits):
 *
 * ```json
 * { "default": "technical",
 *   "rules": [{ "label": "billing", "keywords": ["invoice", "refund"] }] }
 * ```
 *
 * A keyword (a word or phrase, any case) matches where a word of the text
 * starts with it ("crash" matches "crashes"); the rule with the most distinct
 * matching keywords wins, ties going to the rule listed first; no match
 * gives `default`.
 *
 * @module
 */
import { yamlString } from './common.ts';
import { COMMAND_PROTOCOL, PROGRAM_HELPERS } from './command-program.ts';

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
  { id: 'ticket-0001', text: 'I was charged twice for my March subscription. Please refund the second payment.', label: 'billing', priority: 'high', tags: ['source:email'], partition: 'optimization' },
  { id: 'ticket-0002', text: "I can't log in since I changed my password yesterday; the site says my username does not exist.", label: 'account', priority: 'high', tags: ['source:chat'], partition: 'anchor' },
  { id: 'ticket-0003', text: "My parcel was supposed to arrive on Monday and the tracking page hasn't changed for four days.", label: 'shipping', priority: 'normal', tags: ['source:email'], partition: 'optimization' },
  { id: 'ticket-0004', text: 'The app crashes every time I open the settings screen on my Android phone.', label: 'technical', priority: 'high', tags: ['source:app-store'], partition: 'shadow' },
];

/** The seed routing rules: a deliberately modest first version the loop grows from evidence. */
export const SEED_ROUTING_RULES = `${JSON.stringify(
  {
    default: 'technical',
    rules: [
      { label: 'billing', keywords: ['invoice', 'refund', 'charged', 'payment'] },
      { label: 'account', keywords: ['password', 'log in', 'username'] },
      { label: 'shipping', keywords: ['delivery', 'tracking', 'parcel'] },
      { label: 'technical', keywords: ['error', 'crash', 'bug'] },
    ],
  },
  null,
  2,
)}\n`;

/** The routing function of run.mjs (see the module comment for the rules format). */
const ROUTE = String.raw`/** The label of the rule with the most distinct matching keywords; ties go to the rule listed first; none: the default. */
function route(rules, text) {
  if (typeof rules.default !== 'string' || !Array.isArray(rules.rules)) {
    throw new Error('the rules file needs "default" (a label) and "rules" (a list of { label, keywords })');
  }
  let best = { label: rules.default, hits: 0 };
  for (const rule of rules.rules) {
    const hits = new Set(rule.keywords.filter((keyword) => mentions(text, keyword)).map((keyword) => keyword.toLowerCase())).size;
    if (hits > best.hits) best = { label: rule.label, hits };
  }
  return best.label;
}`;

/** The priority rule of the custom template's run.mjs: the program's own, not the artifact's. */
const PRIORITY = String.raw`// The priority is this program's own rule, not the artifact's: the loop tunes
// the routing rules in rules.json; change these lists by hand (or move them
// into the artifact) if the priority should be learned too.
const HIGH = ['urgent', 'asap', 'immediately', 'twice', "can't", 'cannot', 'not working', 'is down'];
const LOW = ['question', 'how do i', 'can i', 'is it possible', 'when you have time'];

function priority(text) {
  if (HIGH.some((keyword) => mentions(text, keyword))) return 'high';
  if (LOW.some((keyword) => mentions(text, keyword))) return 'low';
  return 'normal';
}`;

/**
 * The routing program: reads the request, routes its text by the rules file,
 * prints `{"label"}` (classification) or `{"label","priority"}` (custom).
 */
export function routingProgram(options: { priority: boolean }): string {
  const answer = options.priority ? '{ label: route(rules, request.text), priority: priority(request.text) }' : '{ label: route(rules, request.text) }';
  return [
    '#!/usr/bin/env node',
    options.priority
      ? '// Ticket triage for kloop: routes one support ticket to a queue by the rules file and sets its priority.'
      : '// Ticket routing for kloop: routes one support ticket to a queue by the rules file (the artifact).',
    '//',
    COMMAND_PROTOCOL,
    '//',
    '// The artifact is rules.json: { "default": <label>, "rules": [{ "label", "keywords": [...] }] }.',
    '// A keyword matches where a word starts with it ("crash" matches "crashes");',
    '// the rule with the most distinct matching keywords wins, ties go to the rule',
    '// listed first, and no match gives the default. A rules file that is not',
    '// valid JSON makes the program fail: an invalid output, never a crash of the loop.',
    "import { readFileSync } from 'node:fs';",
    '',
    PROGRAM_HELPERS,
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
      options.priority ? `  expected: { label: ${ticket.label}, priority: ${ticket.priority} }` : `  expected: { label: ${ticket.label} }`,
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
