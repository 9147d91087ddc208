/**
 * What a stuck study should do (issue 19, item 4): after a run that accepted
 * nothing, the report names the dominant refusal reason and the concrete way
 * out.
 *
 * For `not_significant`, the number of optimization examples at which the
 * observed effects would reach α, computed from the paired differences each
 * refused candidate was tested on (see {@link requiredExamples} for the
 * method). For `specialization`, the shadow partition's size and exposure.
 */
import type { CorpusPolicy } from '../corpus/lifecycle.ts';
import { MIN_SHADOW_EXAMPLES } from '../corpus/lifecycle.ts';
import { combinedEdits, shadowCeiling, type CombinedEdits } from './stuck-factors.ts';
import type { RefusedExperiment, SignificanceShortfall } from './significance-shortfall.ts';
import { significanceShortfall } from './significance-shortfall.ts';

export {
  MAX_REQUIRED_BINARY_EXAMPLES,
  MAX_REQUIRED_EXAMPLES,
  requiredExamples,
  requiredExamplesMcNemar,
} from './required-examples.ts';
export { type RefusedExperiment, type SignificanceShortfall, significanceShortfall } from './significance-shortfall.ts';

/**
 * What limited the run, from its own evidence: the proposer's budget (a
 * combination of the refused edits would pass, and `proposer.maxEvaluations`
 * is below the proposer's default), the proposer (a combination would pass,
 * none was proposed), the corpus's size (not even the combination would
 * pass), the shadow's size (no candidate could be confirmed there), the
 * noise (the gains were within the measured noise).
 */
export type LimitingFactor = 'proposer_budget' | 'proposer' | 'corpus_size' | 'shadow_size' | 'noise';

/** The way out of a run that accepted nothing. */
export interface StuckAdvice {
  /** The refusal reason of most of this run's candidates. */
  dominantReason: string;
  /** What the evidence says limited the run; absent when it names none (futility, anchors, other reasons). */
  limitingFactor?: LimitingFactor;
  /** Right/wrong tasks: the refused not-significant edits taken together (see src/report/stuck-factors.ts). */
  combined?: CombinedEdits;
  /** This run's refusals by reason (skipped duplicates under `duplicate`). */
  refusals: Record<string, number>;
  /** What happened and what to do, in a few sentences. */
  message: string;
  /** Concrete commands. */
  steps: string[];
  notSignificant?: {
    alpha: number;
    optimizationExamples: number;
    /** The candidate with the largest effect: the fewest examples needed. */
    best: SignificanceShortfall;
    /** Median of the required counts over the refused candidates with a positive effect. */
    medianRequired: number | null;
    /** Examples to add to the optimization partition (best.requiredExamples − optimizationExamples, at least 0). */
    toAdd: number | null;
    method: string;
  };
  specialization?: {
    shadowExamples: number;
    exposures: { max: number; mean: number; limit: number };
    shadowConsultingDecisions: number;
  };
}

/** What the advice needs to know about the study. */
export interface StuckContext {
  studyDir: string;
  alpha: number;
  policy: Readonly<CorpusPolicy>;
  sizes: { optimization: number; anchor: number; shadow: number };
  /** Shadow exposures of each shadow example. */
  shadowExposures: readonly number[];
  /** The experiment budget (`stopping.maxExperiments`, over every run) and the experiments evaluated; when spent, the advice says so first. */
  budget?: { maxExperiments: number; evaluated: number };
  /** The proposer's own scoring budget per round (`Proposer.budget`), when it has one. */
  proposerBudget?: { setting: string; value: number; defaultValue: number };
  /** `gate.shadowAlpha`; default `alpha`. */
  shadowAlpha?: number;
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : Math.ceil((sorted[middle - 1]! + sorted[middle]!) / 2);
}

const f4 = (value: number): string => value.toFixed(4);
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;

