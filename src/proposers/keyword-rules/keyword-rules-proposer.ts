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
import type { Proposer } from '../proposer.ts';
import { proposeKeywordRules, type KeywordRulesSettings } from './keyword-rules-round.ts';
import type { BundleBars } from './vocabulary-bundles.ts';

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
  const settings: KeywordRulesSettings = {
    maxEvaluations,
    maxScreened: Math.max(0, options.maxScreened ?? DEFAULT_KEYWORD_RULES_MAX_SCREENED),
    minNetFixes: Math.max(1, options.minNetFixes ?? 1),
    // Single edits first: all of the budget up to 40, beyond that room is left for the scores and the bundles, which take what the singles left.
    maxSingleEvaluations: Math.min(maxEvaluations, Math.max(SINGLE_EVALUATIONS, maxEvaluations - BUNDLE_RESERVE)),
    minDeltaDistance: options.minDeltaDistance ?? 0.2,
    learnScores: options.learnScores ?? true,
    localScreening: options.localScreening,
    artifactFile: options.artifactFile,
    maxTermsPerExample: options.maxTermsPerExample,
    minTermPrecision: options.minTermPrecision,
    bundleBars: BUNDLE_BARS,
  };
  return {
    id: KEYWORD_RULES_PROPOSER_ID,
    budget: {
      setting: 'proposer.maxEvaluations',
      value: maxEvaluations,
      defaultValue: DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS,
    },
    propose: (context) => proposeKeywordRules(settings, context),
  };
}
