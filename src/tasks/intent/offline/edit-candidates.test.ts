import { describe, expect, it } from 'vitest';
import type { ExpectedIntent } from '../intent.ts';
import { scoreIntent } from '../scorer.ts';
import type { ExampleEvidence } from './edit-candidates.ts';
import { generateEditCandidates } from './edit-candidates.ts';
import { compilePlaybook, extractIntent } from './extract.ts';
import { analyzeGoal } from './goal-analysis.ts';
import { parsePlaybook } from './playbook.ts';

const PLAYBOOK = `unknownNounPolicy: {include: true, role: resource, excludeCategories: [time]}
extraction: {maxEntities: 3, rankBy: salience}
`;

function evidence(id: string, goal: string, expected: ExpectedIntent): ExampleEvidence {
  const parsed = parsePlaybook(PLAYBOOK);
  if (!parsed.ok) throw new Error('fixture playbook');
  const analysis = analyzeGoal(goal);
  const { intent, trace } = extractIntent(compilePlaybook(parsed.playbook), analysis);
  const score = scoreIntent(expected, intent);
  return { id, expected, analysis, trace, predictedAppType: intent.appType, predictedEntityCount: intent.entities.length, diagnostics: score.diagnostics };
}

const EXAMPLES = [
  evidence('gym', 'Members book classes. Each class has a widget.', { entities: [{ name: 'Member' }, { name: 'Class' }] }),
  evidence('shop', 'Customers place orders. Each order has a widget.', { entities: [{ name: 'Customer' }, { name: 'Order' }] }),
  evidence('fair', 'Visitors buy tickets for the evening. Every ticket is printed.', { entities: [{ name: 'Visitor' }, { name: 'Ticket' }, { name: 'Evening' }] }),
];

describe('edit candidates for entity precision', () => {
  const parsed = parsePlaybook(PLAYBOOK);
  if (!parsed.ok) throw new Error('fixture playbook');
  const deltas = (precision: boolean) => generateEditCandidates(parsed.playbook, EXAMPLES, { precision }).map((candidate) => candidate.delta);

  it('a spurious entity that crowds nothing suggests an attribute, a lower cap and a higher floor only when precision counts', () => {
    for (const delta of ['attributeTerms += "widget"', 'extraction.maxEntities = 2', 'unknownNounPolicy.minSalience = 1']) expect(deltas(false)).not.toContain(delta);
    expect(deltas(true)).toEqual(
      expect.arrayContaining(['stopList += "widget"', 'attributeTerms += "widget"', 'extraction.maxEntities = 2', 'unknownNounPolicy.minSalience = 1']),
    );
  });

  it('a gold entity excluded by its noun category suggests dropping the category', () => {
    expect(deltas(false)).toContain('unknownNounPolicy.excludeCategories -= "time"');
  });
});

describe('edit candidates for compounds on a term and unrelated entities', () => {
  const text = `entityTerms: {order: transaction}
unknownNounPolicy: {include: true, role: resource}
extraction: {maxEntities: 5, rankBy: salience}
`;
  const parsed = parsePlaybook(text);
  if (!parsed.ok) throw new Error('fixture playbook');
  const goal = 'Buyers raise a purchase order. Invoices.';
  const expected: ExpectedIntent = {
    entities: [{ name: 'Buyer' }, { name: 'PurchaseOrder' }, { name: 'Invoice' }],
    relations: [{ from: 'PurchaseOrder', to: 'Invoice', kind: 'association' }],
  };
  const analysis = analyzeGoal(goal);
  const { intent, trace } = extractIntent(compilePlaybook(parsed.playbook), analysis);
  const example: ExampleEvidence = {
    id: 'buying', expected, analysis, trace, predictedAppType: intent.appType, predictedEntityCount: intent.entities.length,
    diagnostics: scoreIntent(expected, intent).diagnostics,
  };
  const deltas = generateEditCandidates(parsed.playbook, [example]).map((candidate) => candidate.delta);

  it('a compound read at its playbook term suggests another term-compound policy', () => {
    expect(deltas).toEqual(expect.arrayContaining(['extraction.termCompounds = "auto"', 'extraction.termCompounds = "full"']));
  });

  it('a missed relation suggests connecting unrelated entities', () => {
    expect(deltas).toContain('extraction.connectOrphans = true');
  });
});
