import { describe, expect, it } from 'vitest';
import type { ExpectedIntent } from '../intent.ts';
import { scoreIntent } from '../scorer.ts';
import type { ExampleEvidence } from './edit-candidates.ts';
import {
  generateEditCandidates,
  isNearDuplicateBundle,
  learnedLexiconBundles,
  lexiconBundleTerms,
} from './edit-candidates.ts';
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
  return {
    id,
    expected,
    analysis,
    trace,
    predictedAppType: intent.appType,
    predictedEntityCount: intent.entities.length,
    diagnostics: score.diagnostics,
  };
}

const EXAMPLES = [
  evidence('gym', 'Members book classes. Each class has a widget.', {
    entities: [{ name: 'Member' }, { name: 'Class' }],
  }),
  evidence('shop', 'Customers place orders. Each order has a widget.', {
    entities: [{ name: 'Customer' }, { name: 'Order' }],
  }),
  evidence('fair', 'Visitors buy tickets for the evening. Every ticket is printed.', {
    entities: [{ name: 'Visitor' }, { name: 'Ticket' }, { name: 'Evening' }],
  }),
];

describe('edit candidates for entity precision', () => {
  const parsed = parsePlaybook(PLAYBOOK);
  if (!parsed.ok) throw new Error('fixture playbook');
  const deltas = (precision: boolean) =>
    generateEditCandidates(parsed.playbook, EXAMPLES, { precision }).map((candidate) => candidate.delta);

  it('a spurious entity that crowds nothing suggests an attribute, a lower cap and a higher floor only when precision counts', () => {
    for (const delta of [
      'attributeTerms += "widget"',
      'extraction.maxEntities = 2',
      'unknownNounPolicy.minSalience = 1',
    ])
      expect(deltas(false)).not.toContain(delta);
    expect(deltas(true)).toEqual(
      expect.arrayContaining([
        'stopList += "widget"',
        'attributeTerms += "widget"',
        'extraction.maxEntities = 2',
        'unknownNounPolicy.minSalience = 1',
      ]),
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
    id: 'buying',
    expected,
    analysis,
    trace,
    predictedAppType: intent.appType,
    predictedEntityCount: intent.entities.length,
    diagnostics: scoreIntent(expected, intent).diagnostics,
  };
  const deltas = generateEditCandidates(parsed.playbook, [example]).map((candidate) => candidate.delta);

  it('a compound read at its playbook term suggests another term-compound policy', () => {
    expect(deltas).toEqual(
      expect.arrayContaining(['extraction.termCompounds = "auto"', 'extraction.termCompounds = "full"']),
    );
  });

  it('a missed relation suggests connecting unrelated entities', () => {
    expect(deltas).toContain('extraction.connectOrphans = true');
  });
});

describe('learned-lexicon bundles', () => {
  const text = `unknownNounPolicy: {include: true, role: resource, countableOnly: true}
extraction: {maxEntities: 6, rankBy: salience}
`;
  const parsed = parsePlaybook(text);
  if (!parsed.ok) throw new Error('fixture playbook');
  const compiled = compilePlaybook(parsed.playbook);
  const example = (id: string, goal: string, expected: ExpectedIntent): ExampleEvidence => {
    const analysis = analyzeGoal(goal);
    const { intent, trace } = extractIntent(compiled, analysis);
    return {
      id,
      expected,
      analysis,
      trace,
      predictedAppType: intent.appType,
      predictedEntityCount: intent.entities.length,
      diagnostics: scoreIntent(expected, intent).diagnostics,
    };
  };
  // "feedback" and "homework" are mass nouns here (no countable reading): the extractor misses them.
  const examples = [
    example('a', 'Tutors give feedback on homework to pupils.', {
      entities: [
        { name: 'Tutor', role: 'party' },
        { name: 'Feedback', role: 'document' },
        { name: 'Homework', role: 'document' },
      ],
    }),
    example('b', 'Teachers write feedback and set homework for classes.', {
      entities: [
        { name: 'Teacher', role: 'party' },
        { name: 'Feedback', role: 'document' },
        { name: 'Homework', role: 'document' },
      ],
    }),
    example('c', 'Coaches leave feedback for athletes.', {
      entities: [
        { name: 'Coach', role: 'party' },
        { name: 'Athlete', role: 'party' },
      ],
    }),
  ];

  it('proposes, as one edit, the terms gold in two or more examples and missed, with their gold role', () => {
    const bundles = learnedLexiconBundles(parsed.playbook, examples);
    expect(bundles.map((bundle) => bundle.delta)).toEqual([
      'entityTerms += {"feedback":"document","homework":"document"}',
    ]);
    expect(bundles[0]!.kind).toBe('lexiconBundle');
    expect(generateEditCandidates(parsed.playbook, examples).map((candidate) => candidate.delta)).toContain(
      bundles[0]!.delta,
    );
  });

  it('leaves out a term named in more examples than its gold has it (a lexicon entry must be right more often than not)', () => {
    const more = [
      ...examples,
      example('d', 'Staff give feedback on menus.', { entities: [{ name: 'Staff' }, { name: 'Menu' }] }),
    ];
    expect(learnedLexiconBundles(parsed.playbook, more)).toEqual([]); // feedback: gold in 2 of 4, homework alone is too few
  });

  it('tells near-duplicate bundles apart by the Jaccard similarity of their terms', () => {
    const terms = (...words: string[]) => new Set(words);
    expect(isNearDuplicateBundle(terms('a', 'b', 'c', 'd', 'e'), terms('a', 'b', 'c', 'd', 'e', 'f'))).toBe(true);
    expect(isNearDuplicateBundle(terms('a', 'b', 'c'), terms('a', 'b', 'd'))).toBe(false);
    expect(lexiconBundleTerms('entityTerms += {"feedback":"document","homework":"document"}')).toEqual(
      terms('feedback', 'homework'),
    );
    expect(lexiconBundleTerms('entityTerms.feedback = "document"')).toBeNull();
  });
});

describe('the layout reading (extraction.layoutCues)', () => {
  const playbookText = `unknownNounPolicy: {include: true, role: resource, properNouns: false, compounds: full}
extraction: {maxEntities: 10, rankBy: salience}
`;
  const extract = (text: string, goal: string) => {
    const parsed = parsePlaybook(text);
    if (!parsed.ok) throw new Error('fixture playbook');
    return extractIntent(compilePlaybook(parsed.playbook), analyzeGoal(goal));
  };
  const goal = 'The shop sells products in categories (brakes, wheels). 2. Supporters can donate to the shop.';
  const names = (text: string) => extract(text, goal).intent.entities.map((entity) => entity.name);

  it('off: the tagger reading as is; on: a bracket ends the noun phrase and a positional capital is no proper noun', () => {
    expect(names(playbookText)).not.toContain('Category');
    expect(names(playbookText)).not.toContain('Supporter');
    const on = names(playbookText.replace('rankBy: salience}', 'rankBy: salience, layoutCues: true}'));
    expect(on).toEqual(expect.arrayContaining(['Category', 'Supporter']));
    expect(on).not.toContain('CategoryBrake');
  });

  it('is proposed when a missed gold entity is a word the layout reading reads otherwise', () => {
    const parsed = parsePlaybook(playbookText);
    if (!parsed.ok) throw new Error('fixture playbook');
    const expected: ExpectedIntent = {
      entities: [{ name: 'Shop' }, { name: 'Product' }, { name: 'Category' }, { name: 'Supporter' }],
    };
    const analysis = analyzeGoal(goal);
    const { intent, trace } = extractIntent(compilePlaybook(parsed.playbook), analysis);
    const example: ExampleEvidence = {
      id: 'bikes',
      expected,
      analysis,
      trace,
      predictedAppType: intent.appType,
      predictedEntityCount: intent.entities.length,
      diagnostics: scoreIntent(expected, intent).diagnostics,
    };
    const candidates = generateEditCandidates(parsed.playbook, [example]);
    expect(candidates.find((candidate) => candidate.kind === 'layout')?.delta).toBe('extraction.layoutCues = true');
  });
});
