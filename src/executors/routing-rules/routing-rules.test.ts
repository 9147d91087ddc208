import { describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import {
  ROUTING_RULES_EXECUTOR_ID,
  createRoutingRulesExecutor,
  parseRoutingRules,
  prepareText,
  routeText,
  routingQueues,
  ruleMatches,
  safeParseRoutingRules,
  scoreText,
  termMatches,
  termWords,
} from './index.ts';

const RULES = `# Fixture rules
queues: [billing, technical, account, security]
default: technical

rules:
  - id: hacked
    queue: security
    any: [hacked, "someone else logged in"]

  - id: charges
    queue: billing
    any: [invoice, charged twice, refund*]
    none: [gift card]

  - queue: account
    any: [password, username]
    all: [reset]
`;

function thrown(run: () => unknown): InputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

describe('parseRoutingRules', () => {
  it('reads the rules in order, defaults the lists and trims the terms', () => {
    expect(parseRoutingRules(RULES)).toEqual({
      queues: ['billing', 'technical', 'account', 'security'],
      default: 'technical',
      rules: [
        { id: 'hacked', queue: 'security', any: ['hacked', 'someone else logged in'], all: [], none: [] },
        { id: 'charges', queue: 'billing', any: ['invoice', 'charged twice', 'refund*'], all: [], none: ['gift card'] },
        { queue: 'account', any: ['password', 'username'], all: ['reset'], none: [] },
      ],
    });
    expect(parseRoutingRules('default: a\nrules:\n  - {queue: b, any: ["  two  words "]}\n').rules[0]!.any).toEqual([
      'two  words',
    ]);
  });

  it('accepts JSON', () => {
    const json = JSON.stringify({ default: 'technical', rules: [{ queue: 'billing', any: ['invoice'] }] }, null, 2);
    expect(parseRoutingRules(json, 'rules.json')).toEqual({
      default: 'technical',
      rules: [{ queue: 'billing', any: ['invoice'], all: [], none: [] }],
    });
  });

  it('lists the queues a file can answer', () => {
    expect(routingQueues(parseRoutingRules(RULES))).toEqual(['billing', 'technical', 'account', 'security']);
    expect(
      routingQueues(parseRoutingRules('default: x\nrules:\n  - {queue: y, any: [a]}\n  - {queue: x, any: [b]}\n')),
    ).toEqual(['x', 'y']);
  });

  it('names the file, the line and the field of a problem', () => {
    const cases: Array<[string, string]> = [
      // A queue outside the declared ones.
      [
        RULES.replace('queue: account', 'queue: acount'),
        'rules.yaml:15: rules[2].queue: "acount" is not a declared queue (queues: billing, technical, account, security)',
      ],
      // The default outside the declared ones.
      [
        RULES.replace('default: technical', 'default: tech'),
        'rules.yaml:3: default: "tech" is not a declared queue (queues: billing, technical, account, security)',
      ],
      // An unknown key, with the allowed ones.
      [
        RULES.replace('    none: [gift card]', '    nones: [gift card]'),
        'rules.yaml:13: rules[1].nones: unknown key "nones" (allowed: id, queue, any, all, none)',
      ],
      // A rule with no "any" term.
      [
        RULES.replace('any: [hacked, "someone else logged in"]', 'any: []'),
        'rules.yaml:8: rules[0].any: a rule needs at least one term in "any"',
      ],
      // A missing "any".
      [RULES.replace('    any: [password, username]\n', ''), 'rules.yaml:15: rules[2].any: required (expected array)'],
      // A term that is not text.
      [
        RULES.replace('[invoice,', '[42,'),
        'rules.yaml:12: rules[1].any[0]: a term is text, not number (quote it: "42")',
      ],
      // A term with no word, and a misplaced star.
      [RULES.replace('gift card', '"--"'), 'rules.yaml:13: rules[1].none[0]: "--" has no letter or digit to match'],
      [
        RULES.replace('refund*', 're*fund'),
        'rules.yaml:12: rules[1].any[2]: "re*fund": "*" is allowed only at the end of a term (a prefix of its last word)',
      ],
      [
        RULES.replace('refund*', 'refund *'),
        'rules.yaml:12: rules[1].any[2]: "refund *": "*" must follow a word directly',
      ],
      // A duplicate rule id.
      [
        RULES.replace('id: charges', 'id: hacked'),
        'rules.yaml:10: rules[1].id: rule id "hacked" is already used by rules[0]',
      ],
      // A queue declared twice.
      [
        RULES.replace('queues: [billing, technical,', 'queues: [billing, billing, technical,'),
        'rules.yaml:2: queues[1]: queue "billing" is listed twice',
      ],
      // No default.
      [RULES.replace('default: technical\n', ''), 'rules.yaml:2: default: required (expected string)'],
    ];
    for (const [text, message] of cases) expect(thrown(() => parseRoutingRules(text)).message).toBe(message);
    const error = thrown(() =>
      parseRoutingRules(RULES.replace('queue: account', 'queue: acount'), 'support/rules.yaml'),
    );
    expect([error.file, error.line, error.field]).toEqual(['support/rules.yaml', 15, 'rules[2].queue']);
  });

  it('refuses malformed YAML, an empty file and a file that is not a mapping', () => {
    expect(thrown(() => parseRoutingRules('default: a\nrules: [\n')).message).toMatch(
      /^rules\.yaml:\d+: malformed YAML: /,
    );
    expect(thrown(() => parseRoutingRules('default: a\ndefault: b\nrules: []\n')).message).toMatch(
      /^rules\.yaml:2: malformed YAML: /,
    );
    // The wording of a wrong type comes from the shared located-YAML helper; the line and the field are this format's.
    const located = (text: string) => {
      const error = thrown(() => parseRoutingRules(text));
      return [error.line, error.field];
    };
    expect(located('')).toEqual([1, '(document)']);
    expect(located('- a\n- b\n')).toEqual([1, '(document)']);
    expect(located('default: a\nrules: 3\n')).toEqual([2, 'rules']);
  });

  it('has a safe form that returns the error instead of throwing', () => {
    const bad = safeParseRoutingRules('default: a\nrules:\n  - {queue: b, any: [x], nope: 1}\n', 'r.yaml');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error).toBeInstanceOf(InputError);
      expect(bad.error.message).toBe(
        'r.yaml:3: rules[0].nope: unknown key "nope" (allowed: id, queue, any, all, none)',
      );
    }
    expect(safeParseRoutingRules('default: a\nrules: []\n')).toEqual({ ok: true, rules: { default: 'a', rules: [] } });
  });
});

