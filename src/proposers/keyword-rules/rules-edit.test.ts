import { describe, expect, it } from 'vitest';
import { parseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import {
  applyEditToRules,
  applyEditToText,
  applyEditsToText,
  describeEdit,
  referenceOf,
  resolveReference,
  type RoutingRuleEdit,
} from './rules-edit.ts';

const RULES = `# Fixture rules
queues: [billing, account, technical]
default: technical

rules:
  # Account first.
  - id: account
    queue: account
    any: [account, password]

  - id: billing
    queue: billing
    any: [invoice, refund]
    none: [gift card]

  - queue: technical
    any: [error]
`;

const rules = parseRoutingRules(RULES);
const ACCOUNT = referenceOf(rules, 0);
const BILLING = referenceOf(rules, 1);
const TECHNICAL = referenceOf(rules, 2);

describe('routing-rule edits', () => {
  it('refers to a rule by id, else by position and queue', () => {
    expect([ACCOUNT, BILLING, TECHNICAL]).toEqual([
      { index: 0, id: 'account', queue: 'account' },
      { index: 1, id: 'billing', queue: 'billing' },
      { index: 2, queue: 'technical' },
    ]);
    expect(resolveReference(rules, { index: 5, id: 'billing', queue: 'billing' })).toBe(1);
    expect(resolveReference(rules, { index: 1, id: 'billing', queue: 'account' })).toBe(-1);
    expect(resolveReference(rules, { index: 1, queue: 'billing' })).toBe(-1); // position 1 has an id
    expect(resolveReference(rules, { index: 2, queue: 'technical' })).toBe(2);
  });

  it('adds a term, an exclusion (creating the list) and removes a term, changing only that line', () => {
    expect(applyEditToText(RULES, { kind: 'addTerm', rule: BILLING, term: 'charged twice' })).toBe(
      RULES.replace('any: [invoice, refund]', 'any: [invoice, refund, charged twice]'),
    );
    expect(applyEditToText(RULES, { kind: 'addExclusion', rule: ACCOUNT, term: 'charged' })).toBe(
      RULES.replace('any: [account, password]\n', 'any: [account, password]\n    none: [charged]\n'),
    );
    expect(applyEditToText(RULES, { kind: 'addExclusion', rule: BILLING, term: 'voucher' })).toBe(
      RULES.replace('none: [gift card]', 'none: [gift card, voucher]'),
    );
    expect(applyEditToText(RULES, { kind: 'removeTerm', rule: ACCOUNT, term: 'account' })).toBe(
      RULES.replace('any: [account, password]', 'any: [password]'),
    );
  });

  it('moves a rule earlier, its comment and the spacing kept', () => {
    expect(applyEditToText(RULES, { kind: 'moveRule', rule: BILLING, before: ACCOUNT })).toBe(`# Fixture rules
queues: [billing, account, technical]
default: technical

rules:
  - id: billing
    queue: billing
    any: [invoice, refund]
    none: [gift card]

  # Account first.
  - id: account
    queue: account
    any: [account, password]

  - queue: technical
    any: [error]
`);
    expect(applyEditToText(RULES, { kind: 'moveRule', rule: TECHNICAL, before: BILLING })).toBe(`# Fixture rules
queues: [billing, account, technical]
default: technical

rules:
  # Account first.
  - id: account
    queue: account
    any: [account, password]

  - queue: technical
    any: [error]

  - id: billing
    queue: billing
    any: [invoice, refund]
    none: [gift card]
`);
  });

  it('adds a new rule before a rule or at the end', () => {
    const rule = '  - id: billing-charged\n    queue: billing\n    any: [charged]\n';
    expect(
      applyEditToText(RULES, {
        kind: 'addRule',
        id: 'billing-charged',
        queue: 'billing',
        term: 'charged',
        before: ACCOUNT,
      }),
    ).toBe(RULES.replace('rules:\n  # Account first.\n', `rules:\n${rule}\n  # Account first.\n`));
    expect(
      applyEditToText(RULES, {
        kind: 'addRule',
        id: 'billing-charged',
        queue: 'billing',
        term: 'charged',
        before: TECHNICAL,
      }),
    ).toBe(RULES.replace('  - queue: technical', `${rule}\n  - queue: technical`));
    expect(
      applyEditToText(RULES, {
        kind: 'addRule',
        id: 'billing-charged',
        queue: 'billing',
        term: 'charged',
        before: null,
      }),
    ).toBe(`${RULES}\n${rule}`);
  });

  it('sets the scores section: added with its comment at the end, replaced in place when present', () => {
    const scores = [
      { queue: 'billing', weight: 3, terms: ['receipt*', 'statement'] },
      { queue: 'account', weight: 1, terms: ['profile'] },
    ];
    const added = applyEditToText(RULES, { kind: 'setScores', scores });
    expect(added).toBe(`${RULES}
# When no rule matches: each entry adds its weight to its queue for every one
# of its terms found in the ticket; the highest total wins (format version 2).
scores:
  - queue: billing
    weight: 3
    terms: [receipt*, statement]
  - queue: account
    weight: 1
    terms: [profile]
`);
    expect(parseRoutingRules(added!).scores).toEqual(scores);
    const replaced = applyEditToText(added!, {
      kind: 'setScores',
      scores: [{ queue: 'technical', weight: 2, terms: ['crash*'] }],
    });
    expect(replaced).toBe(
      added!.slice(0, added!.indexOf('scores:\n')) +
        'scores:\n  - queue: technical\n    weight: 2\n    terms: [crash*]\n',
    );
    // An empty list in the file (a seed's `scores: []`) is replaced where it stands, its comment kept.
    const seed = `${RULES}\n# Learned later.\nscores: []\n`;
    expect(applyEditToText(seed, { kind: 'setScores', scores: [scores[1]!] })).toBe(
      `${RULES}\n# Learned later.\nscores:\n  - queue: account\n    weight: 1\n    terms: [profile]\n`,
    );
    expect(describeEdit({ kind: 'setScores', scores })).toBe('set the scores to 3 weighted term(s) for 2 queue(s)');
  });

  it('applies several edits with one parse, as one after another would', () => {
    const edits: RoutingRuleEdit[] = [
      { kind: 'addRule', id: 'billing-charged', queue: 'billing', term: 'charged', before: ACCOUNT },
      { kind: 'addTerm', rule: { index: 0, id: 'billing-charged', queue: 'billing' }, term: 'charged twice' },
      { kind: 'addExclusion', rule: ACCOUNT, term: 'charged' },
      { kind: 'setScores', scores: [{ queue: 'billing', weight: 2, terms: ['bank'] }] },
    ];
    let sequential = RULES;
    for (const edit of edits) sequential = applyEditToText(sequential, edit)!;
    expect(applyEditsToText(RULES, edits)).toBe(sequential);
    // One edit that no longer applies (the rule it adds to is gone) makes the whole batch inapplicable.
    expect(applyEditsToText(RULES, edits.slice(1))).toBeNull();
    expect(applyEditsToText(RULES, [])).toBeNull();
  });

  it('refuses an edit that does not apply', () => {
    const refused: RoutingRuleEdit[] = [
      { kind: 'addTerm', rule: BILLING, term: 'INVOICE' }, // already there (case-insensitive)
      { kind: 'addExclusion', rule: BILLING, term: 'gift card' },
      { kind: 'removeTerm', rule: TECHNICAL, term: 'error' }, // the last any-term
      { kind: 'removeTerm', rule: ACCOUNT, term: 'login' }, // not there
      { kind: 'moveRule', rule: ACCOUNT, before: BILLING }, // not earlier
      { kind: 'addRule', id: 'billing', queue: 'billing', term: 'charged', before: null }, // id taken
      { kind: 'addRule', id: 'sales-quote', queue: 'sales', term: 'quote', before: null }, // undeclared queue
      { kind: 'addTerm', rule: { index: 0, id: 'gone', queue: 'account' }, term: 'x' },
      { kind: 'setScores', scores: [] }, // empty
      { kind: 'setScores', scores: [{ queue: 'sales', weight: 1, terms: ['quote'] }] }, // undeclared queue
    ];
    for (const edit of refused) {
      expect(applyEditToRules(rules, edit)).toBeNull();
      expect(applyEditToText(RULES, edit)).toBeNull();
    }
    expect(applyEditToText('rules: [', { kind: 'addTerm', rule: BILLING, term: 'x' })).toBeNull();
  });

  it('keeps a JSON file JSON, and the other lines of a file the library would re-render', () => {
    const json = `${JSON.stringify({ default: 'technical', rules: [{ queue: 'billing', any: ['invoice'] }] }, null, 2)}\n`;
    expect(applyEditToText(json, { kind: 'addTerm', rule: { index: 0, queue: 'billing' }, term: 'refund' })).toBe(
      `${JSON.stringify({ default: 'technical', rules: [{ queue: 'billing', any: ['invoice', 'refund'] }] }, null, 2)}\n`,
    );
    const compact = JSON.stringify({ default: 'technical', rules: [{ queue: 'billing', any: ['invoice'] }] });
    expect(
      applyEditToText(compact, {
        kind: 'addRule',
        id: 'account-password',
        queue: 'account',
        term: 'password',
        before: null,
      }),
    ).toBe(
      JSON.stringify({
        default: 'technical',
        rules: [
          { queue: 'billing', any: ['invoice'] },
          { id: 'account-password', queue: 'account', any: ['password'] },
        ],
      }),
    );
    const padded =
      "default: technical\nrules:\n  - queue: billing\n    any: [ invoice, 'refund' ]\n  - queue: account\n    any: [ password ]\n";
    expect(applyEditToText(padded, { kind: 'addTerm', rule: { index: 1, queue: 'account' }, term: 'login' })).toBe(
      padded.replace('any: [ password ]', 'any: [password, login]'),
    );
  });

  it('keeps a JSON file written one rule per line in that layout: only the changed rule lines differ', () => {
    const lines = [
      '{',
      '  "queues": ["billing", "account"],',
      '  "default": "billing",',
      '  "rules": [',
      '    { "id": "billing", "queue": "billing", "any": ["invoice"] },',
      '    { "id": "account", "queue": "account", "any": ["password"] }',
      '  ]',
      '}',
      '',
    ];
    const text = lines.join('\n');
    // Before, the re-indented rendering changed every line, so every candidate's delta was the whole file.
    expect(
      applyEditToText(text, { kind: 'addTerm', rule: { index: 1, id: 'account', queue: 'account' }, term: 'login' }),
    ).toBe(text.replace('"any": ["password"] }', '"any": ["password", "login"] }'));
    expect(
      applyEditToText(text, { kind: 'addRule', id: 'refunds', queue: 'billing', term: 'refund', before: null }),
    ).toBe(
      text.replace(
        '"any": ["password"] }\n',
        '"any": ["password"] },\n    { "id": "refunds", "queue": "billing", "any": ["refund"] }\n',
      ),
    );
    expect(
      applyEditToText(text, {
        kind: 'moveRule',
        rule: { index: 1, id: 'account', queue: 'account' },
        before: { index: 0, id: 'billing', queue: 'billing' },
      }),
    ).toBe(
      [
        ...lines.slice(0, 4),
        '    { "id": "account", "queue": "account", "any": ["password"] },',
        '    { "id": "billing", "queue": "billing", "any": ["invoice"] }',
        ...lines.slice(6),
      ].join('\n'),
    );
  });

  it('applies the same edit to parsed rules as to the text', () => {
    const edits: RoutingRuleEdit[] = [
      { kind: 'addTerm', rule: BILLING, term: 'charged twice' },
      { kind: 'addExclusion', rule: ACCOUNT, term: 'charged' },
      { kind: 'removeTerm', rule: ACCOUNT, term: 'account' },
      { kind: 'moveRule', rule: TECHNICAL, before: ACCOUNT },
      { kind: 'addRule', id: 'billing-charged', queue: 'billing', term: 'charged', before: BILLING },
      { kind: 'setScores', scores: [{ queue: 'billing', weight: 1.5, terms: ['bank', 'card*'] }] },
    ];
    for (const edit of edits)
      expect(parseRoutingRules(applyEditToText(RULES, edit)!)).toEqual(applyEditToRules(rules, edit));
  });

  it('describes an edit in words', () => {
    expect(describeEdit({ kind: 'addTerm', rule: BILLING, term: 'charged' })).toBe(
      'add "charged" to rule billing (billing)',
    );
    expect(describeEdit({ kind: 'addExclusion', rule: TECHNICAL, term: 'refund' })).toBe(
      'exclude "refund" from rule #3 (technical)',
    );
    expect(describeEdit({ kind: 'removeTerm', rule: ACCOUNT, term: 'account' })).toBe(
      'remove "account" from rule account (account)',
    );
    expect(describeEdit({ kind: 'moveRule', rule: TECHNICAL, before: ACCOUNT })).toBe(
      'move rule #3 (technical) before rule account (account)',
    );
    expect(describeEdit({ kind: 'addRule', id: 'b-x', queue: 'billing', term: 'x', before: null })).toBe(
      'add rule b-x (billing) on "x" at the end',
    );
  });
});
