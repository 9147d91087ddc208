import { describe, expect, it } from 'vitest';
import { DEFAULT_CORPUS_POLICY } from '../corpus/lifecycle.ts';
import { pairedTTest } from '../stats/index.ts';
import type { RefusedExperiment } from './stuck-advice.ts';
import { requiredExamples, requiredExamplesMcNemar, significanceShortfall, stuckAdvice } from './stuck-advice.ts';
import { combinedEdits } from './stuck-factors.ts';

/** A not_significant refusal as the gate records it, from per-example composites. */
function refusal(id: number, differences: number[]): RefusedExperiment {
  const incumbent = differences.map(() => 0.5);
  const candidate = differences.map((difference) => 0.5 + difference);
  const test = pairedTTest(candidate, incumbent, { alternative: 'greater' });
  const delta = differences.reduce((sum, value) => sum + value, 0) / differences.length;
  return {
    id,
    reason: 'not_significant',
    evidence: {
      checks: [
        { name: 'margin', statistic: Math.round(delta * 1e6) / 1e6 },
        { name: 'significance', statistic: test.pValue, data: { t: test.t, df: test.df, pValue: test.pValue } },
      ],
    },
  };
}

const CONTEXT = {
  studyDir: 'my-study',
  alpha: 0.05,
  policy: { ...DEFAULT_CORPUS_POLICY },
  sizes: { optimization: 6, anchor: 1, shadow: 13 },
  shadowExposures: [],
};

describe('requiredExamples', () => {
  it('matches SciPy: the smallest n with scipy.stats.t.sf(d·√n, n − 1) < α', () => {
    // SciPy 1.17.1: n = 2; while stats.t.sf(d*sqrt(n), n-1) >= a: n += 1
    expect(requiredExamples(0.408248290463863, 0.05)).toBe(19); // one of six examples fixed
    expect(requiredExamples(0.408248290463863, 0.01)).toBe(36);
    expect(requiredExamples(0.6172133998483675, 0.05)).toBe(10); // two of six, by different amounts
    expect(requiredExamples(0.6172133998483675, 0.01)).toBe(18);
    expect(requiredExamples(0.6236095644623237, 0.05)).toBe(9);
    expect(requiredExamples(0.1, 0.05)).toBe(273);
  });

  it('is null for no effect or a harmful one', () => {
    expect(requiredExamples(0, 0.05)).toBeNull();
    expect(requiredExamples(-0.3, 0.05)).toBeNull();
    expect(requiredExamples(1e-6, 0.05)).toBeNull(); // beyond MAX_REQUIRED_EXAMPLES
  });
});