describe('term matching', () => {
  it('cuts texts into lower-case words on anything that is not a letter or a digit', () => {
    expect(termWords("Can't LOG-in!! (order #A-1042)")).toEqual(['can', 't', 'log', 'in', 'order', 'a', '1042']);
    expect(termWords('Ｒｅｆｕｎｄ café')).toEqual(['refund', 'café']);
    expect(prepareText('  ').words).toBe(' ');
  });

  it('matches whole words and phrases, case-insensitively, across punctuation and spacing', () => {
    expect(termMatches('card', 'My CARD, was declined')).toBe(true);
    expect(termMatches('card', 'the cardboard box')).toBe(false);
    expect(termMatches('log in', "I can't log-in")).toBe(true);
    expect(termMatches('log in', 'login fails')).toBe(false);
    expect(termMatches('log in', 'logging in fails')).toBe(false);
    expect(termMatches('charged twice', 'I was charged\n  twice.')).toBe(true);
    expect(termMatches('charged twice', 'twice charged')).toBe(false);
    expect(termMatches('e-mail', 'change my e mail')).toBe(true);
  });

  it('matches a starred last word as a prefix', () => {
    expect(termMatches('refund*', 'Refunded yet?')).toBe(true);
    expect(termMatches('refund*', 'a refund')).toBe(true);
    expect(termMatches('refund*', 'prerefund')).toBe(false);
    expect(termMatches('credit card*', 'two credit cards')).toBe(true);
    expect(termMatches('credit card*', 'credit scarcity')).toBe(false);
  });

  it('matches a rule when some any, every all and no none term occur', () => {
    const rule = { queue: 'account', any: ['password', 'username'], all: ['reset'], none: ['hacked'] };
    expect(ruleMatches(rule, 'please reset my password')).toBe(true);
    expect(ruleMatches(rule, 'my password is wrong')).toBe(false); // no "reset"
    expect(ruleMatches(rule, 'reset my account')).toBe(false); // no any-term
    expect(ruleMatches(rule, 'I was hacked, reset my password')).toBe(false); // a none-term
  });
});

