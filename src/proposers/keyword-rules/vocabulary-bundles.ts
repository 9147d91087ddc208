/**
 * Bundles of routing-rule edits that are likely to generalize, judged on
 * the optimization examples alone.
 *
 * One keyword edit rarely fixes more than a few tickets, too few for a
 * paired test to tell it from chance; a bundle of many can. But an edit that
 * fixes the optimization tickets it was read from may mean nothing outside
 * them ("back", "order", "account" occur in every queue). Two statistics,
 * both computed on the optimization partition, estimate how an edit fares on
 * tickets it was not read from:
 *
 * - **held-out fixes** (leave-one-out): the fixed examples `x` for which
 *   the edit would still have been suggested had `x` not been there (another
 *   misrouted example suggested it too). An edit read from one ticket that
 *   fixes only that ticket has 0: the wording of one ticket, not the
 *   queue's vocabulary.
 * - **precision**: how much the edit's term says about the queue, over
 *   every optimization example whose text contains it (routed right or
 *   wrong, whichever rule catches it today), smoothed by one pseudo-example
 *   of another queue so that a term seen once is never trusted fully
 *   (`k / (n + 1)`, the rule of succession's bias towards doubt; Laplace
 *   1814):
 *   - a new term for queue Q (`addTerm`, `addRule`): the share of Q among
 *     the examples containing the term;
 *   - an exclusion of term t from a rule of queue P (`addExclusion`), or the
 *     removal of its term t (`removeTerm`): the share of other queues than P
 *     among the examples containing t;
 *   - a rule of queue Q moved before a rule of P (`moveRule`): the share of
 *     Q among the examples both rules match.
 *
 * {@link buildVocabularyBundle} applies, in rank order, every edit of a pool
 * that passes both bars, keeping each that adds a fix and breaks nothing on
 * optimization (routed locally with `routeText`, so a bundle of fifty edits
 * costs one official evaluation, not fifty). A new one-term rule placed just
 * after another new rule of the same queue in the bundle becomes a term of
 * that rule, so the bundle reads as a few rules with their vocabulary.
 *
 * @module
 */
