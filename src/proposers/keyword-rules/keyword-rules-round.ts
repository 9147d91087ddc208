/**
 * One round of the keyword-rules proposer (see `keyword-rules-proposer.ts`),
 * as a sequence of named steps over a {@link KeywordRulesRound}: check the
 * context, read the evidence, score the single edits, then the learned
 * scores, then the bundles.
 *
 * @module
 */
import { contentHash } from '../../artifact/content-hash.ts';
import { changeText, lineChanges } from '../../artifact/three-way-merge.ts';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import type { RoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { safeParseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import type { Candidate, ProposalContext, ProposalResult } from '../proposer.ts';
import { INVALID_INCUMBENT } from '../proposer.ts';
import { scoreAll } from '../score-all.ts';
import { selectDiverse } from '../select-diverse.ts';
import {
  compareEdits,
  evidenceOf,
  generateRoutingEdits,
  screenRoutingEdits,
  type GeneratedEdit,
  type RoutingEvidence,
  type ScreenedEdit,
} from './edit-candidates.ts';
import { applyEditToText, type RoutingRuleEdit } from './rules-edit.ts';
import { buildVocabularyBundle, compareByGenerality, generalityOf, type BundleBars } from './vocabulary-bundles.ts';
import { chooseScores } from './learn-scores.ts';
import type { Evaluated, RoutingExample, RoutingScoreRecord } from './keyword-rules-outcomes.ts';
import {
  bundleCandidate,
  bundleEdits,
  compare,
  compositesById,
  labelOf,
  scoresCandidate,
  textOf,
  toCandidate,
  tooClose,
  unscored,
} from './keyword-rules-outcomes.ts';

/** Most steps (evaluations) of one bundle. */
const MAX_BUNDLE_STEPS = 12;

/** The proposer's settings, resolved from its options (see `KeywordRulesProposerOptions`). */
export interface KeywordRulesSettings {
  readonly maxEvaluations: number;
  readonly maxScreened: number;
  readonly minNetFixes: number;
  /** Most single edits scored per round. */
  readonly maxSingleEvaluations: number;
  readonly minDeltaDistance: number;
  readonly learnScores: boolean;
  /** The `localScreening` option as given (undefined: decided by the incumbent's recorded predictions). */
  readonly localScreening: boolean | undefined;
  readonly artifactFile: string | undefined;
  readonly maxTermsPerExample: number | undefined;
  readonly minTermPrecision: number | undefined;
  /** The bundles' bars, strictest first. */
  readonly bundleBars: readonly BundleBars[];
}

/** The state of one round, passed from step to step; `budget` and `screenings` count down. */
export interface KeywordRulesRound {
  readonly context: ProposalContext;
  readonly settings: KeywordRulesSettings;
  readonly rules: RoutingRules;
  readonly evidence: readonly RoutingEvidence[];
  readonly localScreening: boolean;
  readonly screened: readonly ScreenedEdit[];
  readonly incumbentScores: Map<string, number | null>;
  readonly pastDeltas: ReadonlySet<string>;
  /** Evaluations left of `maxEvaluations`. */
  budget: number;
  /** Local screenings left of `maxScreened`. */
  screenings: number;
}

/** Runs one round of the keyword-rules proposer (see the proposer's module comment). */
export async function proposeKeywordRules(
  settings: KeywordRulesSettings,
  context: ProposalContext,
): Promise<ProposalResult> {
  const checked = checkRound(settings, context);
  if (!('rules' in checked)) return checked;
  const { rules } = checked;
  if (context.maxCandidates <= 0) return { candidates: [], failures: [] };
  const records = context.incumbentScores.examples as unknown as readonly RoutingScoreRecord[];
  const read = readEvidence(context, rules, records);
  if (read.allRoutedRight) return { candidates: [], failures: [] };
  const { evidence } = read;
  // maxScreened 0 screens nothing: the edits go to the evaluator unscreened.
  const localScreening = settings.maxScreened > 0 && (settings.localScreening ?? read.disagreements === 0);
  const generated = generateRoutingEdits(rules, evidence, {
    ...(settings.maxTermsPerExample !== undefined ? { maxTermsPerExample: settings.maxTermsPerExample } : {}),
    ...(settings.minTermPrecision !== undefined ? { minTermPrecision: settings.minTermPrecision } : {}),
  });
  const screened = localScreening ? screenRoutingEdits(rules, evidence, generated, settings.maxScreened) : [];
  const ordered: GeneratedEdit[] = localScreening
    ? screened.filter((entry) => entry.netFixes >= settings.minNetFixes).sort(compareEdits)
    : generated;
  // The frozen evaluator decides; never a text tried before, never a delta an earlier experiment had.
  const pastDeltas = new Set(context.history.map((entry) => entry.delta));
  if (settings.maxEvaluations === 0)
    return { candidates: unscored(ordered, context, pastDeltas, localScreening), failures: [] };
  const round: KeywordRulesRound = {
    context,
    settings,
    rules,
    evidence,
    localScreening,
    screened,
    incumbentScores: compositesById(records),
    pastDeltas,
    budget: settings.maxEvaluations,
    // What the single edits leave of maxScreened: the learned scores and each local bundle count as one candidate screened locally.
    screenings: settings.maxScreened - screened.length,
  };
  const { kept, singles } = await scoreSingleEdits(round, ordered);
  const learned = await proposeLearnedScores(round);
  const room = Math.max(1, context.maxCandidates - learned.length - Math.min(1, singles.length));
  const bundles = localScreening ? await localBundles(round, room) : await evaluatedBundles(round, kept, room);
  const candidates = [...learned, ...bundles, ...singles].slice(0, context.maxCandidates);
  return { candidates, failures: [] };
}

/** The round's failures (incumbent scores of another partition, an incumbent that does not parse, a frozen `rules` section), else the parsed rules. */
function checkRound(
  settings: KeywordRulesSettings,
  context: ProposalContext,
): ProposalResult | { rules: RoutingRules } {
  if (context.incumbentScores.partition !== 'optimization') {
    return {
      candidates: [],
      failures: [
        { reason: `incumbent scores are for partition "${context.incumbentScores.partition}", not "optimization"` },
      ],
    };
  }
  const parsed = safeParseRoutingRules(context.incumbentText, settings.artifactFile);
  if (!parsed.ok)
    return {
      candidates: [],
      failures: [
        {
          code: INVALID_INCUMBENT,
          reason: `the keyword-rules proposer cannot read ${settings.artifactFile ?? 'the rules'} as a routing-rules file: ${parsed.error.message}`,
        },
      ],
    };
  const editable = context.limits.editableSections;
  if (editable.length > 0 && !editable.includes('rules')) {
    return {
      candidates: [],
      failures: [
        {
          code: 'frozen_section',
          reason: 'the program does not let the "rules" section change (editableSections)',
        },
      ],
    };
  }
  return { rules: parsed.rules };
}

/**
 * The optimization examples with a recorded outcome (first valid repeat) as evidence, how many the local
 * routing predicts otherwise than recorded, and whether the incumbent routed every one right.
 */
function readEvidence(context: ProposalContext, rules: RoutingRules, records: readonly RoutingScoreRecord[]) {
  const recorded = new Map<string, { expected: string; predicted: string }>();
  for (const record of records) {
    if (!record.valid || recorded.has(record.exampleId)) continue;
    const { expected, predicted } = record.diagnostics ?? {};
    if (typeof expected === 'string' && typeof predicted === 'string')
      recorded.set(record.exampleId, { expected, predicted });
  }
  const evidence: RoutingEvidence[] = [];
  let disagreements = 0;
  for (const example of context.examples as unknown as readonly RoutingExample[]) {
    if (example.partition !== undefined && example.partition !== 'optimization') continue;
    const outcome = recorded.get(example.id);
    const text = textOf(example);
    const expected = outcome?.expected ?? labelOf(example.expected);
    if (text === undefined || expected === undefined || outcome === undefined) continue;
    const item = evidenceOf(example.id, text, expected);
    evidence.push(item);
    if (routeText(rules, item.text).label !== outcome.predicted) disagreements += 1;
  }
  const allRoutedRight = evidence.every((item) => recorded.get(item.id)!.predicted === item.expected);
  return { evidence, disagreements, allRoutedRight };
}

/**
 * Scores the single edits: which are scored reads no score, so they are chosen first and scored all at
 * once (on every evaluation worker, or up to the executor's concurrency), then compared in the order
 * chosen. Takes the evaluations from `round.budget`; returns the edits kept (net fixes at least
 * `minNetFixes`, best first) and the diverse best of them as candidates.
 */
async function scoreSingleEdits(round: KeywordRulesRound, ordered: readonly GeneratedEdit[]) {
  const { context, settings } = round;
  const seen = new Set<string>();
  const chosen: Array<GeneratedEdit & { text: string; delta: string }> = [];
  for (const entry of ordered) {
    if (chosen.length >= settings.maxSingleEvaluations || context.signal?.aborted === true) break;
    const text = applyEditToText(context.incumbentText, entry.edit);
    if (text === null || [...text].length > context.limits.maxArtifactCharacters) continue;
    const hash = contentHash(text);
    const delta = changeText(lineChanges(context.incumbentText, text));
    if (context.triedHashes.has(hash) || seen.has(hash) || round.pastDeltas.has(delta)) continue;
    seen.add(hash);
    chosen.push({ ...entry, text, delta });
  }
  const evaluations = chosen.length;
  round.budget -= evaluations;
  const scores = await scoreAll(
    context,
    chosen.map((entry) => entry.text),
  );
  const evaluated: Evaluated[] = chosen.map((entry, index) => ({
    ...entry,
    ...compare(
      round.incumbentScores,
      compositesById(scores[index]!.examples as unknown as readonly RoutingScoreRecord[]),
    ),
  }));
  const kept = evaluated.filter((entry) => entry.netFixes >= settings.minNetFixes).sort(compareEdits);
  const singles = selectDiverse(kept, context.maxCandidates, compareEdits).map((entry) =>
    toCandidate(entry, evaluations),
  );
  return { kept, singles };
}

/**
 * Scores: weighted terms for what no rule matches, learned from every optimization example with settings
 * chosen by cross-validation on optimization (learn-scores.ts). Only when the study routes as this proposer
 * does (local screening) and the program lets the `scores` section change; one screening, one scoring.
 */
async function proposeLearnedScores(round: KeywordRulesRound): Promise<Candidate[]> {
  const { context, settings } = round;
  const editable = context.limits.editableSections;
  if (
    !(
      round.budget > 0 &&
      round.screenings > 0 &&
      settings.learnScores &&
      round.localScreening &&
      (editable.length === 0 || editable.includes('scores')) &&
      context.signal?.aborted !== true
    )
  )
    return [];
  round.screenings -= 1;
  const chosen = chooseScores(round.rules, round.evidence);
  const edit: RoutingRuleEdit | null = chosen === null ? null : { kind: 'setScores', scores: chosen.scores };
  const text = edit === null ? null : applyEditToText(context.incumbentText, edit);
  if (chosen === null || edit === null || text === null || [...text].length > context.limits.maxArtifactCharacters)
    return [];
  const delta = changeText(lineChanges(context.incumbentText, text));
  const past = context.history.map((entry) => entry.delta);
  if (
    context.triedHashes.has(contentHash(text)) ||
    round.pastDeltas.has(delta) ||
    tooClose(delta, past, settings.minDeltaDistance)
  )
    return [];
  round.budget -= 1;
  const score = await context.evaluateOptimization(text);
  const outcome = compare(
    round.incumbentScores,
    compositesById(score.examples as unknown as readonly RoutingScoreRecord[]),
  );
  if (outcome.netFixes < settings.minNetFixes) return [];
  return [scoresCandidate(text, delta, edit, outcome, chosen, round.evidence.length)];
}

/**
 * Bundles. One edit fixing 3 of 44 cannot reach significance on its own (McNemar: p = 0.125); edits that
 * each fix a few, together, can — but only edits that generalize belong in one: the broadest words fix
 * most here and misroute what the proposer cannot see (anchors, shadow). Each bundle keeps the edits that
 * pass its bars of held-out fixes and precision (vocabulary-bundles.ts), from the strictest bar to the
 * loosest; the gate judges each on anchors and shadow. Built locally: one screening and one scoring each.
 */
async function localBundles(round: KeywordRulesRound, room: number): Promise<Candidate[]> {
  const { context, settings, rules, evidence } = round;
  const past = context.history.map((entry) => entry.delta);
  const bundles: Candidate[] = [];
  const ranked = round.screened
    .map((entry) => ({ ...entry, ...generalityOf(rules, evidence, entry) }))
    .sort(compareByGenerality);
  for (const bars of settings.bundleBars) {
    if (bundles.length >= room || round.budget <= 0 || round.screenings <= 0 || context.signal?.aborted === true) break;
    round.screenings -= 1;
    const built = buildVocabularyBundle(
      context.incumbentText,
      rules,
      evidence,
      ranked,
      bars,
      context.limits.maxArtifactCharacters,
    );
    if (built === null) continue;
    const delta = changeText(lineChanges(context.incumbentText, built.text));
    if (
      context.triedHashes.has(contentHash(built.text)) ||
      round.pastDeltas.has(delta) ||
      tooClose(delta, [...past, ...bundles.map((bundle) => bundle.delta)], settings.minDeltaDistance)
    )
      continue;
    round.budget -= 1;
    const score = await context.evaluateOptimization(built.text);
    const outcome = compare(
      round.incumbentScores,
      compositesById(score.examples as unknown as readonly RoutingScoreRecord[]),
    );
    if (outcome.netFixes < settings.minNetFixes) continue;
    bundles.push(bundleCandidate(built.text, delta, built.edits, outcome, bars));
  }
  return bundles;
}

/** Bundles without local routing: each step of a bundle is scored by the evaluator (at most MAX_BUNDLE_STEPS a bundle, at most 3 bundles). */
async function evaluatedBundles(
  round: KeywordRulesRound,
  kept: readonly Evaluated[],
  room: number,
): Promise<Candidate[]> {
  const { context, rules, evidence } = round;
  const bundles: Candidate[] = [];
  const ranked = kept
    .filter((entry) => entry.broken === 0)
    .map((entry) => ({ ...entry, ...generalityOf(rules, evidence, entry) }))
    .filter((entry) => !entry.overrides && entry.heldOutFixes >= 1)
    .sort(compareByGenerality);
  for (let skip = 0; skip < Math.min(3, ranked.length - 1) && bundles.length < room; skip += 1) {
    const { bundle, scorings } = await bundleEdits(
      ranked.slice(skip),
      context,
      round.incumbentScores,
      Math.min(MAX_BUNDLE_STEPS, round.budget),
      round.pastDeltas,
    );
    round.budget -= scorings;
    if (bundle !== null && !bundles.some((other) => other.text === bundle.text)) bundles.push(bundle);
  }
  return bundles;
}