describe('routeText', () => {
  const rules = parseRoutingRules(RULES);

  it('takes the first matching rule in order, else the default', () => {
    const byRule = (index: number) => ({ rule: rules.rules[index], by: 'rule', totals: null });
    const byDefault = { label: 'technical', rule: null, by: 'default', totals: null };
    expect(routeText(rules, 'I was hacked and then charged twice')).toEqual({ label: 'security', ...byRule(0) });
    expect(routeText(rules, 'Where is my refund?')).toEqual({ label: 'billing', ...byRule(1) });
    expect(routeText(rules, 'Refund for the gift card please')).toEqual(byDefault);
    expect(routeText(rules, 'Need to reset my password')).toEqual({ label: 'account', ...byRule(2) });
    expect(routeText(rules, 'The app crashes on start')).toEqual(byDefault);
    expect(routeText(rules, prepareText('INVOICE 44 is wrong'))).toEqual({ label: 'billing', ...byRule(1) });
  });
});

describe('scores (format version 2)', () => {
  const SCORED = `${RULES}
scores:
  - queue: billing
    weight: 2
    terms: [receipt*, declined]
  - queue: account
    weight: 1
    terms: [merge, profile, card]
  - queue: security
    weight: 1.5
    terms: [card]
`;
  const rules = parseRoutingRules(SCORED);

  it('parses score entries with their weights and trimmed terms', () => {
    expect(rules.scores).toEqual([
      { queue: 'billing', weight: 2, terms: ['receipt*', 'declined'] },
      { queue: 'account', weight: 1, terms: ['merge', 'profile', 'card'] },
      { queue: 'security', weight: 1.5, terms: ['card'] },
    ]);
    expect(parseRoutingRules(RULES).scores).toBeUndefined();
    expect(
      routingQueues(parseRoutingRules('default: a\nrules: []\nscores:\n  - {queue: b, weight: 1, terms: [x]}\n')),
    ).toEqual(['a', 'b']);
  });

  it('consults the scores only when no rule matches; the highest total wins, then the default', () => {
    // A rule still decides first.
    expect(routeText(rules, 'hacked, and my receipt is missing')).toMatchObject({
      label: 'security',
      by: 'rule',
      totals: null,
    });
    // 2 × 2 for billing against 1 × 1 for account.
    expect(routeText(rules, 'My card was declined and I need the receipts on my profile')).toEqual({
      label: 'billing',
      rule: null,
      by: 'scores',
      totals: { billing: 4, account: 2, security: 1.5 },
    });
    // Each term counts once, however often it occurs: profile profile profile = 1.
    expect(routeText(rules, 'profile profile profile, merge')).toMatchObject({
      label: 'account',
      totals: { account: 2 },
    });
    // No score term: the default, with empty totals.
    expect(routeText(rules, 'The app crashes on start')).toEqual({
      label: 'technical',
      rule: null,
      by: 'default',
      totals: {},
    });
    expect(scoreText(rules, 'card')).toEqual({ account: 1, security: 1.5 });
  });

  it('breaks a tie by the order of queues, else by the first entry of each queue', () => {
    // account (1) = account card (1) … security card 1.5 > account 1: security; merge + card: account 2 > security 1.5.
    expect(routeText(rules, 'merge card')).toMatchObject({ label: 'account', totals: { account: 2, security: 1.5 } });
    const tie =
      'queues: [a, b]\ndefault: a\nrules: []\nscores:\n  - {queue: b, weight: 1, terms: [x]}\n  - {queue: a, weight: 1, terms: [x]}\n';
    expect(routeText(parseRoutingRules(tie), 'x').label).toBe('a');
    const undeclared =
      'default: c\nrules: []\nscores:\n  - {queue: b, weight: 1, terms: [x]}\n  - {queue: a, weight: 1, terms: [x]}\n';
    expect(routeText(parseRoutingRules(undeclared), 'x').label).toBe('b');
  });

  it('names the line and field of a bad score entry', () => {
    const at = (text: string) => thrown(() => parseRoutingRules(text, 'rules.yaml')).message;
    expect(at(SCORED.replace('weight: 2', 'weight: 0'))).toBe(
      'rules.yaml:21: scores[0].weight: a weight is a number above 0',
    );
    expect(at(SCORED.replace('weight: 2', 'weight: two'))).toBe(
      'rules.yaml:21: scores[0].weight: a weight is a number above 0',
    );
    expect(at(SCORED.replace('weight: 2', 'weight: 5000'))).toBe(
      'rules.yaml:21: scores[0].weight: a weight is at most 1000',
    );
    expect(at(SCORED.replace('queue: billing\n    weight', 'queue: biling\n    weight'))).toBe(
      'rules.yaml:20: scores[0].queue: "biling" is not a declared queue (queues: billing, technical, account, security)',
    );
    expect(at(SCORED.replace('terms: [merge, profile, card]', 'terms: []'))).toBe(
      'rules.yaml:25: scores[1].terms: a score entry needs at least one term in "terms"',
    );
    expect(at(SCORED.replace('terms: [merge, profile, card]', 'terms: [merge, "*"]'))).toBe(
      'rules.yaml:25: scores[1].terms[1]: "*" has no letter or digit to match',
    );
    expect(at(SCORED.replace('    weight: 1.5\n', '    weight: 1.5\n    any: [x]\n'))).toBe(
      'rules.yaml:28: scores[2].any: unknown key "any" (allowed: queue, weight, terms)',
    );
  });
});

