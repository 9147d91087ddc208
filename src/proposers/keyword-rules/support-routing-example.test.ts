/**
 * The support-routing example study, piece by piece: its corpus fits the
 * classification task, the seed rules misroute what they misroute, and the
 * keyword-rules proposer learns from the optimization tickets alone (a small
 * local evaluator built from `routeText` stands in for the frozen
 * evaluator); the study run end to end is tests/support-routing-study.test.ts.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { contentHash } from '../../artifact/content-hash.ts';
import type { PartitionScore } from '../../evaluator/partition-score.ts';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import { parseRoutingRules, safeParseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { createClassificationTask } from '../../tasks/classification/index.ts';
import { inputText } from '../../tasks/task.ts';
import type { ProposalContext } from '../proposer.ts';
import { createKeywordRulesProposer } from './index.ts';
import { oneRepeatScore } from '../../test-support/one-repeat-score.ts';

const STUDY = new URL('../../../examples/support-routing/', import.meta.url);
const config = parse(readFileSync(new URL('kloop.yaml', STUDY), 'utf8')) as { task: { labels: string[] } };
const task = createClassificationTask({ labels: config.task.labels, reportAs: 'misroute rate' });
const SEED = readFileSync(new URL('rules.yaml', STUDY), 'utf8');

interface Ticket {
  id: string;
  input: unknown;
  text: string;
  expected: { label: string };
  tags: string[];
  partition: 'optimization' | 'anchor' | 'shadow';
}

const corpusFolder = new URL('corpus/', STUDY);
const files = readdirSync(corpusFolder)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
const TICKETS: Ticket[] = files.flatMap((name) =>
  (parse(readFileSync(new URL(name, corpusFolder), 'utf8')) as Array<Omit<Ticket, 'text'>>).map((record) => ({
    ...record,
    text: inputText(task, record.input as never),
  })),
);
const partition = (name: Ticket['partition']) => TICKETS.filter((ticket) => ticket.partition === name);

function misrouted(rulesText: string, tickets: readonly Ticket[]): string[] {
  const rules = parseRoutingRules(rulesText);
  return tickets
    .filter((ticket) => routeText(rules, ticket.text).label !== ticket.expected.label)
    .map((ticket) => ticket.id);
}

/** The optimization partition's score of a rules text, as the classification task scores it. */
function evaluateOn(tickets: readonly Ticket[]) {
  return async (text: string): Promise<PartitionScore> => {
    const parsed = safeParseRoutingRules(text);
    const examples = tickets.map((ticket) => {
      if (!parsed.ok)
        return {
          valid: false as const,
          invalidReason: 'unparsable',
          message: parsed.error.message,
          exampleId: ticket.id,
          repeat: 0,
        };
      const predicted = routeText(parsed.rules, ticket.text).label;
      const score = task.score({ label: predicted }, ticket.expected, ticket.text, { accuracy: 1 });
      return { valid: true as const, ...score, skipped: [], metrics: {}, exampleId: ticket.id, repeat: 0 };
    });
    return oneRepeatScore(text, 'support-routing-test', examples);
  };
}

const evaluateOptimization = evaluateOn(partition('optimization'));

async function contextFor(incumbentText: string, triedHashes: ReadonlySet<string>): Promise<ProposalContext> {
  return {
    incumbentText,
    instructions: '',
    constraints: '',
    limits: { editableSections: ['rules', 'scores'], maxArtifactCharacters: 12_000 },
    // Only the optimization tickets: the proposer never sees anchors or shadow.
    examples: partition('optimization') as unknown as ProposalContext['examples'],
    incumbentScores: await evaluateOptimization(incumbentText),
    evaluateOptimization,
    history: [],
    triedHashes,
    maxCandidates: 4,
    random: () => 0.5,
  };
}