/** How examples reach the optimization partition, for a count to add. */
function howToAdd(context: StuckContext, count: number): string[] {
  const rounds = context.policy.graduateAfterRounds;
  const slice = context.policy.rotateSlice;
  const boundaries = slice > 0 ? Math.ceil(count / slice) : null;
  const spareShadow = Math.max(0, context.sizes.shadow - MIN_SHADOW_EXAMPLES);
  // New examples fill the shadow first; graduation by rounds moves them only while the shadow is larger than the
  // optimization partition (src/corpus/lifecycle.ts, planBoundary) and never below its minimum, so `count` more in
  // optimization leave a shadow of at least `keep`.
  const keep = Math.max(MIN_SHADOW_EXAMPLES, context.sizes.optimization + count - 1);
  const refill = Math.max(0, keep - context.sizes.shadow);
  const write = count + refill;
  const budget = context.budget;
  return [
    ...(budget !== undefined && budget.evaluated >= budget.maxExperiments
      ? [
          `first raise the experiment budget: ${budget.evaluated} experiments are evaluated, stopping.maxExperiments is ${budget.maxExperiments} (counted over every run), so no round runs and no example graduates; raise it in kloop.yaml or pass --max-experiments N`,
        ]
      : []),
    `write ${write} or more new labelled examples like the ones the refused edits fixed${refill > 0 ? ` (${count} to graduate, and ${refill} to keep the shadow, now ${context.sizes.shadow}, at ${keep} or more)` : ''}, and admit them: kloop corpus add ${context.studyDir} NEW.jsonl (or list them in a corpus file). New examples enter the shadow partition first and graduate into optimization ${rounds !== undefined ? `after ${rounds} round(s) in shadow` : `after ${context.policy.graduateAfterDecisions} shadow decisions`}, ${slice} per round boundary${boundaries !== null ? ` (${boundaries} boundar${boundaries === 1 ? 'y' : 'ies'} for ${count})` : ''}, while the shadow is larger than the optimization partition${rounds !== undefined ? ' (for examples due by rounds)' : ''} and keeps at least ${MIN_SHADOW_EXAMPLES}`,
    spareShadow > 0
      ? `or move examples you already have: kloop corpus promote ${context.studyDir} <id…> --to optimization --by NAME (the shadow has ${context.sizes.shadow}, so ${Math.min(spareShadow, count)} can move without taking it below ${MIN_SHADOW_EXAMPLES}; each one moved is no longer an unseen check)`
      : `the shadow has ${context.sizes.shadow} (the minimum is ${MIN_SHADOW_EXAMPLES}): none of its examples can move to optimization yet, so add examples (they fill the shadow first)`,
  ];
}

/**
 * The advice after a run whose candidates were all refused (null when the
 * run refused nothing). `experiments` are the run's decided experiments that
 * were not accepted (refused, or skipped as duplicates).
 */