describe('routing-rules executor', () => {
  const executor = createRoutingRulesExecutor();
  const run = (text: string, artifact = RULES) =>
    executor.execute({ input: text, text, artifact, repeat: 0, exampleId: 'x' });

  it('is deterministic and names the format version', () => {
    expect(executor.id).toBe('routing-rules@2');
    expect(ROUTING_RULES_EXECUTOR_ID).toBe('routing-rules@2');
    expect(executor.deterministic).toBe(true);
  });

  it('answers { label } from the request text, with zero usage', async () => {
    const result = await run('my invoice is wrong');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.output).toEqual({ label: 'billing' });
    expect(result.raw).toBe('{"label":"billing"}');
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(await run('nothing matches here')).toMatchObject({ ok: true, output: { label: 'technical' } });
  });

  it('routes request.text, not the input object', async () => {
    const result = await executor.execute({
      input: { subject: 'x' },
      text: 'subject: hacked',
      artifact: RULES,
      repeat: 0,
    });
    expect(result).toMatchObject({ ok: true, output: { label: 'security' } });
  });

  it('returns an unparsable output for a rules file that does not parse, never a throw', async () => {
    const broken = await run('my invoice', RULES.replace('queue: account', 'queue: acount'));
    expect(broken).toMatchObject({
      ok: false,
      reason: 'unparsable',
      message:
        'the routing rules do not parse: rules:15: rules[2].queue: "acount" is not a declared queue (queues: billing, technical, account, security)',
    });
    expect(await run('x', 'rules: [\n')).toMatchObject({ ok: false, reason: 'unparsable' });
    expect(await run('x', '')).toMatchObject({ ok: false, reason: 'unparsable' });
  });

  it('stops on an aborted signal instead of answering', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      executor.execute({ input: 'x', text: 'x', artifact: RULES, repeat: 0, signal: controller.signal }),
    ).rejects.toThrow('stop');
  });
});
