/**
 * Learning a routing-rules file's `scores` section (weighted terms per
 * queue, consulted when no rule matches) from the optimization examples,
 * and choosing how many terms to keep by k-fold cross-validation on the
 * optimization examples alone.
 *
 * A first-match rule needs one decisive word; a ticket whose words each say
 * a little ("card", "bank", "pay") falls through to the default. Weights add
 * such evidence up, as a naive Bayes classifier does (Maron 1961; Manning,
 * Raghavan and Schütze 2008, ch. 13), in a form a person can read:
 *
 * - **terms**: the candidate terms of the examples (`candidateTerms`:
 *   content words, their prefix forms, short phrases);
 * - **weight** of term t for queue q: the log-2 ratio of the share of q's
 *   examples that contain t to the share of the other examples that do,
 *   each with half an example added (Jeffreys' prior), rounded, at most
 *   `maxWeight`; only weights of 1 or more are kept, so a term scores only
 *   for the queues whose examples it marks at least twice as often;
 * - **support**: a term must occur in at least `minCount` examples of the
 *   queue (a word of one ticket is that ticket's wording);
 * - **size**: the `termsPerQueue` terms of each queue with the highest
 *   weight × support; another form of a word kept before it (`monthly`
 *   after `month*`, `my account` after `account*`) that occurs only in
 *   examples the kept one occurs in would count the same evidence twice and
 *   is left out.
 *
 * {@link chooseScores} tries a small grid of `minCount` × `termsPerQueue`:
 * for each it learns the scores on k − 1 folds of the optimization examples
 * (folds by the SHA-256 of the example id, so the same examples always fall
 * in the same fold), routes the held-out fold with the incumbent rules plus
 * those scores, and counts the held-out examples fixed and broken against
 * the incumbent. Of the settings whose held-out net fixes are within one
 * standard error of the best's, the one with the fewest terms wins (the
 * one-standard-error rule: the simplest model the data cannot tell from the
 * best); its scores are then learned on every optimization example.
 * The held-out estimate is what the candidate's rationale reports; the gate
 * still judges it on anchors and shadow, which the proposer never sees.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { routeText } from '../../executors/routing-rules/route-text.ts';
import type { RoutingRules, RoutingScore } from '../../executors/routing-rules/routing-rules.ts';
import { routingQueues } from '../../executors/routing-rules/routing-rules.ts';
import { examplesMatching, type RoutingEvidence } from './edit-candidates.ts';

/** How a `scores` section is learned (see the module comment). */
export interface ScoreLearningSettings {
  /** Fewest examples of the queue a term must occur in (≥ 1). */
  minCount: number;
  /** Most terms kept per queue. */
  termsPerQueue: number;
  /** Largest weight (≥ 1). */
  maxWeight: number;
}

/** The settings {@link chooseScores} tries, in order (a tie keeps the earlier, smaller one). */
export const SCORE_SETTINGS_GRID: readonly ScoreLearningSettings[] = [10, 20, 30].flatMap((termsPerQueue) =>
  [3, 2].map((minCount) => ({ minCount, termsPerQueue, maxWeight: 3 })),
);

/** Folds of the cross-validation. */
export const SCORE_FOLDS = 5;

/** Which examples each candidate term matches: computed once per set of examples, shared by every fold and setting. */
export interface TermIndex {
  /** The examples, in order. */
  evidence: readonly RoutingEvidence[];
  /** Candidate term → indices of the examples whose text it matches (ascending). */
  matches: ReadonlyMap<string, readonly number[]>;
}

/**
 * Indexes the candidate terms of `evidence` (every term of every example,
 * matched against every example). A whole word whose prefix form is a
 * candidate too (`account` beside `account*`) is left out: the prefix form
 * matches every text the word does, so the two would count one piece of
 * evidence twice.
 */
