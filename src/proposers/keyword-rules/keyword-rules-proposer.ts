/**
 * The keyword-rules proposer: the offline error-driven proposer for a
 * routing-rules artifact (`executor: { kind: routing-rules }` with
 * `proposer: { kind: error-driven }`), in the tradition of
 * transformation-based learning (Brill 1995) like the intent playbook's
 * proposer: read the misrouted optimization examples, generate small single
 * edits from them (`edit-candidates.ts`), screen them locally by re-routing
 * the optimization examples, score the best with the frozen evaluator
 * (`context.evaluateOptimization`, at most `maxEvaluations` per round), and
 * rank by net fixes (examples whose score rose minus examples whose score
 * fell).
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
import { textOfInput } from '../../tasks/text-input.ts';
import type { Candidate, ProposalContext, ProposalFailure, ProposalResult, Proposer } from '../proposer.ts';
import {
  compareEdits,
  evidenceOf,
  generateRoutingEdits,
  screenRoutingEdits,
  type GeneratedEdit,
  type RoutingEvidence,
} from './edit-candidates.ts';
import { applyEditToText, describeEdit } from './rules-edit.ts';

/** Implementation id, stored with each experiment. */
export const KEYWORD_RULES_PROPOSER_ID = 'keyword-rules@1';

/** Default `maxEvaluations` of the keyword-rules proposer: 40 single edits and 36 bundle steps per round. */
export const DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS = 76;
/** Default `maxScreened` of the keyword-rules proposer. */
export const DEFAULT_KEYWORD_RULES_MAX_SCREENED = 5000;
/** Single edits that may always use the whole budget (up to this many). */
const SINGLE_EVALUATIONS = 40;
/** Evaluations per round kept for bundles beyond the first 40 (3 bundles of at most 12 steps). */
const BUNDLE_RESERVE = 36;
/** Most steps (evaluations) of one bundle. */
const MAX_BUNDLE_STEPS = 12;

/** Settings of {@link createKeywordRulesProposer}. */
export interface KeywordRulesProposerOptions {
  /**
   * Most candidate texts scored with `evaluateOptimization` per round, single
   * edits and bundle steps together (default {@link DEFAULT_KEYWORD_RULES_MAX_EVALUATIONS}, 76:
   * up to 40 single edits and 36 bundle steps). Single edits take at most
   * `max(40, maxEvaluations − 36)` of them (all of them up to 40); bundles (at
   * most 3, at most 12 steps each) take what is left. 0: the proposer scores nothing
   * itself and returns its best locally screened edits (ranked by local net
   * fixes), or without local screening the first edits generated; the gate
   * evaluates them as it does every candidate.
   */
  maxEvaluations?: number;
  /**
   * Most edits screened locally per round (default {@link DEFAULT_KEYWORD_RULES_MAX_SCREENED}, 5000).
   * 0: no local screening: the edits go to `evaluateOptimization` in
   * generation order (up to `maxEvaluations`), as with `localScreening: false`.
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
  /** Most new terms read from one misrouted example, per kind (default 8). */
  maxTermsPerExample?: number;
  /** Smallest share of the gold queue among the optimization examples containing a new term (default 0.5). */
  minTermPrecision?: number;
}

/** An optimization example as this proposer reads it (a structural subset of the engine's example). */
interface RoutingExample {
  id: string;
  partition?: string;
  text?: unknown;
  input?: unknown;
  goal?: unknown;
  expected?: unknown;
}

/** A score record as this proposer reads it. */
interface RoutingScoreRecord {
  exampleId: string;
  valid: boolean;
  composite?: number;
  diagnostics?: { expected?: unknown; predicted?: unknown };
}

interface Evaluated extends GeneratedEdit {
  text: string;
  delta: string;
  fixed: number;
  broken: number;
  netFixes: number;
  fixedIds: Set<string>;
}

