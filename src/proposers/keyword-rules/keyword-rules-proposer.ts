/**
 * The keyword-rules proposer: the offline error-driven proposer for a
 * routing-rules artifact (`executor: { kind: routing-rules }` with
 * `proposer: { kind: error-driven }`). Each round it returns, best kind
 * first, up to `context.maxCandidates` of:
 *
 * 1. **learned scores** (`learn-scores.ts`): a `scores` section of weighted
 *    terms learned from every optimization example, its size chosen by
 *    k-fold cross-validation on the optimization examples; only when the
 *    study routes as `routeText` does (local screening), `learnScores` is on
 *    and the program lets `scores` change;
 * 2. **keyword bundles** (`vocabulary-bundles.ts`): single edits that each
 *    fix an example besides the one they were read from, pass a precision
 *    bar and break nothing, applied together (one bundle per bar, strictest
 *    first, near-duplicates left out);
 * 3. **single edits**, in the tradition of transformation-based learning
 *    (Brill 1995) like the intent playbook's proposer: generated from the
 *    misrouted optimization examples (`edit-candidates.ts`), screened locally
 *    by re-routing the optimization examples, the best scored with the
 *    frozen evaluator (`context.evaluateOptimization`, at most
 *    `maxEvaluations` per round) and ranked by net fixes (examples whose
 *    score rose minus examples whose score fell).
 *
 * Every candidate returned was scored with the frozen evaluator and has at
 * least `minNetFixes` net fixes on optimization.
 *
 * It reads only its {@link ProposalContext}: the optimization examples and
 * the incumbent's scores on them. An example is read as
 * `{ id, text?, input?, expected: { label } }` and a score record's
 * diagnostics as `{ expected, predicted }` (the classification task's).
 * Candidates already tried (`context.triedHashes`, the SHA-256 of the text)
 * or whose delta an earlier experiment had are never returned.
 *
 * @example
 * ```ts
 * const proposer = createKeywordRulesProposer({ maxEvaluations: 20 });
 * const { candidates } = await proposer.propose(context);
 * candidates[0]?.delta; // '- any: [invoice, billing]\n+ any: [invoice, billing, charged]'
 * ```
 *
 * @module
 */