export function indexTerms(evidence: readonly RoutingEvidence[]): TermIndex {
  const all = new Set(evidence.flatMap((example) => example.terms));
  const matches = new Map<string, readonly number[]>();
  for (const example of evidence) {
    for (const term of example.terms) {
      if (matches.has(term) || all.has(`${term}*`)) continue;
      matches.set(term, examplesMatching(evidence, term));
    }
  }
  return { evidence, matches };
}

/**
 * Learns a `scores` section from the examples at `members` (indices into
 * `index.evidence`; default all), as the module comment describes.
 *
 * @param queues the queues, in the order entries are written
 * @returns entries by queue (in `queues` order), then by weight (highest
 *   first), terms in alphabetical order; empty when no term qualifies
 */
export function learnScores(
  index: TermIndex,
  queues: readonly string[],
  settings: ScoreLearningSettings,
  members: readonly number[] = index.evidence.map((_, position) => position),
): RoutingScore[] {
  const inMembers = new Uint8Array(index.evidence.length);
  for (const member of members) inMembers[member] = 1;
  const perQueue = new Map<string, number>();
  for (const member of members) {
    const queue = index.evidence[member]!.expected;
    perQueue.set(queue, (perQueue.get(queue) ?? 0) + 1);
  }
  const total = members.length;
  const candidates = new Map<
    string,
    Array<{ term: string; weight: number; support: number; documents: readonly number[] }>
  >();
  for (const [term, found] of index.matches) {
    const counts = new Map<string, number>();
    let occurrences = 0;
    const documents: number[] = [];
    for (const position of found) {
      if (inMembers[position] === 0) continue;
      occurrences += 1;
      documents.push(position);
      const queue = index.evidence[position]!.expected;
      counts.set(queue, (counts.get(queue) ?? 0) + 1);
    }
    for (const [queue, count] of counts) {
      if (count < settings.minCount || !queues.includes(queue)) continue;
      const inQueue = perQueue.get(queue) ?? 0;
      const shareIn = (count + 0.5) / (inQueue + 1);
      const shareOut = (occurrences - count + 0.5) / (total - inQueue + 1);
      const weight = Math.min(settings.maxWeight, Math.round(Math.log2(shareIn / shareOut)));
      if (weight < 1) continue;
      const list = candidates.get(queue) ?? [];
      list.push({ term, weight, support: count, documents });
      candidates.set(queue, list);
    }
  }
  const scores: RoutingScore[] = [];
  for (const queue of queues) {
    const ranked = (candidates.get(queue) ?? []).sort(
      (a, b) =>
        b.weight * b.support - a.weight * a.support ||
        b.support - a.support ||
        a.term.length - b.term.length ||
        compareText(a.term, b.term),
    );
    const kept: typeof ranked = [];
    const keptSets: Array<Set<number>> = [];
    for (const entry of ranked) {
      if (kept.length >= settings.termsPerQueue) break;
      // A form of a word kept before it (`monthly` after `month*`, `my account` after `account*`) that never
      // occurs without it only counts the same evidence twice.
      const duplicate = kept.some(
        (other, position) =>
          related(entry.term, other.term) && entry.documents.every((document) => keptSets[position]!.has(document)),
      );
      if (duplicate) continue;
      kept.push(entry);
      keptSets.push(new Set(entry.documents));
    }
    for (let weight = settings.maxWeight; weight >= 1; weight -= 1) {
      const terms = kept
        .filter((entry) => entry.weight === weight)
        .map((entry) => entry.term)
        .sort(compareText);
      if (terms.length > 0) scores.push({ queue, weight, terms });
    }
  }
  return scores;
}

/** The held-out outcome of one setting. */
export interface HeldOutOutcome {
  settings: ScoreLearningSettings;
  /** Held-out examples the incumbent misroutes and the learned scores route right. */
  fixed: number;
  /** Held-out examples the incumbent routes right and the learned scores misroute. */
  broken: number;
  /** Held-out examples the incumbent misroutes. */
  misrouted: number;
  /** Examples held out in all (every example, once). */
  examples: number;
  /** Mean number of terms learned per fold. */
  meanTerms: number;
}