const EPSILON = 1e-9;

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
  // Single edits first: all of the budget up to 40, beyond that room is left for the bundles (36 steps), which take what the singles left.
  const maxSingleEvaluations = Math.min(maxEvaluations, Math.max(SINGLE_EVALUATIONS, maxEvaluations - BUNDLE_RESERVE));
  return {
    id: KEYWORD_RULES_PROPOSER_ID,
    async propose(context: ProposalContext): Promise<ProposalResult> {
      const failures: ProposalFailure[] = [];
      if (context.incumbentScores.partition !== 'optimization') {
        return { candidates: [], failures: [{ reason: `incumbent scores are for partition "${context.incumbentScores.partition}", not "optimization"` }] };
      }
      const parsed = safeParseRoutingRules(context.incumbentText);
      if (!parsed.ok) return { candidates: [], failures: [{ code: 'invalid_incumbent', reason: `the incumbent rules do not parse: ${parsed.error.message}` }] };
      const editable = context.limits.editableSections;
      if (editable.length > 0 && !editable.includes('rules')) {
        return { candidates: [], failures: [{ code: 'frozen_section', reason: 'the program does not let the "rules" section change (editableSections)' }] };
      }
      if (context.maxCandidates <= 0) return { candidates: [], failures };
      const rules = parsed.rules;

      // The incumbent's outcome per example, from its recorded diagnostics (first valid repeat).
      const records = context.incumbentScores.examples as unknown as readonly RoutingScoreRecord[];
      const recorded = new Map<string, { expected: string; predicted: string }>();
      for (const record of records) {
        if (!record.valid || recorded.has(record.exampleId)) continue;
        const { expected, predicted } = record.diagnostics ?? {};
        if (typeof expected === 'string' && typeof predicted === 'string') recorded.set(record.exampleId, { expected, predicted });
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
      if (evidence.every((item) => recorded.get(item.id)!.predicted === item.expected)) return { candidates: [], failures };
      // maxScreened 0 screens nothing: the edits go to the evaluator unscreened.
      const localScreening = maxScreened > 0 && (options.localScreening ?? disagreements === 0);

      const generated = generateRoutingEdits(rules, evidence, {
        ...(options.maxTermsPerExample !== undefined ? { maxTermsPerExample: options.maxTermsPerExample } : {}),
        ...(options.minTermPrecision !== undefined ? { minTermPrecision: options.minTermPrecision } : {}),
      });
      const ordered: GeneratedEdit[] = localScreening
        ? screenRoutingEdits(rules, evidence, generated, maxScreened)
            .filter((entry) => entry.netFixes >= minNetFixes)
            .sort(compareEdits)
        : generated;

      // The frozen evaluator decides; never a text tried before, never a delta an earlier experiment had.
      const pastDeltas = new Set(context.history.map((entry) => entry.delta));
      const incumbentScores = compositesById(records);
      const seen = new Set<string>();
      if (maxEvaluations === 0) return { candidates: unscored(ordered, context, pastDeltas, localScreening), failures };
      const evaluated: Evaluated[] = [];
      let evaluations = 0;
      for (const entry of ordered) {
        if (evaluations >= maxSingleEvaluations || context.signal?.aborted === true) break;
        const text = applyEditToText(context.incumbentText, entry.edit);
        if (text === null || [...text].length > context.limits.maxArtifactCharacters) continue;
        const hash = contentHash(text);
        const delta = changeText(lineChanges(context.incumbentText, text));
        if (context.triedHashes.has(hash) || seen.has(hash) || pastDeltas.has(delta)) continue;
        seen.add(hash);
        evaluations += 1;
        const score = await context.evaluateOptimization(text);
        evaluated.push({ ...entry, text, delta, ...compare(incumbentScores, compositesById(score.examples as unknown as readonly RoutingScoreRecord[])) });
      }
      const kept = evaluated.filter((entry) => entry.netFixes >= minNetFixes).sort(compareEdits);
      const singles = selectDiverse(kept, context.maxCandidates).map((entry) => toCandidate(entry, evaluations));
      // A bundle: the kept edits that break nothing, applied one after another while each adds fixes and
      // breaks nothing. One edit fixing 3 of 44 cannot reach significance on its own (McNemar: p = 0.125);
      // edits that each fix a few, together, can — and the gate still judges the bundle on anchors and shadow.
      // Several bundles, each leaving out the edits ranked above it: the broadest edit often fixes most here and
      // breaks what the proposer cannot see (anchors, shadow); a bundle without it may generalize better.
      const clean = kept.filter((entry) => entry.broken === 0);
      const bundles: Candidate[] = [];
      let bundleBudget = maxEvaluations - evaluations;
      for (let skip = 0; skip < Math.min(3, clean.length - 1) && bundles.length < context.maxCandidates - 1; skip += 1) {
        const { bundle, scorings } = await bundleEdits(clean.slice(skip), context, incumbentScores, Math.min(MAX_BUNDLE_STEPS, bundleBudget), pastDeltas);
        bundleBudget -= scorings;
        if (bundle !== null && !bundles.some((other) => other.text === bundle.text)) bundles.push(bundle);
      }
      const candidates = [...bundles, ...singles].slice(0, context.maxCandidates);
      return { candidates, failures };
    },
  };
}

