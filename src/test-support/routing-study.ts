/**
 * Test helper (not part of the build: excluded in tsconfig.build.json): a
 * small classification study folder on the routing-rules executor (offline,
 * deterministic, in-process), written to a temporary folder. The seed rules
 * send `billing` words to billing and everything else to the default,
 * `technical`, so a `billing` ticket without a billing word is misrouted:
 * the test decides how many examples each partition has and how many of
 * them the seed gets wrong.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PartitionName } from '../corpus/example.ts';

/** Tickets the seed rules route right (technical ones; no billing word). */
const RIGHT = [
  'the app crashes every time I open the settings page',
  'your website shows a blank screen after the latest update',
  'notifications stopped arriving on my phone since Tuesday',
  'the export button does nothing when I click on it',
  'search results load forever and then time out completely',
  'my dashboard widgets vanished overnight without warning',
  'the mobile app keeps logging an error code 5003 at startup',
  'uploading a photo fails halfway with a network message',
  'dark mode makes all the menu labels unreadable for me',
  'the calendar sync with my laptop broke this morning',
  'pages take a full minute to render on a fast connection',
  'clicking save throws a red banner that says unknown failure',
];

/** Tickets the seed rules route wrong: billing tickets that never say "invoice" or "refund". */
const WRONG = [
  'why did you take money from my card twice this month',
  'I paid for the yearly plan but you still show the monthly price',
  'the receipt lists a tax amount that I was never told about',
  'please stop debiting my bank account now that I have cancelled',
  'my promo code was accepted but the total did not go down',
  'you took forty dollars when the plan costs twenty',
  'can I pay by bank transfer instead of a credit card next time',
  'a strange deduction from my account came from your company',
  'the price went up without anyone telling me about it first',
  'I need a copy of the statement for my expense report',
];

/** How many tickets of a partition the seed routes right and wrong. */
export interface PartitionPlan {
  right: number;
  wrong: number;
}

export const ROUTING_SEED_RULES = [
  'queues: [billing, technical]',
  'default: technical',
  'rules:',
  '  - id: billing',
  '    queue: billing',
  '    any: [invoice, refund*]',
  '',
].join('\n');

export const ROUTING_PROGRAM = [
  '# Program: route tickets',
  '',
  '## Instructions',
  '',
  'Route billing tickets to billing.',
  '',
  '## Constraints',
  '',
  'Keep the queues and the default.',
  '',
  '```yaml',
  'editableSections: [rules]',
  'requiredText: ["default: technical"]',
  '```',
  '',
  '## Stopping criteria',
  '',
  'Stop when the budget is spent.',
  '',
].join('\n');

/**
 * Writes the study; returns its folder. Tickets are drawn in order from the
 * right and wrong lists across partitions (at most 12 right and 10 wrong in all).
 *
 * @param config extra top-level keys of kloop.yaml, as YAML lines (e.g. `gate:\n  alpha: 0.01`)
 */
export function writeRoutingStudy(plan: Record<PartitionName, PartitionPlan>, config = ''): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-routing-study-'));
  mkdirSync(path.join(dir, 'corpus'));
  let right = 0;
  let wrong = 0;
  const records: string[] = [];
  for (const partition of ['optimization', 'anchor', 'shadow'] as const) {
    for (let index = 0; index < plan[partition].right; index += 1) {
      const text = RIGHT[right++];
      if (text === undefined) throw new Error(`writeRoutingStudy: at most ${RIGHT.length} tickets routed right`);
      records.push(
        `- id: t${records.length + 1}\n  input: ${JSON.stringify(text)}\n  expected: { label: technical }\n  partition: ${partition}\n`,
      );
    }
    for (let index = 0; index < plan[partition].wrong; index += 1) {
      const text = WRONG[wrong++];
      if (text === undefined) throw new Error(`writeRoutingStudy: at most ${WRONG.length} tickets routed wrong`);
      records.push(
        `- id: t${records.length + 1}\n  input: ${JSON.stringify(text)}\n  expected: { label: billing }\n  partition: ${partition}\n`,
      );
    }
  }
  writeFileSync(path.join(dir, 'corpus', 'tickets.yaml'), records.join('\n'));
  writeFileSync(path.join(dir, 'rules.yaml'), ROUTING_SEED_RULES);
  writeFileSync(path.join(dir, 'program.md'), ROUTING_PROGRAM);
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    [
      'task: { kind: classification, labels: [billing, technical], reportAs: misroute rate }',
      'executor: { kind: routing-rules }',
      'artifact: rules.yaml',
      'program: program.md',
      'corpus: [corpus/tickets.yaml]',
      'stopping:',
      '  maxExperiments: 4',
      '  plateauRounds: 1',
      config,
      '',
    ].join('\n'),
  );
  return dir;
}