import { prepareText, routeText, ruleMatches, termMatches } from '../../executors/routing-rules/route-text.ts';
import type { RoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { examplesMatching, examplesTouched, type RoutingEvidence, type ScreenedEdit } from './edit-candidates.ts';
import {
  applyEditToRules,
  applyEditsToText,
  referenceOf,
  resolveReference,
  type RoutingRuleEdit,
} from './rules-edit.ts';

/** How an edit is expected to fare beyond the examples it was read from. */
export interface EditGenerality {
  /** Fixed examples the edit would still have been suggested without (see the module comment). */
  heldOutFixes: number;
  /** Smoothed share in [0, 1) of the examples the edit's term concerns that agree with the edit (see the module comment). */
  precision: number;
  /** Examples the precision counts (those containing the term; for a move, those both rules match). */
  occurrences: number;
  /**
   * Optimization examples whose route the edit puts at stake: for a new term,
   * those containing it that reach the edited rule (no earlier rule takes
   * them), fixed, broken or unchanged. Of two edits that fix the same
   * examples, the one with less at stake risks less on tickets not seen: a
   * term placed at the end of the rules only reaches what no rule matched.
   */
  exposure: number;
  /**
   * True when a new term contains a term that a rule of another queue holds
   * (`my password` against the account rule's `password`): the edit takes
   * from that rule what the rules already say belongs elsewhere.
   */
  overrides: boolean;
}

/** An edit with its outcome on the optimization examples and its generality. */
export interface RankedEdit extends EditGenerality {
  edit: RoutingRuleEdit;
  fixed: number;
  broken: number;
}

/**
 * The generality of a screened edit (see the module comment).
 *
 * @param rules the incumbent rules the edit applies to
 * @param evidence every optimization example
 */
export function generalityOf(
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  screened: Pick<ScreenedEdit, 'edit' | 'sources' | 'fixedIds'>,
): EditGenerality {
  let heldOutFixes = 0;
  for (const id of screened.fixedIds) {
    if ([...screened.sources].some((source) => source !== id)) heldOutFixes += 1;
  }
  const { edit } = screened;
  const share = (positions: readonly number[], agrees: (example: RoutingEvidence) => boolean) => {
    let agreeing = 0;
    for (const position of positions) if (agrees(evidence[position]!)) agreeing += 1;
    return { precision: agreeing / (positions.length + 1), occurrences: positions.length };
  };
  const rest = { exposure: exposureOf(rules, evidence, edit), overrides: overridesOtherQueue(rules, edit) };
  switch (edit.kind) {
    case 'setScores':
      // Not a vocabulary edit: learned and validated as a whole (learn-scores.ts), never part of a bundle.
      return { heldOutFixes: 0, ...rest, precision: 0, occurrences: 0 };
    case 'addTerm':
    case 'addRule': {
      const queue = edit.kind === 'addRule' ? edit.queue : edit.rule.queue;
      return {
        heldOutFixes,
        ...rest,
        ...share(examplesMatching(evidence, edit.term), (example) => example.expected === queue),
      };
    }
    case 'addExclusion':
    case 'removeTerm':
      return {
        heldOutFixes,
        ...rest,
        ...share(examplesMatching(evidence, edit.term), (example) => example.expected !== edit.rule.queue),
      };
    case 'moveRule': {
      const moved = rules.rules[resolveReference(rules, edit.rule)];
      const passed = rules.rules[resolveReference(rules, edit.before)];
      if (moved === undefined || passed === undefined) return { heldOutFixes, ...rest, precision: 0, occurrences: 0 };
      const both = evidence.flatMap((example, position) =>
        ruleMatches(moved, example.text) && ruleMatches(passed, example.text) ? [position] : [],
      );
      return { heldOutFixes, ...rest, ...share(both, (example) => example.expected === moved.queue) };
    }
  }
}

/** The examples whose route an edit puts at stake (see {@link EditGenerality.exposure}). */
function exposureOf(rules: RoutingRules, evidence: readonly RoutingEvidence[], edit: RoutingRuleEdit): number {
  const at =
    edit.kind === 'setScores'
      ? rules.rules.length
      : edit.kind === 'addRule'
        ? edit.before === null
          ? rules.rules.length
          : resolveReference(rules, edit.before)
        : edit.kind === 'moveRule'
          ? resolveReference(rules, edit.before)
          : resolveReference(rules, edit.rule);
  if (at < 0) return evidence.length;
  return examplesTouched(rules, evidence, edit).filter((position) => firstMatchOf(rules, evidence[position]!) >= at)
    .length;
}

/** The index of the first rule that matches an example (the number of rules when none does), cached per rules object. */
const firstMatches = new WeakMap<RoutingRules, WeakMap<RoutingEvidence, number>>();
function firstMatchOf(rules: RoutingRules, example: RoutingEvidence): number {
  let byExample = firstMatches.get(rules);
  if (byExample === undefined) {
    byExample = new WeakMap();
    firstMatches.set(rules, byExample);
  }
  let index = byExample.get(example);
  if (index === undefined) {
    index = rules.rules.findIndex((rule) => ruleMatches(rule, example.text));
    if (index < 0) index = rules.rules.length;
    byExample.set(example, index);
  }
  return index;
}

/** True when a new term holds a term of another queue's rule (see {@link EditGenerality.overrides}). */
function overridesOtherQueue(rules: RoutingRules, edit: RoutingRuleEdit): boolean {
  if (edit.kind !== 'addTerm' && edit.kind !== 'addRule') return false;
  const queue = edit.kind === 'addRule' ? edit.queue : edit.rule.queue;
  const text = prepareText(edit.term.endsWith('*') ? edit.term.slice(0, -1) : edit.term);
  return rules.rules.some((rule) => rule.queue !== queue && rule.any.some((term) => termMatches(term, text)));
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
 * Ranking of edits for a bundle: more held-out fixes, then higher
 * precision, fewer broken, more fixes, less exposure, the narrower kind, a whole word
 * before a prefix form, then the edit's text (a total, stable order).
 */
export function compareByGenerality(a: RankedEdit, b: RankedEdit): number {
  return (
    b.heldOutFixes - a.heldOutFixes ||
    b.precision - a.precision ||
    a.broken - b.broken ||
    b.fixed - a.fixed ||
    a.exposure - b.exposure ||
    KIND_RANK[a.edit.kind] - KIND_RANK[b.edit.kind] ||
    Number(isPrefixEdit(a.edit)) - Number(isPrefixEdit(b.edit)) ||
    compareText(JSON.stringify(a.edit), JSON.stringify(b.edit))
  );
}

/** Bars an edit must pass to enter a bundle. */
export interface BundleBars {
  /** Smallest {@link EditGenerality.precision}. */
  minPrecision: number;
  /** Smallest {@link EditGenerality.heldOutFixes}. */
  minHeldOutFixes: number;
}

/** A bundle built by {@link buildVocabularyBundle}. */
export interface VocabularyBundle {
  /** The edits in the order they apply (a new rule's later terms as `addTerm` edits of it). */
  edits: RoutingRuleEdit[];
  /** The incumbent text with every edit applied. */
  text: string;
  /** Optimization examples the bundle routes right that the incumbent misroutes. */
  fixedIds: Set<string>;
}

/**
 * Applies, in the given order, every edit of `ranked` that passes `bars`,
 * breaks no example and overrides no other queue's term, keeping each that raises the number of fixed
 * optimization examples and breaks none the incumbent routes right (see the
 * module comment).
 *
 * @param rules the incumbent rules, parsed from `incumbentText`
 * @param ranked the candidate edits, best first (see {@link compareByGenerality})
 * @param maxCharacters the artifact length ceiling: an edit that would pass it is left out
 * @returns the bundle, or null when fewer than two edits were kept, or the
 *   edits do not apply to the text (see `applyEditsToText`)
 */
export function buildVocabularyBundle(
  incumbentText: string,
  rules: RoutingRules,
  evidence: readonly RoutingEvidence[],
  ranked: readonly RankedEdit[],
  bars: BundleBars,
  maxCharacters: number,
): VocabularyBundle | null {
  const rightBefore = evidence.map((example) => routeText(rules, example.text).label === example.expected);
  // Whether each example is routed right by the bundle so far; an edit changes only the examples it touches.
  const rightNow = [...rightBefore];
  const created = new Set<string>();
  let current = rules;
  // An upper bound of the bundle's length (see below).
  let characters = [...incumbentText].length;
  let fixedCount = 0;
  const edits: RoutingRuleEdit[] = [];
  for (const entry of ranked) {
    if (
      entry.broken > 0 ||
      entry.overrides ||
      entry.precision < bars.minPrecision ||
      entry.heldOutFixes < bars.minHeldOutFixes
    )
      continue;
    const edit = mergedIntoNewRule(current, entry.edit, created);
    const next = applyEditToRules(current, edit);
    if (next === null) continue;
    const changed = new Map<number, boolean>();
    let gained = 0;
    let broke = false;
    for (const index of examplesTouched(current, evidence, edit)) {
      const example = evidence[index]!;
      const right = routeText(next, example.text).label === example.expected;
      if (right === rightNow[index]) continue;
      changed.set(index, right);
      if (!right && rightBefore[index]) {
        broke = true;
        break;
      }
      gained += right ? (rightBefore[index] ? 0 : 1) : rightBefore[index] ? 0 : -1;
    }
    if (broke || gained <= 0) continue;
    // An edit's JSON is longer than what it adds to the file: while that bound stays under the ceiling no text is
    // rendered; near the ceiling the bundle is rendered to measure it exactly.
    let grown = characters + [...JSON.stringify(edit)].length;
    if (grown > maxCharacters) {
      const rendered = applyEditsToText(incumbentText, [...edits, edit]);
      if (rendered === null || [...rendered].length > maxCharacters) continue;
      grown = [...rendered].length;
    }
    characters = grown;
    current = next;
    fixedCount += gained;
    for (const [index, right] of changed) rightNow[index] = right;
    edits.push(edit);
    if (edit.kind === 'addRule') created.add(edit.id);
  }
  if (edits.length < 2) return null;
  const text = applyEditsToText(incumbentText, edits);
  if (text === null || [...text].length > maxCharacters) return null;
  const fixedIds = new Set(
    evidence.filter((example, index) => rightNow[index] && !rightBefore[index]).map((example) => example.id),
  );
  return fixedCount === fixedIds.size ? { edits, text, fixedIds } : null;
}

/**
 * A new one-term rule that would land in (or just after) a run of rules
 * this bundle created becomes a term of the run's rule for the same queue
 * when there is one (with no `all` or `none` terms), so that a bundle adds
 * one vocabulary rule per queue and place, not one rule per word. The
 * routing of the optimization examples is checked after the merge as before
 * it, so the merge never buys a fix with a break. A rule the bundle does
 * create is named `<queue>-vocabulary` (then `-2`, `-3`, ...).
 */
function mergedIntoNewRule(rules: RoutingRules, edit: RoutingRuleEdit, created: ReadonlySet<string>): RoutingRuleEdit {
  if (edit.kind !== 'addRule') return edit;
  const at = edit.before === null ? rules.rules.length : resolveReference(rules, edit.before);
  if (at < 0) return edit;
  for (let index = at - 1; index >= 0; index -= 1) {
    const rule = rules.rules[index]!;
    if (rule.id === undefined || !created.has(rule.id)) break;
    if (rule.queue === edit.queue && rule.all.length === 0 && rule.none.length === 0) {
      return { kind: 'addTerm', rule: referenceOf(rules, index), term: edit.term };
    }
  }
  const taken = new Set(rules.rules.map((rule) => rule.id));
  const base = `${edit.queue}-vocabulary`.replace(/[^A-Za-z0-9._-]/g, '').replace(/^[^A-Za-z0-9]+/, '') || 'vocabulary';
  let id = base;
  for (let suffix = 2; taken.has(id); suffix += 1) id = `${base}-${suffix}`;
  return { ...edit, id };
}

function isPrefixEdit(edit: RoutingRuleEdit): boolean {
  return 'term' in edit && edit.term.endsWith('*');
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
