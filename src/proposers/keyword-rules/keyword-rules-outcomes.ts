/**
 * What the keyword-rules proposer (./keyword-rules-proposer.ts) reads and
 * builds around its scorings: the examples and score records as it reads
 * them, the outcome of a candidate against the incumbent (fixed, broken, net
 * fixes), bundles built step by step with the evaluator, and the candidates
 * (single edits, learned scores, bundles) with their rationales and rebases.
 */
import { contentHash } from '../../artifact/content-hash.ts';
import { changeText, lineChanges } from '../../artifact/three-way-merge.ts';
import { textOfInput } from '../../tasks/text-input.ts';
import type { Candidate, ProposalContext } from '../proposer.ts';
import type { GeneratedEdit } from './edit-candidates.ts';
import { applyEditToText, applyEditsToText, describeEdit, type RoutingRuleEdit } from './rules-edit.ts';
import type { BundleBars } from './vocabulary-bundles.ts';
import { SCORE_FOLDS, type ChosenScores } from './learn-scores.ts';
import { bigramJaccardDistance } from '../../stats/bigram-jaccard-distance.ts';

/** An optimization example as this proposer reads it (a structural subset of the engine's example). */
export interface RoutingExample {
  id: string;
  partition?: string;
  text?: unknown;
  input?: unknown;
  goal?: unknown;
  expected?: unknown;
}

/** A score record as this proposer reads it. */
export interface RoutingScoreRecord {
  exampleId: string;
  valid: boolean;
  composite?: number;
  diagnostics?: { expected?: unknown; predicted?: unknown };
}

export interface Evaluated extends GeneratedEdit {
  text: string;
  delta: string;
  fixed: number;
  broken: number;
  netFixes: number;
  fixedIds: Set<string>;
}

const EPSILON = 1e-9;

/**
 * Applies `ranked` edits one after another to the incumbent, keeping each
 * that adds fixes and breaks nothing on the optimization partition (each
 * kept step scored with the frozen evaluator, at most `budget` scorings).
 * Null when fewer than two edits survive (the singles say the same), or the
 * bundle was tried before.
 */
export async function bundleEdits(
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
    const outcome = compare(
      incumbentScores,
      compositesById(score.examples as unknown as readonly RoutingScoreRecord[]),
    );
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
      rebase: (incumbentText: string): string | null =>
        rebaseEdits(
          incumbentText,
          edits.map((entry) => entry.edit),
        ),
    },
  };
}

/** A bundle built locally, as a candidate: its rationale lists the edits and the bars they passed. */
export function bundleCandidate(
  text: string,
  delta: string,
  edits: readonly RoutingRuleEdit[],
  outcome: { fixed: number; broken: number; netFixes: number },
  bars: BundleBars,
): Candidate {
  return {
    text,
    delta,
    rationale:
      `${edits.length} edits together (${edits.map((edit) => describeEdit(edit)).join('; ')}): route ${outcome.fixed} optimization example(s) right that were misrouted ` +
      `and misroute ${outcome.broken} that were right. Each edit fixes at least ${bars.minHeldOutFixes} example(s) besides the one it was read from, ` +
      `its term's smoothed precision on optimization is at least ${bars.minPrecision}, it takes no term from another queue's rule, ` +
      `and it was kept only if it added fixes and broke nothing.`,
    expectedNetFixes: outcome.netFixes,
    rebase: (incumbentText: string): string | null => rebaseEdits(incumbentText, edits),
  };
}

/**
 * A bundle's edits on a newer incumbent: all at once when every one still
 * applies, else one after another, leaving out those that no longer apply.
 * Null when none applies.
 */
export function rebaseEdits(incumbentText: string, edits: readonly RoutingRuleEdit[]): string | null {
  const all = applyEditsToText(incumbentText, edits);
  if (all !== null) return all;
  let rebased = incumbentText;
  for (const edit of edits) rebased = applyEditToText(rebased, edit) ?? rebased;
  return rebased === incumbentText ? null : rebased;
}

/** Learned scores, as a candidate: the rationale gives the settings and the cross-validation that chose them. */
export function scoresCandidate(
  text: string,
  delta: string,
  edit: RoutingRuleEdit & { kind: 'setScores' },
  outcome: { fixed: number; broken: number; netFixes: number },
  chosen: ChosenScores,
  examples: number,
): Candidate {
  const { settings, fixed, broken, misrouted } = chosen.chosen;
  return {
    text,
    delta,
    rationale:
      `${capitalize(describeEdit(edit))}, learned from the ${examples} optimization example(s): a term scores for a queue when it occurs in at least ` +
      `${settings.minCount} of its examples and at least twice as often as elsewhere (weight = rounded log2 of that ratio, at most ${settings.maxWeight}), ` +
      `the ${settings.termsPerQueue} strongest per queue. Chosen among ${chosen.tried.length} settings by ${SCORE_FOLDS}-fold cross-validation on optimization ` +
      `(one-standard-error rule): held out, the scores route ${fixed} of ${misrouted} misrouted example(s) right and ${broken} right one(s) wrong. ` +
      `On the whole partition: ${outcome.fixed} fixed, ${outcome.broken} broken.`,
    expectedNetFixes: outcome.netFixes,
    rebase: (incumbentText: string): string | null => applyEditToText(incumbentText, edit),
  };
}

/** True when `delta` is within `minDistance` (bigram Jaccard distance) of one of `others`. */
export function tooClose(delta: string, others: readonly string[], minDistance: number): boolean {
  return others.some((other) => bigramJaccardDistance(other, delta) < minDistance);
}

/**
 * The candidates of `maxEvaluations: 0`: the first `maxCandidates` edits of
 * `ordered` (ranked by local screening, or in generation order without it)
 * that apply, fit the length ceiling and were not tried, none scored.
 */
export function unscored(
  ordered: readonly GeneratedEdit[],
  context: ProposalContext,
  pastDeltas: ReadonlySet<string>,
  screened: boolean,
): Candidate[] {
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
    const local =
      'netFixes' in entry ? (entry as GeneratedEdit & { fixed: number; broken: number; netFixes: number }) : undefined;
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
export function textOf(example: RoutingExample): string | undefined {
  if (typeof example.text === 'string') return example.text;
  const input = example.input;
  if (typeof input === 'string') return input;
  if (input !== null && typeof input === 'object' && Object.values(input).every((value) => typeof value === 'string')) {
    return textOfInput(input as Record<string, string>);
  }
  return typeof example.goal === 'string' ? example.goal : undefined;
}

export function labelOf(expected: unknown): string | undefined {
  const label = (expected as { label?: unknown } | null | undefined)?.label;
  return typeof label === 'string' ? label : undefined;
}

/** Mean composite of each example over its valid repeats; null when no repeat was valid. */
export function compositesById(records: readonly RoutingScoreRecord[]): Map<string, number | null> {
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
export function compare(before: Map<string, number | null>, after: Map<string, number | null>) {
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

export function toCandidate(entry: Evaluated, evaluations: number): Candidate {
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