/** The scores {@link chooseScores} learned, with the cross-validation that chose their settings. */
export interface ChosenScores {
  /** Learned on every optimization example with the chosen settings. */
  scores: RoutingScore[];
  /** The chosen setting's held-out outcome. */
  chosen: HeldOutOutcome;
  /** Every setting tried, in grid order. */
  tried: HeldOutOutcome[];
}

/**
 * Chooses the settings of the `scores` section by k-fold cross-validation
 * on the optimization examples and learns it on all of them (see the module
 * comment). The incumbent's own `scores` are replaced, never merged.
 *
 * @param rules the incumbent rules (their `rules` list routes first, as in the study)
 * @returns null when no setting has a held-out net fix above 0, or when no
 *   term qualifies on the whole partition
 */
export function chooseScores(
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  grid: readonly ScoreLearningSettings[] = SCORE_SETTINGS_GRID,
  folds = SCORE_FOLDS,
): ChosenScores | null {
  if (evidence.length < folds || grid.length === 0) return null;
  const queues = routingQueues(rules);
  const index = indexTerms(evidence);
  const foldOf = evidence.map((example) => createHash('sha256').update(example.id).digest().readUInt32BE(0) % folds);
  const rightBefore = evidence.map((example) => routeText(rules, example.text).label === example.expected);
  const fallsThrough = evidence.map((example) => routeText({ ...rules, scores: [] }, example.text).rule === null);
  const tried: HeldOutOutcome[] = grid.map((settings) => {
    let fixed = 0;
    let broken = 0;
    let terms = 0;
    for (let fold = 0; fold < folds; fold += 1) {
      const train = evidence.map((_, position) => position).filter((position) => foldOf[position] !== fold);
      const scores = learnScores(index, queues, settings, train);
      terms += scores.reduce((sum, entry) => sum + entry.terms.length, 0);
      const learned: RoutingRules = { ...rules, scores };
      evidence.forEach((example, position) => {
        if (foldOf[position] !== fold || !fallsThrough[position]) return;
        const right = routeText(learned, example.text).label === example.expected;
        if (right && !rightBefore[position]) fixed += 1;
        else if (!right && rightBefore[position]) broken += 1;
      });
    }
    return {
      settings,
      fixed,
      broken,
      misrouted: rightBefore.filter((right) => !right).length,
      examples: evidence.length,
      meanTerms: terms / folds,
    };
  });
  // The one-standard-error rule (Breiman, Friedman, Olshen and Stone 1984, §3.4.3; Hastie, Tibshirani and
  // Friedman 2009, §7.10): the smallest setting whose held-out net fixes are within one standard error of the
  // best's. The standard error is that of a sum of n per-example differences in {−1, 0, +1}.
  const net = (outcome: HeldOutOutcome) => outcome.fixed - outcome.broken;
  const top = tried.reduce<HeldOutOutcome | undefined>(
    (best, outcome) => (best === undefined || net(outcome) > net(best) ? outcome : best),
    undefined,
  );
  if (top === undefined || net(top) <= 0) return null;
  const n = top.examples;
  const meanDifference = net(top) / n;
  const standardError = Math.sqrt(n * Math.max(0, (top.fixed + top.broken) / n - meanDifference * meanDifference));
  const best = tried
    .filter((outcome) => net(outcome) > 0 && net(outcome) >= net(top) - standardError)
    .reduce((smallest, outcome) => (outcome.meanTerms < smallest.meanTerms ? outcome : smallest));
  const scores = learnScores(index, queues, best.settings);
  return scores.length === 0 ? null : { scores, chosen: best, tried };
}

/** True when a word of one term starts with a word of the other (`monthly` and `month*`; `my account` and `account*`). */
function related(a: string, b: string): boolean {
  const words = (term: string) =>
    term
      .replace(/\*$/, '')
      .split(' ')
      .filter((word) => word.length >= 3);
  const left = words(a);
  const right = words(b);
  return left.some((x) => right.some((y) => x.startsWith(y) || y.startsWith(x)));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