/**
 * Applies `ranked` edits one after another to the incumbent, keeping each
 * that adds fixes and breaks nothing on the optimization partition (each
 * kept step scored with the frozen evaluator, at most `budget` scorings).
 * Null when fewer than two edits survive (the singles say the same), or the
 * bundle was tried before.
 */
async function bundleEdits(
  ranked: readonly Evaluated[],
  context: ProposalContext,
  incumbentScores: Map<string, number | null>,
  budget: number,
  pastDeltas: ReadonlySet<string>,
): Promise<{ bundle: Candidate | null; scorings: number }> {
  if (ranked.length < 2 || budget <= 0) return { bundle: null, scorings: 0 };
  let text = ranked[0]!.text;
  let edits: Evaluated[] = [ranked[0]!];
  let best = { fixed: ranked[0]!.fixed, broken: ranked[0]!.broken };
  let scorings = 0;
  for (const entry of ranked.slice(1)) {
    if (scorings >= budget || context.signal?.aborted === true) break;
    const next = applyEditToText(text, entry.edit);
    if (next === null || next === text || [...next].length > context.limits.maxArtifactCharacters) continue;
    scorings += 1;
    const score = await context.evaluateOptimization(next);
    const outcome = compare(incumbentScores, compositesById(score.examples as unknown as readonly RoutingScoreRecord[]));
    if (outcome.fixed > best.fixed && outcome.broken <= best.broken) {
      text = next;
      edits = [...edits, entry];
      best = { fixed: outcome.fixed, broken: outcome.broken };
    }
  }
  if (edits.length < 2) return { bundle: null, scorings };
  const delta = changeText(lineChanges(context.incumbentText, text));
  if (context.triedHashes.has(contentHash(text)) || pastDeltas.has(delta)) return { bundle: null, scorings };
  return {
    scorings,
    bundle: {
      text,
      delta,
      rationale:
        `${edits.length} edits together (${edits.map((entry) => describeEdit(entry.edit)).join('; ')}): route ${best.fixed} optimization example(s) right that were misrouted ` +
        `and misroute ${best.broken} that were right; each edit was kept only if it added fixes and broke nothing.`,
      expectedNetFixes: best.fixed - best.broken,
      rebase: (incumbentText: string): string | null => {
        let rebased: string | null = incumbentText;
        for (const entry of edits) rebased = rebased === null ? null : applyEditToText(rebased, entry.edit) ?? rebased;
        return rebased === incumbentText ? null : rebased;
      },
    },
  };
}

/**
 * The candidates of `maxEvaluations: 0`: the first `maxCandidates` edits of
 * `ordered` (ranked by local screening, or in generation order without it)
 * that apply, fit the length ceiling and were not tried, none scored.
 */
