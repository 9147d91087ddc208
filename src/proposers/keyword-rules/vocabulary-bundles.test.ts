import { describe, expect, it } from 'vitest';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import { parseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { evidenceOf, generateRoutingEdits, screenRoutingEdits } from './edit-candidates.ts';
import { applyEditToText, describeEdit } from './rules-edit.ts';
import { buildVocabularyBundle, compareByGenerality, generalityOf, type RankedEdit } from './vocabulary-bundles.ts';

const RULES = `queues: [billing, account, technical, security]
default: technical
rules:
  - id: account
    queue: account
    any: [account, password]
`;
const TICKETS: Array<[string, string, string]> = [
  ['b0', 'I was charged twice', 'billing'],
  ['b1', 'Charged for a plan I cancelled', 'billing'],
  ['b2', 'Please resend the invoice', 'billing'],
  ['s0', 'Someone changed my password', 'security'],
  ['s1', 'Someone else changed my email', 'security'],
  ['a0', 'Reset my password please', 'account'],
  ['t0', 'The app crashes', 'technical'],
  ['t1', 'The phone charged but the app is blank', 'technical'],
];
const EVIDENCE = TICKETS.map(([id, text, label]) => evidenceOf(id, text, label));
const rules = parseRoutingRules(RULES);
const RANKED: RankedEdit[] = screenRoutingEdits(rules, EVIDENCE, generateRoutingEdits(rules, EVIDENCE))
  .map((entry) => ({ ...entry, ...generalityOf(rules, EVIDENCE, entry) }))
  .sort(compareByGenerality);
const find = (description: string) => RANKED.find((entry) => describeEdit(entry.edit) === description)!;

describe('generalityOf', () => {
  it('counts held-out fixes, smoothed precision, exposure and overrides on the optimization examples', () => {
    const pick = ({ heldOutFixes, precision, occurrences, exposure, overrides, fixed, broken }: RankedEdit) => ({
      heldOutFixes,
      precision,
      occurrences,
      exposure,
      overrides,
      fixed,
      broken,
    });
    // "charged" was read from b0 and b1, and fixes both: each fix is suggested by the other ticket too (2 held out).
    // It occurs in 3 tickets, 2 of them billing: 2 / (3 + 1). It breaks t1 ("the phone charged").
    expect(pick(find('add rule billing-charged (billing) on "charged" at the end'))).toEqual({
      heldOutFixes: 2,
      precision: 0.5,
      occurrences: 3,
      exposure: 3,
      overrides: false,
      fixed: 2,
      broken: 1,
    });
    // Before the account rule, "changed" was read from s0 only and fixes s0 and s1: s1's fix is held out, s0's is not.
    // 2 of its 2 tickets are security: 2 / 3. Both reach the place of the rule.
    expect(pick(find('add rule security-changed (security) on "changed" before rule account (account)'))).toEqual({
      heldOutFixes: 1,
      precision: 2 / 3,
      occurrences: 2,
      exposure: 2,
      overrides: false,
      fixed: 2,
      broken: 0,
    });
    // At the end only s1 reaches it (the account rule takes s0 first): less at stake, one fix, none held out.
    expect(pick(find('add rule security-changed (security) on "changed" at the end'))).toMatchObject({
      heldOutFixes: 0,
      exposure: 1,
      fixed: 1,
    });
    // "my password" for security holds the account rule's own term "password".
    expect(
      find('add rule security-my-password (security) on "my password" before rule account (account)').overrides,
    ).toBe(true);
    // A word read from one ticket that fixes only it: its wording, not vocabulary.
    expect(pick(find('add rule billing-invoice (billing) on "invoice" at the end'))).toMatchObject({
      heldOutFixes: 0,
      precision: 0.5,
      occurrences: 1,
    });
  });

  it('ranks more held-out fixes first, then higher precision', () => {
    expect(RANKED.slice(0, 3).map((entry) => describeEdit(entry.edit))).toEqual([
      'add rule billing-charged (billing) on "charged" at the end',
      'add rule billing-charg (billing) on "charg*" at the end',
      'add rule security-changed (security) on "changed" before rule account (account)',
    ]);
  });
});

describe('buildVocabularyBundle', () => {
  it('is null when fewer than two edits pass the bars and break nothing', () => {
    // Only "changed" before the account rule has a held-out fix and breaks nothing.
    expect(
      buildVocabularyBundle(RULES, rules, EVIDENCE, RANKED, { minPrecision: 0.5, minHeldOutFixes: 1 }, 10_000),
    ).toBeNull();
  });

  it('keeps each edit that adds a fix and breaks nothing, leaves out overrides, and gathers new terms of a queue in one rule', () => {
    const bundle = buildVocabularyBundle(
      RULES,
      rules,
      EVIDENCE,
      RANKED,
      { minPrecision: 0.3, minHeldOutFixes: 0 },
      10_000,
    )!;
    expect(bundle.edits.map(describeEdit)).toEqual([
      'add rule security-vocabulary (security) on "changed" before rule account (account)',
      'add rule billing-vocabulary (billing) on "cancelled" at the end',
      'add "charged twice" to rule billing-vocabulary (billing)',
      'add "invoice" to rule billing-vocabulary (billing)',
    ]);
    expect(bundle.text).toBe(`queues: [billing, account, technical, security]
default: technical
rules:
  - id: security-vocabulary
    queue: security
    any: [changed]
  - id: account
    queue: account
    any: [account, password]
  - id: billing-vocabulary
    queue: billing
    any: [cancelled, charged twice, invoice]
`);
    // The text is the edits applied one after another, and routes as counted: t1 and a0 still right.
    let sequential = RULES;
    for (const edit of bundle.edits) sequential = applyEditToText(sequential, edit)!;
    expect(sequential).toBe(bundle.text);
    const after = parseRoutingRules(bundle.text);
    expect([...bundle.fixedIds]).toEqual(['b0', 'b1', 'b2', 's0', 's1']);
    expect(EVIDENCE.filter((example) => routeText(after, example.text).label !== example.expected)).toEqual([]);
  });

  it('leaves out an edit that would take the rules past the length ceiling', () => {
    const bars = { minPrecision: 0.3, minHeldOutFixes: 0 };
    // The whole bundle is 296 characters: a ceiling of 296 keeps it all; at 295 the shorter "resend" fixes b2 in
    // place of "invoice"; at 280 it replaces "charged twice" as well (b0 stays misrouted); at 200 one edit fits.
    expect(buildVocabularyBundle(RULES, rules, EVIDENCE, RANKED, bars, 296)!.edits.length).toBe(4);
    const at295 = buildVocabularyBundle(RULES, rules, EVIDENCE, RANKED, bars, 295)!;
    expect(at295.edits.map(describeEdit).slice(2)).toEqual([
      'add "charged twice" to rule billing-vocabulary (billing)',
      'add "resend" to rule billing-vocabulary (billing)',
    ]);
    expect(at295.text.length).toBe(295);
    const at280 = buildVocabularyBundle(RULES, rules, EVIDENCE, RANKED, bars, 280)!;
    expect(at280.edits.map(describeEdit).slice(2)).toEqual(['add "resend" to rule billing-vocabulary (billing)']);
    expect([at280.text.length, [...at280.fixedIds]]).toEqual([280, ['b1', 'b2', 's0', 's1']]);
    expect(buildVocabularyBundle(RULES, rules, EVIDENCE, RANKED, bars, 200)).toBeNull();
  });
});
