/**
 * Generating routing-rule edits from misrouted examples, and screening them
 * locally (re-routing the optimization examples with the edited rules).
 *
 * From each misrouted example (gold queue E, routed to P by rule R, or by
 * the default when no rule matched):
 *
 * - a discriminative keyword or bigram of its text for E — one whose share
 *   of E among the optimization examples containing it is at least
 *   `minTermPrecision` — added to a rule for E placed before R
 *   (`addTerm`), or as a new rule for E just before R (`addRule`; at the end
 *   when the default answered);
 * - a term of its text that occurs more in the examples R misroutes than in
 *   those R routes right, as an exclusion of R (`addExclusion`);
 * - the any-term of R that fired on it, removed (`removeTerm`, when R keeps
 *   another term);
 * - the first later rule for E that matches it, moved before R (`moveRule`).
 *
 * Words are the router's own (`termWords`); candidate terms are content
 * words (no stop words, no words of fewer than 3 characters, no numbers),
 * their prefix forms (`refunded` → `refund*`) and bigrams.
 *
 * @module
 */
import {
  prepareText,
  routeText,
  ruleMatches,
  termMatches,
  termWords,
  type PreparedText,
} from '../../executors/routing-rules/route-text.ts';
import type { RoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { applyEditToRules, referenceOf, resolveReference, type RoutingRuleEdit } from './rules-edit.ts';
import { candidateTerms } from './candidate-terms.ts';

export { candidateTerms, prefixTerm } from './candidate-terms.ts';

/** One optimization example as the proposer reads it. */
export interface RoutingEvidence {
  id: string;
  /** The example's text, prepared for matching. */
  text: PreparedText;
  /** The text's candidate terms (see {@link candidateTerms}). */
  terms: readonly string[];
  /** The gold queue. */
  expected: string;
}

/** An edit with the misrouted examples that suggested it and the generality of its term. */
export interface GeneratedEdit {
  edit: RoutingRuleEdit;
  /** Ids of the misrouted examples that suggested the edit. */
  sources: Set<string>;
  /** Optimization examples whose text contains the edit's term (0 for a move). */
  termSupport: number;
}

/** Settings of {@link generateRoutingEdits}. */
export interface GenerateRoutingEditsOptions {
  /** Most new terms read from one misrouted example, per kind (default 8). */
  maxTermsPerExample?: number;
  /** Smallest share of the gold queue among the optimization examples containing a new term (default 0.5). */
  minTermPrecision?: number;
}

/** Builds the evidence of one example. */
export function evidenceOf(id: string, text: string, expected: string): RoutingEvidence {
  return { id, text: prepareText(text), terms: candidateTerms(text), expected };
}

/** Positions of the examples each term matches, per evidence list (an inverted index built as terms are asked for). */
const positionsByEvidence = new WeakMap<readonly RoutingEvidence[], Map<string, readonly number[]>>();

/**
 * The positions (ascending) of the examples of `evidence` whose text `term`
 * matches; computed once per term and evidence list, then read from a cache
 * that lives as long as the list.
 */
export function examplesMatching(evidence: readonly RoutingEvidence[], term: string): readonly number[] {
  let cache = positionsByEvidence.get(evidence);
  if (cache === undefined) {
    cache = new Map();
    positionsByEvidence.set(evidence, cache);
  }
  let positions = cache.get(term);
  if (positions === undefined) {
    const found: number[] = [];
    evidence.forEach((example, index) => {
      if (termMatches(term, example.text)) found.push(index);
    });
    positions = found;
    cache.set(term, positions);
  }
  return positions;
}

/**
 * The positions of the examples whose route `edit` may change (see
 * {@link touchedBy}): from the inverted index for a term edit, else by
 * testing every example.
 */
export function examplesTouched(
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  edit: RoutingRuleEdit,
): readonly number[] {
  if (edit.kind !== 'moveRule' && edit.kind !== 'setScores') return examplesMatching(evidence, edit.term);
  const touches = touchedBy(rules, edit);
  return evidence.flatMap((example, index) => (touches(example.text) ? [index] : []));
}

/** Queue counts of the examples containing each term. */
type TermCounts = Map<string, Map<string, number>>;

/** For every candidate term of the misrouted examples, the queues of the examples it matches. */
function countTerms(evidence: readonly RoutingEvidence[], misrouted: readonly RoutingEvidence[]): TermCounts {
  const counts: TermCounts = new Map();
  for (const example of misrouted) {
    for (const term of example.terms) {
      if (counts.has(term)) continue;
      const byQueue = new Map<string, number>();
      for (const position of examplesMatching(evidence, term)) {
        const other = evidence[position]!;
        byQueue.set(other.expected, (byQueue.get(other.expected) ?? 0) + 1);
      }
      counts.set(term, byQueue);
    }
  }
  return counts;
}

function total(byQueue: Map<string, number> | undefined): number {
  let sum = 0;
  for (const count of byQueue?.values() ?? []) sum += count;
  return sum;
}

/** A rule id for a new rule that the rules do not use yet: `billing-charged-twice`, then `-2`, `-3`, ... */
function newRuleId(rules: RoutingRules, queue: string, term: string): string {
  const slug =
    `${queue}-${termWords(term).join('-')}`.replace(/[^A-Za-z0-9._-]/g, '').replace(/^[^A-Za-z0-9]+/, '') || 'rule';
  const taken = new Set(rules.rules.map((rule) => rule.id));
  if (!taken.has(slug)) return slug;
  for (let suffix = 2; ; suffix += 1) if (!taken.has(`${slug}-${suffix}`)) return `${slug}-${suffix}`;
}

/**
 * Every single edit suggested by the misrouted examples (see the module
 * comment), each once, in a stable order: by example, then by kind.
 *
 * @param rules the incumbent rules
 * @param evidence every optimization example (the misrouted ones are those `routeText` routes wrong)
 */
export function generateRoutingEdits(
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  options: GenerateRoutingEditsOptions = {},
): GeneratedEdit[] {
  const maxTerms = options.maxTermsPerExample ?? 8;
  const minPrecision = options.minTermPrecision ?? 0.5;
  const routed = evidence.map((example) => ({ example, route: routeText(rules, example.text) }));
  const counts = countTerms(
    evidence,
    routed.filter(({ example, route }) => route.label !== example.expected).map(({ example }) => example),
  );
  const generated = new Map<string, GeneratedEdit>();
  const add: AddEdit = (edit, source, termSupport) => {
    const key = JSON.stringify(edit);
    const entry = generated.get(key) ?? { edit, sources: new Set<string>(), termSupport };
    entry.sources.add(source);
    generated.set(key, entry);
  };
  const state: GenerationState = { rules, routed, counts, maxTerms, minPrecision, add };
  for (const { example, route } of routed) {
    if (route.label === example.expected) continue;
    const fired = route.rule === null ? -1 : rules.rules.indexOf(route.rule);
    addGoldTermEdits(state, example, fired);
    if (fired >= 0) addFiredRuleEdits(state, example, fired);
  }
  return [...generated.values()];
}

/** Records one generated edit read from example `source` (each edit once, its sources gathered). */
type AddEdit = (edit: RoutingRuleEdit, source: string, termSupport: number) => void;

/** What the steps of {@link generateRoutingEdits} share. */
interface GenerationState {
  readonly rules: RoutingRules;
  readonly routed: ReadonlyArray<{ example: RoutingEvidence; route: ReturnType<typeof routeText> }>;
  readonly counts: ReturnType<typeof countTerms>;
  readonly maxTerms: number;
  readonly minPrecision: number;
  readonly add: AddEdit;
}

/** Terms for the gold queue of a misrouted example (most examples of the gold queue first, then the purest), added to a gold rule before the one that fired or as a new rule. */
function addGoldTermEdits(state: GenerationState, example: RoutingEvidence, fired: number): void {
  const { rules, counts, add } = state;
  const gold = example.expected;
  const forGold = example.terms
    .map((term) => {
      const byQueue = counts.get(term);
      const right = byQueue?.get(gold) ?? 0;
      return { term, right, all: total(byQueue), precision: right / Math.max(1, total(byQueue)) };
    })
    .filter((entry) => entry.precision >= state.minPrecision)
    .sort(
      (a, b) =>
        b.right - a.right ||
        b.precision - a.precision ||
        wordCount(a.term) - wordCount(b.term) ||
        compareText(a.term, b.term),
    )
    .slice(0, state.maxTerms);
  const goldRulesBefore = rules.rules
    .map((rule, index) => ({ rule, index }))
    .filter(({ rule, index }) => rule.queue === gold && (fired < 0 || index < fired));
  for (const { term, all } of forGold) {
    for (const { rule, index } of goldRulesBefore) {
      const edited = { ...rule, any: [...rule.any, term] };
      if (ruleMatches(edited, example.text))
        add({ kind: 'addTerm', rule: referenceOf(rules, index), term }, example.id, all);
    }
    if (rules.queues === undefined || rules.queues.includes(gold)) {
      const before = fired < 0 ? null : referenceOf(rules, fired);
      add({ kind: 'addRule', id: newRuleId(rules, gold, term), queue: gold, term, before }, example.id, all);
    }
  }
}

/** Edits of the rule that misrouted an example: exclusions, removing its terms that fired, moving a later gold rule before it. */
function addFiredRuleEdits(state: GenerationState, example: RoutingEvidence, fired: number): void {
  const { rules, add } = state;
  const rule = rules.rules[fired]!;
  // Exclusions: terms of this text seen more in what the rule misroutes than in what it routes right.
  const byRule = state.routed.filter((entry) => entry.route.rule === rule);
  const exclusions = example.terms
    .filter((term) => !rule.any.includes(term) && !rule.all.includes(term))
    .map((term) => {
      let kept = 0;
      let wrong = 0;
      for (const entry of byRule) {
        if (!termMatches(term, entry.example.text)) continue;
        if (entry.example.expected === rule.queue) kept += 1;
        else wrong += 1;
      }
      return { term, kept, wrong };
    })
    .filter((entry) => entry.wrong > entry.kept)
    .sort(
      (a, b) =>
        b.wrong - b.kept - (a.wrong - a.kept) ||
        a.kept - b.kept ||
        wordCount(a.term) - wordCount(b.term) ||
        compareText(a.term, b.term),
    )
    .slice(0, state.maxTerms);
  for (const { term } of exclusions)
    add({ kind: 'addExclusion', rule: referenceOf(rules, fired), term }, example.id, total(state.counts.get(term)));
  // The rule's own terms that fired here.
  if (rule.any.length > 1) {
    for (const term of rule.any) {
      if (termMatches(term, example.text))
        add({ kind: 'removeTerm', rule: referenceOf(rules, fired), term }, example.id, 0);
    }
  }
  // A later rule for the gold queue that matches, moved before the one that fired.
  const later = rules.rules.findIndex(
    (candidate, index) => index > fired && candidate.queue === example.expected && ruleMatches(candidate, example.text),
  );
  if (later >= 0)
    add({ kind: 'moveRule', rule: referenceOf(rules, later), before: referenceOf(rules, fired) }, example.id, 0);
}

/** The local outcome of one edit on the optimization examples. */
export interface ScreenedEdit extends GeneratedEdit {
  rules: RoutingRules;
  /** Examples routed wrong before and right after. */
  fixed: number;
  /** Examples routed right before and wrong after. */
  broken: number;
  netFixes: number;
  /** Ids of the examples counted in `fixed`. */
  fixedIds: Set<string>;
  /** Ids of the examples counted in `broken`. */
  brokenIds: Set<string>;
}

/**
 * Re-routes every example with each edit applied and counts the examples it
 * fixes and breaks. Edits that do not apply, or change no routing, are left
 * out.
 *
 * @param limit most edits screened (in the given order)
 */
export function screenRoutingEdits(
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  edits: readonly GeneratedEdit[],
  limit = Number.POSITIVE_INFINITY,
): ScreenedEdit[] {
  const before = evidence.map((example) => routeText(rules, example.text).label === example.expected);
  const screened: ScreenedEdit[] = [];
  for (const generated of edits.slice(0, limit)) {
    const edited = applyEditToRules(rules, generated.edit);
    if (edited === null) continue;
    const fixedIds = new Set<string>();
    const brokenIds = new Set<string>();
    for (const index of examplesTouched(rules, evidence, generated.edit)) {
      const example = evidence[index]!;
      const right = routeText(edited, example.text).label === example.expected;
      if (right && !before[index]) fixedIds.add(example.id);
      else if (!right && before[index]) brokenIds.add(example.id);
    }
    if (fixedIds.size === 0 && brokenIds.size === 0) continue;
    screened.push({
      ...generated,
      rules: edited,
      fixed: fixedIds.size,
      broken: brokenIds.size,
      netFixes: fixedIds.size - brokenIds.size,
      fixedIds,
      brokenIds,
    });
  }
  return screened;
}

/**
 * A test that is false for every text whose route an edit cannot change: a
 * term edit changes only texts containing its term, a move only texts the
 * moved rule matches, new scores any text (a shortcut for screening; exact,
 * never an estimate).
 */
export function touchedBy(rules: RoutingRules, edit: RoutingRuleEdit): (text: PreparedText) => boolean {
  if (edit.kind === 'setScores') return () => true;
  if (edit.kind === 'moveRule') {
    const index = resolveReference(rules, edit.rule);
    const moved = rules.rules[index];
    return moved === undefined ? () => false : (text) => ruleMatches(moved, text);
  }
  return (text) => termMatches(edit.term, text);
}

/** Order of kinds in a tie: the narrowest change first. */
const KIND_RANK: Readonly<Record<RoutingRuleEdit['kind'], number>> = {
  addTerm: 0,
  addExclusion: 1,
  moveRule: 2,
  removeTerm: 3,
  addRule: 4,
  setScores: 5,
};

/**
 * Ranking of screened (or evaluated) edits: net fixes, fewer broken, a term
 * more examples contain, the narrower kind, a whole word before a prefix
 * form (`charged` before `charg*` when they fix the same), then the text.
 */
export function compareEdits(
  a: { netFixes: number; broken: number; termSupport: number; edit: RoutingRuleEdit },
  b: { netFixes: number; broken: number; termSupport: number; edit: RoutingRuleEdit },
): number {
  return (
    b.netFixes - a.netFixes ||
    a.broken - b.broken ||
    b.termSupport - a.termSupport ||
    KIND_RANK[a.edit.kind] - KIND_RANK[b.edit.kind] ||
    Number(isPrefixEdit(a.edit)) - Number(isPrefixEdit(b.edit)) ||
    compareText(JSON.stringify(a.edit), JSON.stringify(b.edit))
  );
}

function isPrefixEdit(edit: RoutingRuleEdit): boolean {
  return 'term' in edit && edit.term.endsWith('*');
}

function wordCount(term: string): number {
  return term.split(' ').length;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