export function stuckAdvice(experiments: readonly RefusedExperiment[], context: StuckContext): StuckAdvice | null {
  if (experiments.length === 0) return null;
  const refusals: Record<string, number> = {};
  for (const experiment of experiments) refusals[experiment.reason] = (refusals[experiment.reason] ?? 0) + 1;
  const evaluated = Object.entries(refusals).filter(([reason]) => reason !== 'duplicate');
  const ranked = (evaluated.length > 0 ? evaluated : Object.entries(refusals)).sort(
    (left, right) => right[1] - left[1] || left[0].localeCompare(right[0]),
  );
  const [dominantReason, dominantCount] = ranked[0]!;
  const total = evaluated.length > 0 ? evaluated.reduce((sum, [, count]) => sum + count, 0) : experiments.length;
  const head = `no candidate was accepted in this run; the most common refusal: ${dominantReason} (${dominantCount} of ${total})`;
  const shadowLimited = shadowSizeAdvice(experiments, context, refusals, head, dominantReason);
  if (shadowLimited !== undefined) return shadowLimited;
  switch (dominantReason) {
    case 'not_significant':
      return notSignificantAdvice(experiments, context, refusals, head);
    case 'specialization':
      return specializationAdvice(experiments, context, refusals, head);
    case 'not_confirmed':
      return {
        dominantReason,
        refusals,
        message: `${head}: the edits raised the optimization composite and the unseen shadow partition rose too (Δshadow > 0), but too little for its one test to tell it from chance at gate.shadowAlpha: positive but unproven, not specialization. Each refusal's evidence gives the shadow test's power for the optimization gain; a low power means the shadow (${context.sizes.shadow} example(s)) is too small for gains of that size.`,
        steps: [
          `kloop show ${context.studyDir} <experiment> gives the shadow test's p-value and power; grow the shadow (admitted examples enter it first): kloop corpus add ${context.studyDir} NEW.jsonl`,
          'a not_confirmed candidate proposed again against a changed incumbent is judged again (gate.retrials), at levels that keep the false-accept rate bounded',
        ],
      };
    case 'below_margin':
      return {
        dominantReason,
        limitingFactor: 'noise',
        refusals,
        message: `${head}: the gains were at or below the noise threshold τ. Either the edits change nothing measurable (Δ ≤ 0), or the calibrated noise is large for this corpus.`,
        steps: [
          `kloop history ${context.studyDir} to see the gains; kloop calibrate ${context.studyDir} again (gate.noiseRepeats) or raise gate.repeats to average the noise down`,
          ...howToAdd(context, Math.max(1, context.sizes.optimization)),
        ],
      };
    case 'futility':
      return {
        dominantReason,
        refusals,
        message: `${head}: the race stopped them early (gate.racing): after a batch or more, the chance that the full evaluation would pass the gate was below gate.racing.futilityLevel — the edits did not help the examples evaluated, or hurt them.`,
        steps: [
          `kloop show ${context.studyDir} <experiment> gives each stop's gain, the gain the gate needs and the anytime-valid bound; better proposals, not more evaluations, are the way out: kloop history ${context.studyDir} shows what was tried`,
        ],
      };
    case 'anchor_regression':
      return {
        dominantReason,
        refusals,
        message: `${head}: the edits break representative cases that may never regress.`,
        steps: [
          `kloop show ${context.studyDir} <experiment> names the anchors that dropped; add optimization examples like those anchors, so the proposer sees what they need (kloop corpus add ${context.studyDir} NEW.jsonl)`,
        ],
      };
    case 'duplicate':
      return {
        dominantReason,
        limitingFactor: 'corpus_size',
        refusals,
        message: `${head}: the proposer keeps proposing edits already tried; it has run out of ideas on these optimization examples.`,
        steps: [
          `add optimization examples with new failures for it to learn from: kloop corpus add ${context.studyDir} NEW.jsonl`,
        ],
      };
    default:
      return {
        dominantReason,
        refusals,
        message: `${head}.`,
        steps: [
          `kloop history ${context.studyDir} and kloop show ${context.studyDir} <experiment> show each decision's evidence`,
        ],
      };
  }
}

