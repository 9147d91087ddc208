import { describe, expect, it } from 'vitest';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import { parseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { evidenceOf } from './edit-candidates.ts';
import { SCORE_SETTINGS_GRID, chooseScores, indexTerms, learnScores } from './learn-scores.ts';

const QUEUES = ['billing', 'account', 'technical'];
const TICKETS: Array<[string, string, string]> = [
  ['b0', 'My card was declined at the bank', 'billing'],
  ['b1', 'Card declined again', 'billing'],
  ['b2', 'The bank says my card is fine', 'billing'],
  ['b3', 'Refund the fee please', 'billing'],
  ['a0', 'Change my profile name', 'account'],
  ['a1', 'Profile photo will not change', 'account'],
  ['a2', 'Update my profile', 'account'],
  ['t0', 'App crashes on start', 'technical'],
  ['t1', 'Page error in the app', 'technical'],
  ['t2', 'The app is slow today', 'technical'],
];
const EVIDENCE = TICKETS.map(([id, text, label]) => evidenceOf(id, text, label));
// No rule at all: every ticket goes to the default, so the 7 that are not technical are misrouted.
const NO_RULES = parseRoutingRules('queues: [billing, account, technical]\ndefault: technical\nrules: []\n');

describe('learnScores', () => {
  it('weighs each term by the rounded log2 ratio of its share in the queue to its share elsewhere, at most maxWeight', () => {
    // card: 3 of 4 billing tickets, 0 of 6 others → (3.5/5) / (0.5/7) = 9.8, log2 = 3.29 → 3.
    // bank: 2 of 4 → (2.5/5) / (0.5/7) = 7, log2 = 2.81 → 3. app: 3 of 3 → (3.5/4) / (0.5/8) = 14, log2 = 3.81 → capped at 3.
    // change*: 2 of 3 account tickets → (2.5/4) / (0.5/8) = 10, log2 = 3.32 → 3.
    // Left out: terms in fewer than 2 tickets of the queue (fee, photo, slow), `declined` (the same tickets as the
    // shorter `declin*`), `my card` (never without `card`), `profile` (its prefix form `profile*` is a candidate).
    expect(learnScores(indexTerms(EVIDENCE), QUEUES, { minCount: 2, termsPerQueue: 10, maxWeight: 3 })).toEqual([
      { queue: 'billing', weight: 3, terms: ['bank', 'card', 'declin*'] },
      { queue: 'account', weight: 3, terms: ['change*', 'profile*'] },
      { queue: 'technical', weight: 3, terms: ['app'] },
    ]);
  });

  it('keeps the strongest terms per queue (weight × support), splits them by weight and learns only from the members given', () => {
    const index = indexTerms(EVIDENCE);
    expect(learnScores(index, QUEUES, { minCount: 2, termsPerQueue: 1, maxWeight: 3 })).toEqual([
      { queue: 'billing', weight: 3, terms: ['card'] },
      { queue: 'account', weight: 3, terms: ['profile*'] },
      { queue: 'technical', weight: 3, terms: ['app'] },
    ]);
    // maxWeight 1 puts every term in one entry per queue.
    expect(learnScores(index, QUEUES, { minCount: 3, termsPerQueue: 10, maxWeight: 1 })).toEqual([
      { queue: 'billing', weight: 1, terms: ['card'] },
      { queue: 'account', weight: 1, terms: ['profile*'] },
      { queue: 'technical', weight: 1, terms: ['app'] },
    ]);
    // Without b0 and b1, card and bank occur in one billing ticket each: nothing for billing is left.
    const members = [2, 3, 4, 5, 6, 7, 8, 9];
    expect(
      learnScores(index, QUEUES, { minCount: 2, termsPerQueue: 10, maxWeight: 3 }, members).map((entry) => entry.queue),
    ).toEqual(['account', 'technical']);
  });
});

describe('chooseScores', () => {
  it('chooses by 5-fold cross-validation on the examples, the smallest setting within one standard error of the best', () => {
    const grid = [
      { minCount: 2, termsPerQueue: 1, maxWeight: 3 },
      { minCount: 2, termsPerQueue: 10, maxWeight: 3 },
    ];
    const chosen = chooseScores(NO_RULES, EVIDENCE, grid, 5)!;
    expect(chosen.tried).toEqual([
      { settings: grid[0], fixed: 1, broken: 0, misrouted: 7, examples: 10, meanTerms: 2.6 },
      { settings: grid[1], fixed: 2, broken: 0, misrouted: 7, examples: 10, meanTerms: 4.6 },
    ]);
    // Best net 2; its standard error √(10 × (2/10 − 0.2²)) = 1.26; the smaller setting's net 1 ≥ 2 − 1.26 wins.
    expect(chosen.chosen).toBe(chosen.tried[0]);
    // Learned on every example with the chosen setting.
    expect(chosen.scores).toEqual(learnScores(indexTerms(EVIDENCE), QUEUES, grid[0]!));
    const routed = { ...NO_RULES, scores: chosen.scores };
    expect(
      EVIDENCE.filter((example) => routeText(routed, example.text).label !== example.expected).map(
        (example) => example.id,
      ),
    ).toEqual(['b3']);
  });

  it('routes only what no rule matches, and returns null when no setting gains held out', () => {
    // Every ticket already right: nothing to gain.
    const right = EVIDENCE.map((example) => ({ ...example, expected: 'technical' }));
    expect(chooseScores(NO_RULES, right)).toBeNull();
    // Fewer examples than folds.
    expect(chooseScores(NO_RULES, EVIDENCE.slice(0, 4))).toBeNull();
    // A rule that already routes every ticket leaves nothing to the scores.
    const all = parseRoutingRules(
      'default: technical\nrules:\n  - {queue: billing, any: [the, my, card, refund, change, update, profile, app, page]}\n',
    );
    expect(chooseScores(all, EVIDENCE)).toBeNull();
  });

  it('tries six settings by default, the smallest first', () => {
    expect(SCORE_SETTINGS_GRID).toEqual([
      { minCount: 3, termsPerQueue: 10, maxWeight: 3 },
      { minCount: 2, termsPerQueue: 10, maxWeight: 3 },
      { minCount: 3, termsPerQueue: 20, maxWeight: 3 },
      { minCount: 2, termsPerQueue: 20, maxWeight: 3 },
      { minCount: 3, termsPerQueue: 30, maxWeight: 3 },
      { minCount: 2, termsPerQueue: 30, maxWeight: 3 },
    ]);
  });
});
