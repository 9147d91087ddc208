/**
 * The support-routing example study, proved piece by piece while the engine
 * is not wired to classification yet: its corpus fits the classification
 * task, the seed rules misroute what they misroute, and the keyword-rules
 * proposer learns from the optimization tickets alone (a small local
 * evaluator built from `routeText` stands in for the frozen evaluator).
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
const files = readdirSync(corpusFolder).filter((name) => name.endsWith('.yaml')).sort();
const TICKETS: Ticket[] = files.flatMap((name) =>
  (parse(readFileSync(new URL(name, corpusFolder), 'utf8')) as Array<Omit<Ticket, 'text'>>).map((record) => ({
    ...record,
    text: inputText(task, record.input as never),
  })),
);
const partition = (name: Ticket['partition']) => TICKETS.filter((ticket) => ticket.partition === name);

function misrouted(rulesText: string, tickets: readonly Ticket[]): string[] {
  const rules = parseRoutingRules(rulesText);
  return tickets.filter((ticket) => routeText(rules, ticket.text).label !== ticket.expected.label).map((ticket) => ticket.id);
}

/** The optimization partition's score of a rules text, as the classification task scores it. */
function evaluateOn(tickets: readonly Ticket[]) {
  return async (text: string): Promise<PartitionScore> => {
    const parsed = safeParseRoutingRules(text);
    const examples = tickets.map((ticket) => {
      if (!parsed.ok) return { valid: false as const, invalidReason: 'unparsable', message: parsed.error.message, exampleId: ticket.id, repeat: 0 };
      const predicted = routeText(parsed.rules, ticket.text).label;
      const score = task.score({ label: predicted }, ticket.expected, ticket.text, { accuracy: 1 });
      return { valid: true as const, ...score, skipped: [], metrics: {}, exampleId: ticket.id, repeat: 0 };
    });
    const valid = examples.filter((record) => record.valid);
    const composite = valid.length === 0 ? null : valid.reduce((sum, record) => sum + (record.valid ? record.composite : 0), 0) / valid.length;
    return {
      partition: 'optimization',
      artifactHash: contentHash(text),
      fingerprint: 'support-routing-test',
      repeats: 1,
      composite,
      components: {},
      metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
      invalid: examples.length - valid.length,
      transient: 0,
      total: examples.length,
      runComposites: [composite],
      examples: examples as unknown as PartitionScore['examples'],
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      latencyMs: 0,
    };
  };
}

const evaluateOptimization = evaluateOn(partition('optimization'));

async function contextFor(incumbentText: string, triedHashes: ReadonlySet<string>): Promise<ProposalContext> {
  return {
    incumbentText,
    instructions: '',
    constraints: '',
    limits: { editableSections: ['rules'], maxArtifactCharacters: 12_000 },
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
  it('has at least 70 valid tickets over six queues, in the three partitions', () => {
    expect(TICKETS.length).toBe(84);
    expect(new Set(TICKETS.map((ticket) => ticket.id)).size).toBe(TICKETS.length);
    expect(config.task.labels).toEqual(['billing', 'technical', 'account', 'shipping', 'returns', 'security']);
    for (const ticket of TICKETS) {
      expect(Object.keys(ticket).sort()).toEqual(['expected', 'id', 'input', 'partition', 'tags', 'text']);
      expect(task.schemas.input.safeParse(ticket.input).success).toBe(true);
      expect(task.schemas.expected.safeParse(ticket.expected).success).toBe(true);
    }
    const perQueue = Object.fromEntries(config.task.labels.map((label) => [label, TICKETS.filter((ticket) => ticket.expected.label === label).length]));
    expect(perQueue).toEqual({ billing: 14, technical: 14, account: 14, shipping: 14, returns: 14, security: 14 });
    expect([partition('optimization').length, partition('anchor').length, partition('shadow').length]).toEqual([44, 10, 30]);
  });

  it('the seed rules misroute 20/44 optimization, 0/10 anchor and 18/30 shadow tickets', () => {
    expect(safeParseRoutingRules(SEED).ok).toBe(true);
    expect(misrouted(SEED, partition('optimization')).length).toBe(20);
    expect(misrouted(SEED, partition('anchor'))).toEqual([]);
    expect(misrouted(SEED, partition('shadow')).length).toBe(18);
  });

  it('the keyword-rules proposer, from the optimization tickets alone, proposes an edit that lowers the optimization misroutes', async () => {
    const { candidates, failures } = await createKeywordRulesProposer().propose(await contextFor(SEED, new Set([contentHash(SEED)])));
    expect(failures).toEqual([]);
    expect(candidates.length).toBeGreaterThan(0);
    for (const candidate of candidates) {
      expect(misrouted(candidate.text, partition('optimization')).length).toBeLessThan(20);
      expect(misrouted(candidate.text, partition('optimization')).length).toBe(20 - candidate.expectedNetFixes!);
    }
    // The first is a bundle of single edits that each added fixes and broke nothing on optimization.
    expect(candidates[0]!.rationale).toMatch(/^\d+ edits together/);
    expect(candidates[0]!.expectedNetFixes!).toBeGreaterThan(Math.max(...candidates.slice(1).filter((candidate) => !candidate.rationale.includes('edits together')).map((candidate) => candidate.expectedNetFixes!)));
  });

  it('greedy, five rounds, accepting only edits that do not raise the optimization misroutes: 20 → 9 of 44 on optimization, 18 → 16 of 30 on shadow', async () => {
    const proposer = createKeywordRulesProposer();
    let incumbent = SEED;
    const tried = new Set([contentHash(SEED)]);
    const trace: Array<{ delta: string; optimization: number; anchor: number; shadow: number }> = [];
    for (let round = 0; round < 5; round += 1) {
      const { candidates } = await proposer.propose(await contextFor(incumbent, tried));
      for (const candidate of candidates) tried.add(contentHash(candidate.text));
      const before = misrouted(incumbent, partition('optimization')).length;
      // Single edits only (the bundles are tested on their own below).
      const accepted = candidates.filter((candidate) => !candidate.rationale.includes('edits together')).find((candidate) => misrouted(candidate.text, partition('optimization')).length <= before);
      if (accepted === undefined) break;
      incumbent = accepted.text;
      trace.push({
        delta: accepted.delta.split('\n').at(-1)!.replace(/\s+/g, ' '),
        optimization: misrouted(incumbent, partition('optimization')).length,
        anchor: misrouted(incumbent, partition('anchor')).length,
        shadow: misrouted(incumbent, partition('shadow')).length,
      });
    }
    // Broad words win on net fixes; two of them misroute anchors, which the gate's anchor check would refuse.
    expect(trace).toEqual([
      { delta: '+ any: [delivery, tracking, shipping, shipped, parcel, package, courier, order]', optimization: 17, anchor: 1, shadow: 18 },
      { delta: '+ any: [hacked, fraud, phishing, security, personal data, account]', optimization: 14, anchor: 2, shadow: 18 },
      { delta: '+ any: [return, exchange, damaged, replacement, back]', optimization: 12, anchor: 2, shadow: 17 },
      { delta: '+ any: [invoice, billing, payment, refund, charge, charged, subscription, price]', optimization: 10, anchor: 2, shadow: 17 },
      { delta: '+ any: [invoice, billing, payment, refund, charge, charged, subscription, price, card]', optimization: 9, anchor: 2, shadow: 16 },
    ]);
    expect(misrouted(incumbent, partition('anchor'))).toEqual(['account-02', 'billing-01']);
  });
});