import { contentHash } from '../../artifact/content-hash.ts';
import { changeText, lineChanges } from '../../artifact/three-way-merge.ts';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import { safeParseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import type { Candidate, ProposalContext, ProposalFailure, ProposalResult, Proposer } from '../proposer.ts';
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

/** Implementation id, stored with each experiment. */
export const KEYWORD_RULES_PROPOSER_ID = 'keyword-rules@2';

/** Default `maxEvaluations` of the keyword-rules proposer: 40 single edits, and 36 for the learned scores and the bundles, per round. */
export const DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS = 76;
/** Default `maxScreened` of the keyword-rules proposer. */
export const DEFAULT_KEYWORD_RULES_MAX_SCREENED = 5000;
/** Single edits that may always use the whole budget (up to this many). */
const SINGLE_EVALUATIONS = 40;
/** Evaluations per round kept beyond the first 40 for the learned scores and the bundles (3 bundles of at most 12 steps without local routing). */
const BUNDLE_RESERVE = 36;
/** Most steps (evaluations) of one bundle. */
const MAX_BUNDLE_STEPS = 12;

/** Settings of {@link createKeywordRulesProposer}. */
export interface KeywordRulesProposerOptions {
  /**
   * Most candidate texts scored with `evaluateOptimization` per round, single
   * edits, learned scores and bundles together (default {@link DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS}, 76:
   * up to 40 single edits and 36 for the rest). Single edits take at most
   * `max(40, maxEvaluations − 36)` of them (all of them up to 40); the learned
   * scores (one scoring), then the bundles take what is left: one scoring a
   * bundle built locally (at most 4), else one a step (at most 3 bundles of
   * 12 steps). 0: the proposer scores nothing itself and returns its best
   * locally screened single edits (ranked by local net fixes), or without
   * local screening the first edits generated, and neither scores nor
   * bundles; the gate evaluates them as it does every candidate.
   */
  maxEvaluations?: number;
  /**
   * Most candidates screened locally per round (default {@link DEFAULT_KEYWORD_RULES_MAX_SCREENED}, 5000):
   * single edits first, then the learned scores and each bundle (one each) in
   * what the single edits left. 0: no local screening: the edits go to
   * `evaluateOptimization` in generation order (up to `maxEvaluations`), as
   * with `localScreening: false`, and neither scores nor local bundles are built.
   */
  maxScreened?: number;
  /**
   * Screen edits locally before the official evaluation (default: on when
   * the local routing of the incumbent agrees with its recorded predictions,
   * i.e. the study's executor is the routing-rules one). Off: the generated
   * edits are evaluated in generation order, up to `maxEvaluations`.
   */
  localScreening?: boolean;
  /** Smallest net fixes a candidate needs to be returned (default 1; never below 1). */
  minNetFixes?: number;
  /** The artifact's file name, for messages (e.g. `rules.json`). Default `rules.yaml`. */
  artifactFile?: string;
  /** Most new terms read from one misrouted example, per kind (default 8). */
  maxTermsPerExample?: number;
  /** Smallest share of the gold queue among the optimization examples containing a new term (default 0.5). */
  minTermPrecision?: number;
  /**
   * Smallest bigram Jaccard distance of a bundle's delta from every delta
   * tried before and from the round's other bundles (default 0.2, the gate's
   * `minDeltaDistance` default): a closer one would be skipped as a
   * near-duplicate before evaluation, so the proposer does not spend a slot
   * on it.
   */
  minDeltaDistance?: number;
  /**
   * Propose a learned `scores` section (format version 2, see
   * `learn-scores.ts`) when the program lets it change (default true). Off
   * for an executor that routes by format 1 only, such as the `command`
   * program `kloop init` writes.
   */
  learnScores?: boolean;
}

/**
 * The bars of the round's bundles, strictest first (see
 * `vocabulary-bundles.ts`): every edit in a bundle fixes at least one
 * optimization example it was not read from, and its term's smoothed
 * precision k / (n + 1) is at least the bar (0.75: three examples of three,
 * or six of seven; 0.66: two of two; 0.6: three of four; 0.5: one of one
 * never passes).
 */
export const BUNDLE_BARS: readonly BundleBars[] = [
  { minPrecision: 0.75, minHeldOutFixes: 1 },
  { minPrecision: 0.66, minHeldOutFixes: 1 },
  { minPrecision: 0.6, minHeldOutFixes: 1 },
  { minPrecision: 0.5, minHeldOutFixes: 1 },
];

/**
 * Creates the keyword-rules proposer (see the module comment).
 *
 * Failures (returned, never thrown): incumbent scores of another partition,
 * an incumbent that does not parse, a `rules` section that the program does
 * not let change.
 */
export function createKeywordRulesProposer(options: KeywordRulesProposerOptions = {}): Proposer {
  const maxEvaluations = Math.max(0, options.maxEvaluations ?? DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS);
  const maxScreened = Math.max(0, options.maxScreened ?? DEFAULT_KEYWORD_RULES_MAX_SCREENED);
  const minNetFixes = Math.max(1, options.minNetFixes ?? 1);
  // Single edits first: all of the budget up to 40, beyond that room is left for the scores and the bundles, which take what the singles left.
  const maxSingleEvaluations = Math.min(maxEvaluations, Math.max(SINGLE_EVALUATIONS, maxEvaluations - BUNDLE_RESERVE));
  const minDeltaDistance = options.minDeltaDistance ?? 0.2;
  const learnScoresOption = options.learnScores ?? true;
  const bundleBars = BUNDLE_BARS;
  return {
    id: KEYWORD_RULES_PROPOSER_ID,
    budget: {
      setting: 'proposer.maxEvaluations',
      value: maxEvaluations,
      defaultValue: DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS,
    },
    async propose(context: ProposalContext): Promise<ProposalResult> {
      const failures: ProposalFailure[] = [];
      if (context.incumbentScores.partition !== 'optimization') {
        return {
          candidates: [],
          failures: [
            { reason: `incumbent scores are for partition "${context.incumbentScores.partition}", not "optimization"` },
          ],
        };
      }
      const parsed = safeParseRoutingRules(context.incumbentText, options.artifactFile);
      if (!parsed.ok)
        return {
          candidates: [],
          failures: [
            {
              code: INVALID_INCUMBENT,
              reason: `the keyword-rules proposer cannot read ${options.artifactFile ?? 'the rules'} as a routing-rules file: ${parsed.error.message}`,
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
      if (context.maxCandidates <= 0) return { candidates: [], failures };
      const rules = parsed.rules;

      // The incumbent's outcome per example, from its recorded diagnostics (first valid repeat).
      const records = context.incumbentScores.examples as unknown as readonly RoutingScoreRecord[];
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
      if (evidence.every((item) => recorded.get(item.id)!.predicted === item.expected))
        return { candidates: [], failures };
      // maxScreened 0 screens nothing: the edits go to the evaluator unscreened.
      const localScreening = maxScreened > 0 && (options.localScreening ?? disagreements === 0);

      const generated = generateRoutingEdits(rules, evidence, {
        ...(options.maxTermsPerExample !== undefined ? { maxTermsPerExample: options.maxTermsPerExample } : {}),
        ...(options.minTermPrecision !== undefined ? { minTermPrecision: options.minTermPrecision } : {}),
      });
      const screened = localScreening ? screenRoutingEdits(rules, evidence, generated, maxScreened) : [];
      const ordered: GeneratedEdit[] = localScreening
        ? screened.filter((entry) => entry.netFixes >= minNetFixes).sort(compareEdits)
        : generated;

      // The frozen evaluator decides; never a text tried before, never a delta an earlier experiment had.
      const pastDeltas = new Set(context.history.map((entry) => entry.delta));
      const incumbentScores = compositesById(records);
      const seen = new Set<string>();
      if (maxEvaluations === 0) return { candidates: unscored(ordered, context, pastDeltas, localScreening), failures };
      // Which single edits are scored reads no score: they are chosen first and scored all at once (on every
      // evaluation worker, or up to the executor's concurrency), then compared in the order chosen.
      const chosen: Array<GeneratedEdit & { text: string; delta: string }> = [];
      for (const entry of ordered) {
        if (chosen.length >= maxSingleEvaluations || context.signal?.aborted === true) break;
        const text = applyEditToText(context.incumbentText, entry.edit);
        if (text === null || [...text].length > context.limits.maxArtifactCharacters) continue;
        const hash = contentHash(text);
        const delta = changeText(lineChanges(context.incumbentText, text));
        if (context.triedHashes.has(hash) || seen.has(hash) || pastDeltas.has(delta)) continue;
        seen.add(hash);
        chosen.push({ ...entry, text, delta });
      }
      const evaluations = chosen.length;
      const scores = await scoreAll(
        context,
        chosen.map((entry) => entry.text),
      );
      const evaluated: Evaluated[] = chosen.map((entry, index) => ({
        ...entry,
        ...compare(
          incumbentScores,
          compositesById(scores[index]!.examples as unknown as readonly RoutingScoreRecord[]),
        ),
      }));
      const kept = evaluated.filter((entry) => entry.netFixes >= minNetFixes).sort(compareEdits);
      const singles = selectDiverse(kept, context.maxCandidates, compareEdits).map((entry) =>
        toCandidate(entry, evaluations),
      );

      const past = context.history.map((entry) => entry.delta);

      // Scores: weighted terms for what no rule matches, learned from every optimization example with
      // settings chosen by cross-validation on optimization (learn-scores.ts). Only when the study routes as
      // this proposer does (local screening) and the program lets the `scores` section change.
      // What the single edits left of the round's budget (maxEvaluations): one scoring for the scores, one per
      // local bundle, one per step of a bundle built without local routing.
      let budget = maxEvaluations - evaluations;
      // What the single edits left of maxScreened: the learned scores and each local bundle count as one candidate screened locally.
      let screenings = maxScreened - screened.length;
      const learned: Candidate[] = [];
      if (
        budget > 0 &&
        screenings > 0 &&
        learnScoresOption &&
        localScreening &&
        (editable.length === 0 || editable.includes('scores')) &&
        context.signal?.aborted !== true
      ) {
        screenings -= 1;
        const chosen = chooseScores(rules, evidence);
        const edit: RoutingRuleEdit | null = chosen === null ? null : { kind: 'setScores', scores: chosen.scores };
        const text = edit === null ? null : applyEditToText(context.incumbentText, edit);
        if (
          chosen !== null &&
          edit !== null &&
          text !== null &&
          [...text].length <= context.limits.maxArtifactCharacters
        ) {
          const delta = changeText(lineChanges(context.incumbentText, text));
          if (
            !context.triedHashes.has(contentHash(text)) &&
            !pastDeltas.has(delta) &&
            !tooClose(delta, past, minDeltaDistance)
          ) {
            budget -= 1;
            const score = await context.evaluateOptimization(text);
            const outcome = compare(
              incumbentScores,
              compositesById(score.examples as unknown as readonly RoutingScoreRecord[]),
            );
            if (outcome.netFixes >= minNetFixes)
              learned.push(scoresCandidate(text, delta, edit, outcome, chosen, evidence.length));
          }
        }
      }

      // Bundles. One edit fixing 3 of 44 cannot reach significance on its own (McNemar: p = 0.125); edits that
      // each fix a few, together, can — but only edits that generalize belong in one: the broadest words fix
      // most here and misroute what the proposer cannot see (anchors, shadow). Each bundle keeps the edits that
      // pass its bars of held-out fixes and precision (vocabulary-bundles.ts), from the strictest bar to the
      // loosest; the gate judges each on anchors and shadow.
      const bundles: Candidate[] = [];
      const room = Math.max(1, context.maxCandidates - learned.length - Math.min(1, singles.length));
      if (localScreening) {
        const ranked = screened
          .map((entry) => ({ ...entry, ...generalityOf(rules, evidence, entry) }))
          .sort(compareByGenerality);
        for (const bars of bundleBars) {
          if (bundles.length >= room || budget <= 0 || screenings <= 0 || context.signal?.aborted === true) break;
          screenings -= 1;
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
            pastDeltas.has(delta) ||
            tooClose(delta, [...past, ...bundles.map((bundle) => bundle.delta)], minDeltaDistance)
          )
            continue;
          budget -= 1;
          const score = await context.evaluateOptimization(built.text);
          const outcome = compare(
            incumbentScores,
            compositesById(score.examples as unknown as readonly RoutingScoreRecord[]),
          );
          if (outcome.netFixes < minNetFixes) continue;
          bundles.push(bundleCandidate(built.text, delta, built.edits, outcome, bars));
        }
      } else {
        // Without local routing, each step of a bundle is scored by the evaluator (at most MAX_BUNDLE_STEPS a bundle).
        const ranked = kept
          .filter((entry) => entry.broken === 0)
          .map((entry) => ({ ...entry, ...generalityOf(rules, evidence, entry) }))
          .filter((entry) => !entry.overrides && entry.heldOutFixes >= 1)
          .sort(compareByGenerality);
        for (let skip = 0; skip < Math.min(3, ranked.length - 1) && bundles.length < room; skip += 1) {
          const { bundle, scorings } = await bundleEdits(
            ranked.slice(skip),
            context,
            incumbentScores,
            Math.min(MAX_BUNDLE_STEPS, budget),
            pastDeltas,
          );
          budget -= scorings;
          if (bundle !== null && !bundles.some((other) => other.text === bundle.text)) bundles.push(bundle);
        }
      }
      const candidates = [...learned, ...bundles, ...singles].slice(0, context.maxCandidates);
      return { candidates, failures };
    },
  };
}