describe('stuckAdvice', () => {
  it('for futility: says the race stopped the candidates early and where the evidence is', () => {
    const stopped = (id: number): RefusedExperiment => ({
      id,
      reason: 'futility',
      evidence: { checks: [{ name: 'constraints' }, { name: 'racing', statistic: 0.01 }] },
    });
    const advice = stuckAdvice([stopped(1), stopped(2), { id: 3, reason: 'not_significant', evidence: {} }], CONTEXT)!;
    expect(advice.dominantReason).toBe('futility');
    expect(advice.refusals).toEqual({ futility: 2, not_significant: 1 });
    expect(advice.message).toBe(
      'no candidate was accepted in this run; the most common refusal: futility (2 of 3): the race stopped them early (gate.racing): after a batch or more, the chance that the full evaluation would pass the gate was below gate.racing.futilityLevel — the edits did not help the examples evaluated, or hurt them.',
    );
    expect(advice.steps[0]).toMatch(/^kloop show my-study <experiment> gives each stop's gain/);
  });

  it('for not_significant: names the best refused candidate, its effect and the examples to add', () => {
    // The case: an edit fixing 1 of 6 optimization examples (p = 0.18), another fixing 2 (p = 0.095).
    const one = refusal(3, [0.5, 0, 0, 0, 0, 0]);
    const two = refusal(4, [0.5, 0.3, 0, 0, 0, 0]);
    expect(significanceShortfall(one, 0.05)).toMatchObject({ testedOn: 6, requiredExamples: 19 });
    expect(significanceShortfall(one, 0.05)!.pValue).toBeCloseTo(0.1816087338245614, 9); // scipy.stats.ttest_rel(..., alternative='greater')
    const advice = stuckAdvice([one, two, { id: 5, reason: 'duplicate', evidence: {} }], CONTEXT)!;
    expect(advice.dominantReason).toBe('not_significant');
    expect(advice.refusals).toEqual({ not_significant: 2, duplicate: 1 });
    expect(advice.notSignificant).toMatchObject({
      optimizationExamples: 6,
      best: { experimentId: 4, testedOn: 6, requiredExamples: 10 },
      medianRequired: 15,
      toAdd: 4,
    });
    expect(advice.notSignificant!.best.effectSize).toBeCloseTo(0.6172133998483675, 9);
    expect(advice.message).toContain(
      'would reach α = 0.05 with 10 optimization examples (the median refused candidate: 15); the optimization partition has 6: add at least 4',
    );
    expect(advice.steps[0]).toContain('kloop corpus add my-study NEW.jsonl');
    expect(advice.steps[0]).toContain('after 5 round(s) in shadow, 3 per round boundary (2 boundaries for 4)');
    expect(advice.steps[1]).toContain(
      'kloop corpus promote my-study <id…> --to optimization --by NAME (the shadow has 13, so 4 can move',
    );
  });

  it("for specialization: the shadow's size and exposure", () => {
    const advice = stuckAdvice(
      [
        { id: 1, reason: 'specialization', evidence: {} },
        { id: 2, reason: 'specialization', evidence: {} },
        { id: 3, reason: 'not_significant', evidence: {} },
      ],
      { ...CONTEXT, sizes: { optimization: 20, anchor: 3, shadow: 6 }, shadowExposures: [4, 4, 2, 2, 2, 0] },
    )!;
    expect(advice.dominantReason).toBe('specialization');
    expect(advice.specialization).toEqual({
      shadowExamples: 6,
      exposures: { max: 4, mean: 14 / 6, limit: 40 },
      shadowConsultingDecisions: 2,
    });
    expect(advice.message).toContain('The shadow holds 6 example(s), exposed at most 4 and on average 2.3 times of 40');
  });

  it('says so when the refused edits do not help on average', () => {
    const advice = stuckAdvice([refusal(1, [0.2, -0.3, 0, 0])], CONTEXT)!;
    expect(advice.notSignificant).toBeUndefined();
    expect(advice.message).toContain('no number of examples would make them significant');
  });

  it('is null when nothing was refused', () => {
    expect(stuckAdvice([], CONTEXT)).toBeNull();
  });
});

describe('stuck advice for binary tasks and spent budgets', () => {
  it("finds the examples McNemar's exact test would need at the observed shares", () => {
    // b = 3 fixed, c = 0 broken of 6: p = 0.125; at N = 10, 5 fixed: p = 0.5^5 = 0.03125 < 0.05 (scipy.stats.binomtest(5, 5, 0.5, 'greater')).
    expect(requiredExamplesMcNemar(3, 0, 6, 0.05)).toBe(10);
    // b = 4, c = 1 of 10: at N = 25, 10 fixed against 3 broken: p = 0.0461 (scipy.stats.binomtest(10, 13, 0.5, 'greater').pvalue = 0.046142578125).
    expect(requiredExamplesMcNemar(4, 1, 10, 0.05)).toBe(25);
    expect(requiredExamplesMcNemar(2, 2, 10, 0.05)).toBeNull();
    const shortfall = significanceShortfall(
      {
        id: 7,
        reason: 'not_significant',
        evidence: {
          checks: [
            {
              name: 'significance',
              statistic: 0.125,
              data: { pairedTest: 'mcnemar-exact', b: 3, c: 0, bothRight: 2, bothWrong: 1, pValue: 0.125 },
            },
          ],
        },
      },
      0.05,
    );
    expect(shortfall).toMatchObject({
      test: 'mcnemar-exact',
      testedOn: 6,
      meanDifference: 0.5,
      requiredExamples: 10,
      pValue: 0.125,
    });
  });

  it('counts the shadow refill and a spent budget in the way out', () => {
    const advice = stuckAdvice(
      [
        {
          id: 1,
          reason: 'not_significant',
          evidence: {
            checks: [
              {
                name: 'significance',
                statistic: 0.125,
                data: { pairedTest: 'mcnemar-exact', b: 3, c: 0, bothRight: 2, bothWrong: 1, pValue: 0.125 },
              },
            ],
          },
        },
      ],
      {
        studyDir: 'study',
        alpha: 0.05,
        policy: { graduateAfterDecisions: 20, rotateSlice: 3, maxShadowExposures: 40, graduateAfterRounds: 5 },
        sizes: { optimization: 6, anchor: 2, shadow: 2 },
        shadowExposures: [0, 0],
        budget: { maxExperiments: 30, evaluated: 30 },
      },
    );
    expect(advice?.notSignificant?.toAdd).toBe(4);
    expect(advice?.steps[0]).toMatch(
      /^first raise the experiment budget: 30 experiments are evaluated, stopping\.maxExperiments is 30/,
    );
    // 4 to graduate (optimization 6 → 10), and 7 so that the shadow, now 2, is still 9 or more when the last of them
    // graduates (graduation by rounds moves examples only while the shadow is larger than optimization).
    expect(advice?.steps[1]).toMatch(
      /^write 11 or more new labelled examples .*\(4 to graduate, and 7 to keep the shadow, now 2, at 9 or more\)/,
    );
    expect(advice?.steps[1]).toContain(
      'while the shadow is larger than the optimization partition (for examples due by rounds) and keeps at least 5',
    );
  });
});

describe('stuck advice weighs the refused edits together before it blames the corpus (issue 35)', () => {
  /** A McNemar not_significant refusal of an edit that fixed `fixed` of 12 optimization examples (10 wrong before) and broke none, with those outcomes. */
  const single = (id: number, fixed: string[]): RefusedExperiment => ({
    id,
    reason: 'not_significant',
    evidence: {
      checks: [
        {
          name: 'significance',
          statistic: 0.5 ** fixed.length,
          data: {
            pairedTest: 'mcnemar-exact',
            b: fixed.length,
            c: 0,
            bothRight: 2,
            bothWrong: 10 - fixed.length,
            pValue: 0.5 ** fixed.length,
          },
        },
      ],
    },
    outcomes: { fixed, broken: [] },
  });
  // The FAQ study's single edits (tests/stuck-factors.test.ts runs it): "return" fixes 4, "points" 3, "delivery" 3.
  const faq = [
    single(1, ['faq-01', 'faq-02', 'faq-03', 'faq-04']),
    single(2, ['faq-05', 'faq-06', 'faq-07']),
    single(3, ['faq-08', 'faq-09', 'faq-10']),
    single(4, ['faq-02', 'faq-03']),
  ];
  const context = { ...CONTEXT, sizes: { optimization: 12, anchor: 4, shadow: 8 } };

  it('combinedEdits: the union of fixes against the union of breaks, McNemar p (scipy.stats.binomtest(k, n, 0.5, "greater"))', () => {
    expect(combinedEdits(faq.map((entry) => entry.outcomes!))).toEqual({
      edits: 4,
      fixed: 10,
      broken: 0,
      pValue: 0.0009765625,
    });
    // An example one edit fixes and another breaks counts as broken: binomtest(2, 3, 0.5, 'greater').pvalue = 0.5.
    expect(
      combinedEdits([
        { fixed: ['a', 'b', 'c'], broken: [] },
        { fixed: [], broken: ['c'] },
      ]),
    ).toEqual({ edits: 2, fixed: 2, broken: 1, pValue: 0.5 });
    expect(combinedEdits([{ fixed: ['a'], broken: [] }])).toBeNull();
  });

  it('the proposer: a combination would pass, and no budget below its default explains why none was proposed', () => {
    const advice = stuckAdvice(faq, {
      ...context,
      proposerBudget: { setting: 'proposer.maxEvaluations', value: 76, defaultValue: 76 },
    })!;
    expect(advice.limitingFactor).toBe('proposer');
    expect(advice.message).toContain('the 4 refused edits fix 10 different example(s) between them and break 0');
    expect(advice.message).toContain('No candidate combined them: the proposer is the limit, not the corpus.');
    expect(advice.steps).toEqual([
      'apply the refused edits together by hand (kloop history my-study lists them; kloop show my-study <experiment> gives each change) and run again: kloop run my-study',
    ]);
    expect(
      stuckAdvice(faq, {
        ...context,
        proposerBudget: { setting: 'proposer.maxEvaluations', value: 10, defaultValue: 76 },
      })!.limitingFactor,
    ).toBe('proposer_budget');
    // Without per-example outcomes (a continuous task) the corpus is still what the advice names.
    expect(
      stuckAdvice(
        faq.map(({ outcomes: _outcomes, ...rest }) => rest),
        context,
      )!.limitingFactor,
    ).toBe('corpus_size');
  });

  it('the noise: gains within the noise threshold τ name the noise', () => {
    const refused: RefusedExperiment = {
      id: 9,
      reason: 'below_margin',
      evidence: { checks: [{ name: 'margin', statistic: 0.01, threshold: 0.03, passed: false }] },
    };
    const advice = stuckAdvice([refused, { ...refused, id: 10 }], context)!;
    expect(advice.limitingFactor).toBe('noise');
    expect(advice.message).toContain('the gains were at or below the noise threshold τ');
  });

  it('the shadow size: a refusal that reached the shadow shows its ceiling, p = 0.5^wrong ≥ shadowAlpha', () => {
    const shadowRefusal: RefusedExperiment = {
      id: 11,
      reason: 'specialization',
      evidence: {
        checks: [
          {
            name: 'shadow',
            passed: false,
            data: { pairedTest: 'mcnemar-exact', b: 2, c: 0, bothRight: 4, bothWrong: 1, pValue: 0.25 },
          },
        ],
      },
    };
    const advice = stuckAdvice([shadowRefusal, ...faq], { ...context, shadowAlpha: 0.05 })!;
    expect(advice.dominantReason).toBe('not_significant');
    expect(advice.limitingFactor).toBe('shadow_size');
    expect(advice.message).toContain(
      "hold 3 the incumbent gets wrong; a candidate fixing all of them and breaking none would have McNemar's exact p = 0.1250, not below gate.shadowAlpha = 0.05",
    );
    // With 5 wrong in the shadow (p = 0.03125 < 0.05) the shadow is no limit.
    const roomy = {
      ...shadowRefusal,
      evidence: {
        checks: [
          {
            name: 'shadow',
            passed: false,
            data: { pairedTest: 'mcnemar-exact', b: 1, c: 1, bothRight: 2, bothWrong: 4, pValue: 0.75 },
          },
        ],
      },
    };
    expect(stuckAdvice([roomy, ...faq], context)!.limitingFactor).toBe('proposer');
  });
});