describe('examples/support-routing', () => {
  it('has 300 valid tickets over six queues, in the three partitions; the second batch is optimization only', () => {
    expect(TICKETS.length).toBe(300);
    expect(new Set(TICKETS.map((ticket) => ticket.id)).size).toBe(TICKETS.length);
    expect(config.task.labels).toEqual(['billing', 'technical', 'account', 'shipping', 'returns', 'security']);
    for (const ticket of TICKETS) {
      expect(Object.keys(ticket).sort()).toEqual(['expected', 'id', 'input', 'partition', 'tags', 'text']);
      expect(task.schemas.input.safeParse(ticket.input).success).toBe(true);
      expect(task.schemas.expected.safeParse(ticket.expected).success).toBe(true);
      // Every file holds one queue's tickets, numbered from 01.
      expect(ticket.id.startsWith(`${ticket.expected.label}-`)).toBe(true);
    }
    const perQueue = Object.fromEntries(
      config.task.labels.map((label) => [label, TICKETS.filter((ticket) => ticket.expected.label === label).length]),
    );
    expect(perQueue).toEqual({ billing: 50, technical: 50, account: 50, shipping: 50, returns: 50, security: 50 });
    expect([partition('optimization').length, partition('anchor').length, partition('shadow').length]).toEqual([
      260, 10, 30,
    ]);
    const secondBatch = TICKETS.filter((ticket) => Number(ticket.id.split('-').at(-1)) >= 15);
    expect(secondBatch.length).toBe(216);
    expect(new Set(secondBatch.map((ticket) => ticket.partition))).toEqual(new Set(['optimization']));
  });

  it('the seed rules misroute 124/260 optimization, 0/10 anchor and 18/30 shadow tickets', () => {
    expect(safeParseRoutingRules(SEED).ok).toBe(true);
    expect(misrouted(SEED, partition('optimization')).length).toBe(124);
    expect(misrouted(SEED, partition('anchor'))).toEqual([]);
    expect(misrouted(SEED, partition('shadow')).length).toBe(18);
  });

  it('from the optimization tickets alone, the proposer first learns scores that, checked afterwards, lower the misroutes on shadow too (18 → 9 of 30) with no anchor lost', async () => {
    const { candidates, failures } = await createKeywordRulesProposer().propose(
      await contextFor(SEED, new Set([contentHash(SEED)])),
    );
    expect(failures).toEqual([]);
    expect(candidates.length).toBe(4);
    for (const candidate of candidates) {
      expect(misrouted(candidate.text, partition('optimization')).length).toBe(124 - candidate.expectedNetFixes!);
    }
    const [scores, ...others] = candidates;
    expect(scores!.rationale).toMatch(
      /^Set the scores to 120 weighted term\(s\) for 6 queue\(s\), learned from the 260 optimization example\(s\)/,
    );
    expect(scores!.rationale).toContain(
      'held out, the scores route 53 of 124 misrouted example(s) right and 16 right one(s) wrong. On the whole partition: 75 fixed, 9 broken.',
    );
    expect(scores!.delta).toMatch(/^- scores: \[\]\n\+ scores:\n/);
    expect(misrouted(scores!.text, partition('optimization')).length).toBe(58);
    // The partitions the proposer never saw, checked after the fact.
    expect(misrouted(scores!.text, partition('anchor'))).toEqual([]);
    expect(misrouted(scores!.text, partition('shadow')).length).toBe(9);
    expect(
      misrouted(scores!.text, partition('shadow')).filter((id) => !misrouted(SEED, partition('shadow')).includes(id)),
    ).toEqual([]);
    // The bundles of keyword edits each break no optimization ticket (their bars: held-out support, precision).
    const bundles = others.filter((candidate) => /^\d+ edits together/.test(candidate.rationale));
    expect(bundles.length).toBe(2);
    for (const bundle of bundles) {
      expect(bundle.rationale).toContain('and misroute 0 that were right');
      const before = misrouted(SEED, partition('optimization'));
      expect(misrouted(bundle.text, partition('optimization')).filter((id) => !before.includes(id))).toEqual([]);
    }
  });
});
