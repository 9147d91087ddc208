/**
 * Routing a text with a routing-rules file: term matching and the
 * first-match-wins walk over the rules.
 *
 * Matching (format version 1):
 *
 * - A text and a term are both cut into *words*: maximal runs of Unicode
 *   letters and digits, after NFKC normalisation and lower-casing. Everything
 *   else (spaces, punctuation, apostrophes, hyphens) separates words, so
 *   "Can't log-in!!" has the words `can t log in`.
 * - A term matches when its words occur in the text consecutively: `log in`
 *   matches "log-in" and "Log  in", not "login" or "logging in"; `card`
 *   matches "card," but not "cardboard".
 * - A term ending with `*` matches its last word as a prefix: `refund*`
 *   matches "refunds" and "refunded"; `credit card*` matches "credit cards".
 * - A rule matches when at least one `any` term, every `all` term and no
 *   `none` term matches. The first matching rule in file order gives the
 *   label.
 * - When no rule matches (format version 2): every `scores` entry adds its
 *   weight to its queue once for each of its terms that matches; the queue
 *   with the highest total above 0 gives the label (a tie goes to the queue
 *   listed first in `queues`, else to the queue whose first entry comes
 *   first in the file).
 * - Otherwise the label is the file's `default`.
 *
 * @example
 * ```ts
 * const rules = parseRoutingRules('default: technical\nrules:\n  - {queue: billing, any: [charged twice]}\n');
 * routeText(rules, 'I was CHARGED, twice!').label; // 'billing'
 * routeText(rules, 'The app crashes').label; // 'technical' (the default; rule null, by 'default')
 * ```
 *
 * @module
 */
import type { RoutingRule, RoutingRules } from './routing-rules.ts';

/** A text cut into words once, for matching many terms against it. */
export interface PreparedText {
  /** The text's words joined by single spaces, with a space before and after (`" can t log in "`). */
  readonly words: string;
}

/** Where a text was routed. */
export interface RouteResult {
  /** The queue: the first matching rule's, else the best-scoring queue's, else the default. */
  label: string;
  /** The rule that matched (the very object of `rules.rules`), or null when the scores or the default answered. */
  rule: RoutingRule | null;
  /** What decided: a rule, the scores, or the default. */
  by: 'rule' | 'scores' | 'default';
  /** The queues' totals when no rule matched and the file has scores (queues with a total above 0 only); else null. */
  totals: Readonly<Record<string, number>> | null;
}

const WORD_SEPARATOR = /[^\p{L}\p{N}]+/u;

/** The words of a text or a term: NFKC, lower-case, split on anything that is not a letter or a digit. */
export function termWords(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(WORD_SEPARATOR)
    .filter((word) => word !== '');
}

/** Cuts a text into words for {@link termMatches}, {@link ruleMatches} and {@link routeText}. */
export function prepareText(text: string): PreparedText {
  const words = termWords(text);
  return { words: words.length === 0 ? ' ' : ` ${words.join(' ')} ` };
}

/** Compiled needles by term text; bounded so a long study does not grow it without end. */
const needles = new Map<string, string>();
const MAX_CACHED_NEEDLES = 20_000;

/** The substring of {@link PreparedText.words} a term matches: `" charged twice "`, or `" refund"` for `refund*`. */
function needleOf(term: string): string {
  let needle = needles.get(term);
  if (needle === undefined) {
    const trimmed = term.trim();
    const prefix = trimmed.endsWith('*');
    const words = termWords(prefix ? trimmed.slice(0, -1) : trimmed);
    // A term with no word never matches (the parser refuses such terms; this keeps a hand-built rule safe).
    needle = words.length === 0 ? '\u0000' : ` ${words.join(' ')}${prefix ? '' : ' '}`;
    if (needles.size >= MAX_CACHED_NEEDLES) needles.clear();
    needles.set(term, needle);
  }
  return needle;
}

/** True when `term` (a keyword or phrase, optionally ending with `*`) occurs in the text on word boundaries. */
export function termMatches(term: string, text: PreparedText | string): boolean {
  const prepared = typeof text === 'string' ? prepareText(text) : text;
  return prepared.words.includes(needleOf(term));
}

/** True when the rule matches the text: some `any` term, every `all` term and no `none` term occur. */
export function ruleMatches(rule: RoutingRule, text: PreparedText | string): boolean {
  const prepared = typeof text === 'string' ? prepareText(text) : text;
  return (
    rule.any.some((term) => termMatches(term, prepared)) &&
    rule.all.every((term) => termMatches(term, prepared)) &&
    !rule.none.some((term) => termMatches(term, prepared))
  );
}

/**
 * Routes a text: the first rule (in order) that matches gives the label;
 * when none does, the default queue.
 *
 * @param rules parsed rules (see `parseRoutingRules`)
 * @param text the text, or a text already prepared with {@link prepareText}
 */
export function routeText(rules: RoutingRules, text: PreparedText | string): RouteResult {
  const prepared = typeof text === 'string' ? prepareText(text) : text;
  for (const rule of rules.rules) {
    if (ruleMatches(rule, prepared)) return { label: rule.queue, rule, by: 'rule', totals: null };
  }
  if (rules.scores === undefined || rules.scores.length === 0)
    return { label: rules.default, rule: null, by: 'default', totals: null };
  const totals = scoreText(rules, prepared);
  const order = rules.queues ?? [...new Set(rules.scores.map((score) => score.queue))];
  let best: string | undefined;
  for (const queue of order) {
    const total = totals[queue] ?? 0;
    if (total > 0 && (best === undefined || total > totals[best]!)) best = queue;
  }
  return best === undefined
    ? { label: rules.default, rule: null, by: 'default', totals }
    : { label: best, rule: null, by: 'scores', totals };
}

/**
 * The queues' score totals of a text (see the module comment): for each
 * `scores` entry, its weight times the number of its terms that match,
 * summed by queue. Only queues with a total above 0 appear.
 */
export function scoreText(rules: RoutingRules, text: PreparedText | string): Record<string, number> {
  const prepared = typeof text === 'string' ? prepareText(text) : text;
  const totals: Record<string, number> = {};
  for (const score of rules.scores ?? []) {
    let found = 0;
    for (const term of score.terms) if (termMatches(term, prepared)) found += 1;
    if (found > 0) totals[score.queue] = (totals[score.queue] ?? 0) + found * score.weight;
  }
  return totals;
}
