/**
 * A FAQ-routing study of the tests' own (issue 35's first case, rewritten):
 * a shop's customer questions routed to one of four FAQ pages, with a seed
 * keyword rules file that knows almost nothing, so the default queue
 * (`hours`) takes most questions.
 *
 * The signal is learnable: every returns question says "return", every
 * loyalty question "points", every delivery question "delivery"; the seed
 * rules name none of them. On the 12 optimization questions the seed gets
 * the two hours questions right (misroute rate 10/12); a single keyword edit
 * fixes at most 4 (McNemar's exact p ≥ 0.0625, never significant), the three
 * together fix all 10 (p = 0.5^10).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

export const FAQ_LABELS = ['hours', 'returns', 'loyalty', 'delivery'] as const;
export type FaqLabel = (typeof FAQ_LABELS)[number];
export type FaqPartition = 'optimization' | 'anchor' | 'shadow';

export interface FaqQuestion {
  id: string;
  text: string;
  label: FaqLabel;
  partition: FaqPartition;
}

/** 12 optimization (4 returns, 3 loyalty, 3 delivery, 2 hours), 4 anchors (one a page), 8 shadow (two a page). */
export const FAQ_QUESTIONS: readonly FaqQuestion[] = [
  {
    id: 'faq-01',
    text: 'Can I return a jacket I bought online to one of your shops?',
    label: 'returns',
    partition: 'optimization',
  },
  {
    id: 'faq-02',
    text: 'How many days do I have to return shoes that do not fit?',
    label: 'returns',
    partition: 'optimization',
  },
  {
    id: 'faq-03',
    text: 'Will I get my money back if I return an item after the sale?',
    label: 'returns',
    partition: 'optimization',
  },
  { id: 'faq-04', text: 'Do you pay the postage when I return a parcel?', label: 'returns', partition: 'optimization' },
  { id: 'faq-05', text: 'How do I collect points on my member card?', label: 'loyalty', partition: 'optimization' },
  {
    id: 'faq-06',
    text: 'My points from last month are missing from my account.',
    label: 'loyalty',
    partition: 'optimization',
  },
  {
    id: 'faq-07',
    text: 'Can I use my points to pay for part of an order?',
    label: 'loyalty',
    partition: 'optimization',
  },
  { id: 'faq-08', text: 'How long does delivery to the islands take?', label: 'delivery', partition: 'optimization' },
  { id: 'faq-09', text: 'Is delivery free for orders over fifty euros?', label: 'delivery', partition: 'optimization' },
  {
    id: 'faq-10',
    text: 'My delivery was left outside in the rain, what now?',
    label: 'delivery',
    partition: 'optimization',
  },
  { id: 'faq-11', text: 'What time do you open on Sundays?', label: 'hours', partition: 'optimization' },
  { id: 'faq-12', text: 'Are you open on public holidays?', label: 'hours', partition: 'optimization' },
  { id: 'faq-13', text: 'What are your opening hours on Saturday?', label: 'hours', partition: 'anchor' },
  { id: 'faq-14', text: 'I would like to return a broken kettle.', label: 'returns', partition: 'anchor' },
  { id: 'faq-15', text: 'How many points do I need for a free coffee?', label: 'loyalty', partition: 'anchor' },
  { id: 'faq-16', text: 'Where is my delivery? It is three days late.', label: 'delivery', partition: 'anchor' },
  { id: 'faq-17', text: 'Can I return a dress without the original box?', label: 'returns', partition: 'shadow' },
  { id: 'faq-18', text: 'Do I have to pay to return something by post?', label: 'returns', partition: 'shadow' },
  { id: 'faq-19', text: 'Do my points expire at the end of the year?', label: 'loyalty', partition: 'shadow' },
  { id: 'faq-20', text: 'I forgot my member card, can I still get points?', label: 'loyalty', partition: 'shadow' },
  { id: 'faq-21', text: 'Can I choose a delivery slot in the evening?', label: 'delivery', partition: 'shadow' },
  { id: 'faq-22', text: 'Is delivery possible on a Saturday morning?', label: 'delivery', partition: 'shadow' },
  { id: 'faq-23', text: 'Until what time are you open on Fridays?', label: 'hours', partition: 'shadow' },
  { id: 'faq-24', text: 'Is the shop open on Easter Monday?', label: 'hours', partition: 'shadow' },
];

/** The seed rules: one rare keyword a page, `hours` the default (kloop's routing-rules format, JSON). */
export const FAQ_SEED_RULES = `${JSON.stringify(
  {
    queues: [...FAQ_LABELS],
    default: 'hours',
    rules: [
      { id: 'returns', queue: 'returns', any: ['receipt'] },
      { id: 'loyalty', queue: 'loyalty', any: ['stamp*'] },
      { id: 'delivery', queue: 'delivery', any: ['courier'] },
    ],
  },
  null,
  2,
)}\n`;

/** Questions as a corpus file in the format of `corpus/examples.yaml` (docs/corpus.md). */
export function faqCorpusYaml(questions: readonly FaqQuestion[]): string {
  return questions
    .map(
      (question) =>
        `- id: ${question.id}\n  input: ${JSON.stringify(question.text)}\n  expected: { label: ${question.label} }\n  tags: [source:faq]\n  partition: ${question.partition}\n`,
    )
    .join('\n');
}

/**
 * Makes a study written by `kloop init <dir> --task classification
 * --executor command` into the FAQ study, as a user does by the docs: their
 * labels in kloop.yaml `task.labels`, their rules in rules.json, their
 * questions in corpus/examples.yaml (the samples replaced).
 */
export function makeFaqStudy(dir: string, questions: readonly FaqQuestion[] = FAQ_QUESTIONS): void {
  const configPath = path.join(dir, 'kloop.yaml');
  const config = readFileSync(configPath, 'utf8');
  expect(config).toContain('labels: [billing, technical, account, shipping]');
  writeFileSync(
    configPath,
    config.replace('labels: [billing, technical, account, shipping]', `labels: [${FAQ_LABELS.join(', ')}]`),
  );
  writeFileSync(path.join(dir, 'rules.json'), FAQ_SEED_RULES);
  writeFileSync(path.join(dir, 'corpus', 'examples.yaml'), faqCorpusYaml(questions));
}

/** Replaces the `executor:` block of kloop.yaml with the in-process routing-rules executor (docs/any-workflow.md), for fast runs. */
export function useRoutingRulesExecutor(dir: string): void {
  const configPath = path.join(dir, 'kloop.yaml');
  const config = readFileSync(configPath, 'utf8');
  const start = config.indexOf('executor:\n');
  const end = config.indexOf('\n\n', start);
  expect(start).toBeGreaterThanOrEqual(0);
  writeFileSync(configPath, `${config.slice(0, start)}executor:\n  kind: routing-rules${config.slice(end)}`);
}

/** Sets a key of the proposer block of kloop.yaml (after `candidatesPerRound`). */
export function setProposerKey(dir: string, line: string): void {
  const configPath = path.join(dir, 'kloop.yaml');
  const config = readFileSync(configPath, 'utf8');
  expect(config).toContain('  candidatesPerRound: 6\n');
  writeFileSync(configPath, config.replace('  candidatesPerRound: 6\n', `  candidatesPerRound: 6\n  ${line}\n`));
}