function unscored(ordered: readonly GeneratedEdit[], context: ProposalContext, pastDeltas: ReadonlySet<string>, screened: boolean): Candidate[] {
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  for (const entry of ordered) {
    if (candidates.length >= context.maxCandidates || context.signal?.aborted === true) break;
    const text = applyEditToText(context.incumbentText, entry.edit);
    if (text === null || [...text].length > context.limits.maxArtifactCharacters) continue;
    const hash = contentHash(text);
    const delta = changeText(lineChanges(context.incumbentText, text));
    if (context.triedHashes.has(hash) || seen.has(hash) || pastDeltas.has(delta)) continue;
    seen.add(hash);
    const local = 'netFixes' in entry ? (entry as GeneratedEdit & { fixed: number; broken: number; netFixes: number }) : undefined;
    const { edit } = entry;
    candidates.push({
      text,
      delta,
      rationale:
        local !== undefined && screened
          ? `${capitalize(describeEdit(edit))}: in local screening routes ${local.fixed} optimization example(s) right that were misrouted and misroutes ${local.broken} that were right (net ${local.netFixes}); not scored by the proposer (proposer.maxEvaluations 0).`
          : `${capitalize(describeEdit(edit))}: suggested by ${entry.sources.size} misrouted example(s); neither screened locally nor scored by the proposer (proposer.maxEvaluations 0).`,
      ...(local !== undefined && screened ? { expectedNetFixes: local.netFixes } : {}),
      rebase: (incumbentText: string): string | null => applyEditToText(incumbentText, edit),
    });
  }
  return candidates;
}

/** The text an example is routed on: its `text`, else its input's (a string, or text fields), else a legacy `goal`. */
function textOf(example: RoutingExample): string | undefined {
  if (typeof example.text === 'string') return example.text;
  const input = example.input;
  if (typeof input === 'string') return input;
  if (input !== null && typeof input === 'object' && Object.values(input).every((value) => typeof value === 'string')) {
    return textOfInput(input as Record<string, string>);
  }
  return typeof example.goal === 'string' ? example.goal : undefined;
}

function labelOf(expected: unknown): string | undefined {
  const label = (expected as { label?: unknown } | null | undefined)?.label;
  return typeof label === 'string' ? label : undefined;
}

/** Mean composite of each example over its valid repeats; null when no repeat was valid. */
function compositesById(records: readonly RoutingScoreRecord[]): Map<string, number | null> {
  const sums = new Map<string, { sum: number; valid: number }>();
  for (const record of records) {
    const entry = sums.get(record.exampleId) ?? { sum: 0, valid: 0 };
    if (record.valid && typeof record.composite === 'number') {
      entry.sum += record.composite;
      entry.valid += 1;
    }
    sums.set(record.exampleId, entry);
  }
  const result = new Map<string, number | null>();
  for (const [id, entry] of sums) result.set(id, entry.valid === 0 ? null : entry.sum / entry.valid);
  return result;
}

/** Examples whose score rose (a now-valid one counts) and fell (a now-invalid one counts) from `before` to `after`. */
function compare(before: Map<string, number | null>, after: Map<string, number | null>) {
  let fixed = 0;
  let broken = 0;
  const fixedIds = new Set<string>();
  for (const [id, old] of before) {
    const now = after.get(id) ?? null;
    if (old === null && now === null) continue;
    if (old === null || (now !== null && now > old + EPSILON)) {
      fixed += 1;
      fixedIds.add(id);
    } else if (now === null || now < old - EPSILON) broken += 1;
  }
  return { fixed, broken, netFixes: fixed - broken, fixedIds };
}

/** Top `limit` by rank, preferring first those that fix an example no better candidate already fixes. */
function selectDiverse(ranked: readonly Evaluated[], limit: number): Evaluated[] {
  const chosen: Evaluated[] = [];
  const covered = new Set<string>();
  for (const entry of ranked) {
    if (chosen.length >= limit) break;
    if ([...entry.fixedIds].some((id) => !covered.has(id))) {
      chosen.push(entry);
      for (const id of entry.fixedIds) covered.add(id);
    }
  }
  for (const entry of ranked) {
    if (chosen.length >= limit) break;
    if (!chosen.includes(entry)) chosen.push(entry);
  }
  return chosen.sort(compareEdits);
}

function toCandidate(entry: Evaluated, evaluations: number): Candidate {
  const { edit } = entry;
  return {
    text: entry.text,
    delta: entry.delta,
    rationale:
      `${capitalize(describeEdit(edit))}: routes ${entry.fixed} optimization example(s) right that were misrouted and ` +
      `misroutes ${entry.broken} that were right (net ${entry.netFixes}); suggested by ${entry.sources.size} misrouted example(s); ` +
      `best of ${evaluations} single edits evaluated this round.`,
    expectedNetFixes: entry.netFixes,
    rebase: (incumbentText: string): string | null => applyEditToText(incumbentText, edit),
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