function notSignificantAdvice(
  experiments: readonly RefusedExperiment[],
  context: StuckContext,
  refusals: Record<string, number>,
  head: string,
): StuckAdvice {
  const shortfalls = experiments
    .filter((experiment) => experiment.reason === 'not_significant')
    .map((experiment) => significanceShortfall(experiment, context.alpha))
    .filter((entry): entry is SignificanceShortfall => entry !== undefined && entry.effectSize > 0);
  const method =
    "from each refused candidate's paired test: d_z = t/√n (the mean per-example paired difference over its SD), then the smallest n at which a one-sided paired t-test with t = d_z·√n and n − 1 degrees of freedom has p < α; assumes new examples behave like these (a floor: at that n a true effect of that size passes about half the time)";
  const combined = combinedEdits(
    experiments
      .filter((experiment) => experiment.reason === 'not_significant' && experiment.outcomes !== undefined)
      .map((experiment) => experiment.outcomes!),
  );
  if (combined !== null && combined.pValue < context.alpha) return combinedAdvice(combined, context, refusals, head);
  if (shortfalls.length === 0) {
    return {
      dominantReason: 'not_significant',
      refusals,
      message: `${head}, and none of those candidates improved the examples on average, so no number of examples would make them significant: the edits do not help.`,
      steps: [
        `kloop history ${context.studyDir} shows what was tried; add optimization examples with the failures you care about: kloop corpus add ${context.studyDir} NEW.jsonl`,
      ],
    };
  }
  const best = [...shortfalls].sort(
    (left, right) => right.effectSize - left.effectSize || left.experimentId - right.experimentId,
  )[0]!;
  const testMethod =
    best.test === 'mcnemar-exact'
      ? "from each refused candidate's McNemar test: the examples it fixed (b) and broke (c) of the n tested, then the smallest N at which ⌊b·N/n⌋ fixed against ⌈c·N/n⌉ broken gives McNemar's exact one-sided p < α; assumes new examples behave like these (a floor, not a promise)"
      : method;
  const medianRequired = median(
    shortfalls.map((entry) => entry.requiredExamples).filter((value): value is number => value !== null),
  );
  const toAdd = best.requiredExamples === null ? null : Math.max(0, best.requiredExamples - context.sizes.optimization);
  const needed =
    best.requiredExamples === null
      ? `even the best refused candidate, #${best.experimentId}, has too small an effect (d_z = ${best.effectSize.toFixed(3)}) to reach α = ${context.alpha} with any practical number of examples`
      : `the best refused candidate, #${best.experimentId} (Δ = ${signed(best.meanDifference)} over ${best.testedOn} examples, SD of the paired differences ${f4(best.differenceSd)}, ${best.test === 'mcnemar-exact' ? `McNemar's exact test` : `d_z = ${best.effectSize.toFixed(3)}`}, p = ${best.pValue.toFixed(3)}), would reach α = ${context.alpha} with ${best.requiredExamples} optimization examples${medianRequired !== null && shortfalls.length > 1 ? ` (the median refused candidate: ${medianRequired})` : ''}; the optimization partition has ${context.sizes.optimization}${toAdd !== null && toAdd > 0 ? `: add at least ${toAdd}` : ''}`;
  return {
    dominantReason: 'not_significant',
    limitingFactor: 'corpus_size',
    ...(combined !== null ? { combined } : {}),
    refusals,
    message: `${head}: each edit helps a few examples, too few for the paired test to tell it from chance; ${needed}${combined !== null ? `. Together the ${combined.edits} refused edits fix ${combined.fixed} different example(s) and break ${combined.broken} (McNemar's exact p = ${combined.pValue.toFixed(3)}): not enough either, so the corpus is what limits` : ''}.`,
    steps:
      toAdd !== null && toAdd > 0
        ? howToAdd(context, toAdd)
        : [
            `kloop history ${context.studyDir} shows the p-values; more examples help only when the edits help on average`,
          ],
    notSignificant: {
      alpha: context.alpha,
      optimizationExamples: context.sizes.optimization,
      best,
      medianRequired,
      toAdd,
      method: testMethod,
    },
  };
}

/** The advice when the refused edits together would pass: the corpus is enough, a combining candidate is missing. */
function combinedAdvice(
  combined: CombinedEdits,
  context: StuckContext,
  refusals: Record<string, number>,
  head: string,
): StuckAdvice {
  const budget = context.proposerBudget;
  const belowDefault = budget !== undefined && budget.value < budget.defaultValue;
  const evidence =
    `each edit alone fixes too few examples for McNemar's test, but the optimization partition is large enough: the ${combined.edits} refused edits fix ${combined.fixed} different example(s) between them and break ${combined.broken}, ` +
    `which together would give McNemar's exact p = ${combined.pValue.toFixed(4)} < α = ${context.alpha} on the ${context.sizes.optimization} examples it has (if the edits do not interfere)`;
  const key = budget?.setting.split('.').pop() ?? 'maxEvaluations';
  return {
    dominantReason: 'not_significant',
    limitingFactor: belowDefault ? 'proposer_budget' : 'proposer',
    combined,
    refusals,
    message: belowDefault
      ? `${head}: ${evidence}. No candidate combined them: the proposer's budget, ${budget.setting} ${budget.value} (its default ${budget.defaultValue}), was spent on single edits and left nothing for the bundles it builds from them. The proposer budget is the limit, not the corpus.`
      : `${head}: ${evidence}. No candidate combined them: the proposer is the limit, not the corpus.`,
    steps: belowDefault
      ? [
          `delete \`${key}: ${budget.value}\` from the proposer block of kloop.yaml (or raise it to ${budget.defaultValue} or more) and run again: kloop run ${context.studyDir}`,
        ]
      : [
          `apply the refused edits together by hand (kloop history ${context.studyDir} lists them; kloop show ${context.studyDir} <experiment> gives each change) and run again: kloop run ${context.studyDir}`,
        ],
  };
}

/**
 * The advice when the shadow cannot confirm any gain: a refusal that reached
 * the shadow shows it holds fewer examples the incumbent gets wrong than
 * McNemar's test needs at gate.shadowAlpha (the ceiling is the incumbent's,
 * so it holds for every candidate of the run). Undefined otherwise.
 */
function shadowSizeAdvice(
  experiments: readonly RefusedExperiment[],
  context: StuckContext,
  refusals: Record<string, number>,
  head: string,
  dominantReason: string,
): StuckAdvice | undefined {
  const shadowAlpha = context.shadowAlpha ?? context.alpha;
  const ceiling = experiments
    .map((experiment) => shadowCeiling(experiment.evidence))
    .find((entry) => entry !== undefined);
  if (ceiling === undefined || ceiling.bestPValue < shadowAlpha) return undefined;
  const needed = Math.ceil(Math.log2(1 / shadowAlpha));
  return {
    dominantReason,
    limitingFactor: 'shadow_size',
    refusals,
    message:
      `${head}: the shadow partition cannot confirm any gain. Its ${context.sizes.shadow} example(s) hold ${ceiling.wrong} the incumbent gets wrong; a candidate fixing all of them and breaking none would have McNemar's exact p = ${ceiling.bestPValue.toFixed(4)}, not below gate.shadowAlpha = ${shadowAlpha}. ` +
      `The shadow's size is the limit: it needs ${needed} or more examples the incumbent gets wrong.`,
    steps: [
      `add shadow examples like the failures the edits fixed (${needed - ceiling.wrong} or more the current rules get wrong): kloop corpus add ${context.studyDir} NEW.jsonl (new examples enter the shadow first)`,
    ],
  };
}

function specializationAdvice(
  experiments: readonly RefusedExperiment[],
  context: StuckContext,
  refusals: Record<string, number>,
  head: string,
): StuckAdvice {
  const exposures = context.shadowExposures;
  const max = exposures.length === 0 ? 0 : Math.max(...exposures);
  const mean = exposures.length === 0 ? 0 : exposures.reduce((sum, value) => sum + value, 0) / exposures.length;
  const consulted = experiments.filter((experiment) => experiment.reason === 'specialization').length;
  const small = context.sizes.shadow < 2 * MIN_SHADOW_EXAMPLES;
  return {
    dominantReason: 'specialization',
    limitingFactor: small ? 'shadow_size' : 'corpus_size',
    refusals,
    message:
      `${head}: the edits raised the optimization composite but the unseen shadow partition did not confirm it, so they fit the optimization examples rather than the task. ` +
      `The shadow holds ${context.sizes.shadow} example(s), exposed at most ${max} and on average ${mean.toFixed(1)} times of ${context.policy.maxShadowExposures} (maxShadowExposures); it graduates after ${context.policy.graduateAfterDecisions} decisions${context.policy.graduateAfterRounds !== undefined ? ` or ${context.policy.graduateAfterRounds} rounds` : ''}.` +
      (small ? ` With fewer than ${2 * MIN_SHADOW_EXAMPLES} shadow examples one example can decide the check.` : ''),
    steps: [
      `add optimization examples as varied as the shadow's, so edits that fit only a few cases stop winning: kloop corpus add ${context.studyDir} NEW.jsonl (they enter shadow and graduate)`,
      ...(small ? [`grow the shadow too (it holds ${context.sizes.shadow}): admitted examples enter it first`] : []),
    ],
    specialization: {
      shadowExamples: context.sizes.shadow,
      exposures: { max, mean, limit: context.policy.maxShadowExposures },
      shadowConsultingDecisions: consulted,
    },
  };
}
