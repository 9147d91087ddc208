/**
 * Single edits of a routing-rules file, applied two ways that agree: to the
 * parsed rules (fast, for screening many edits) and to the file's text (the
 * candidate artifact: comments, order and layout of the untouched lines kept).
 *
 * Edits:
 *
 * - `addTerm`: add a keyword or phrase to a rule's `any` list;
 * - `addExclusion`: add a term to a rule's `none` list (created when absent);
 * - `removeTerm`: drop a term from a rule's `any` list (never its last one);
 * - `moveRule`: move a rule to just before an earlier one;
 * - `addRule`: insert a new one-term rule `{ id, queue, any: [term] }` before
 *   a rule, or at the end;
 * - `setScores`: set the `scores` section (weighted terms for what no rule
 *   matches; format version 2) to the given entries, replacing any there.
 *
 * A rule is referred to by its id when it has one, else by its position and
 * queue (a reference that no longer resolves makes the edit inapplicable).
 *
 * @example
 * ```ts
 * const edit = { kind: 'addTerm', rule: { index: 0, id: 'charges', queue: 'billing' }, term: 'charged twice' } as const;
 * applyEditToText(rulesText, edit); // the file with `charged twice` appended to the rule's `any` list
 * ```
 *
 * @module
 */
import { isMap, isScalar, isSeq, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import type { RoutingRule, RoutingRules, RoutingScore } from '../../executors/routing-rules/routing-rules.ts';
import { safeParseRoutingRules } from '../../executors/routing-rules/routing-rules.ts';
import { renderings, sourceOf } from './rules-rendering.ts';

/** Which rule an edit is about: its id when it has one, else its 0-based position and its queue. */
export interface RuleReference {
  index: number;
  id?: string;
  queue: string;
}

/** One edit of a routing-rules file (see the module comment). */
export type RoutingRuleEdit =
  | { kind: 'addTerm'; rule: RuleReference; term: string }
  | { kind: 'addExclusion'; rule: RuleReference; term: string }
  | { kind: 'removeTerm'; rule: RuleReference; term: string }
  | { kind: 'moveRule'; rule: RuleReference; before: RuleReference }
  | { kind: 'addRule'; id: string; queue: string; term: string; before: RuleReference | null }
  | { kind: 'setScores'; scores: readonly RoutingScore[] };

/** A reference to `rules.rules[index]`. */
export function referenceOf(rules: RoutingRules, index: number): RuleReference {
  const rule = rules.rules[index]!;
  return rule.id !== undefined ? { index, id: rule.id, queue: rule.queue } : { index, queue: rule.queue };
}

/** The position of the referenced rule, or -1 when it no longer resolves. */
export function resolveReference(rules: RoutingRules, reference: RuleReference): number {
  if (reference.id !== undefined) {
    const index = rules.rules.findIndex((rule) => rule.id === reference.id);
    return index >= 0 && rules.rules[index]!.queue === reference.queue ? index : -1;
  }
  const rule = rules.rules[reference.index];
  return rule !== undefined && rule.id === undefined && rule.queue === reference.queue ? reference.index : -1;
}

/** How an edit reads in a rationale: `add "charged twice" to rule charges (billing)`. */
export function describeEdit(edit: RoutingRuleEdit): string {
  const name = (reference: RuleReference) => `rule ${reference.id ?? `#${reference.index + 1}`} (${reference.queue})`;
  switch (edit.kind) {
    case 'addTerm':
      return `add "${edit.term}" to ${name(edit.rule)}`;
    case 'addExclusion':
      return `exclude "${edit.term}" from ${name(edit.rule)}`;
    case 'removeTerm':
      return `remove "${edit.term}" from ${name(edit.rule)}`;
    case 'moveRule':
      return `move ${name(edit.rule)} before ${name(edit.before)}`;
    case 'addRule':
      return `add rule ${edit.id} (${edit.queue}) on "${edit.term}"${edit.before === null ? ' at the end' : ` before ${name(edit.before)}`}`;
    case 'setScores': {
      const terms = edit.scores.reduce((sum, score) => sum + score.terms.length, 0);
      return `set the scores to ${terms} weighted term(s) for ${new Set(edit.scores.map((score) => score.queue)).size} queue(s)`;
    }
  }
}

const sameTerm = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/**
 * Applies an edit to parsed rules.
 *
 * @returns the new rules (the input is not changed), or null when the edit
 *   does not apply (a reference that does not resolve, a term already there
 *   or absent, a last `any` term, a move that is not to an earlier place, a
 *   new rule id already used)
 */
export function applyEditToRules(rules: RoutingRules, edit: RoutingRuleEdit): RoutingRules | null {
  const list = [...rules.rules];
  const replace = (index: number, rule: RoutingRule): RoutingRules => {
    list[index] = rule;
    return { ...rules, rules: list };
  };
  if (edit.kind === 'setScores') {
    if (rules.queues !== undefined && edit.scores.some((score) => !rules.queues!.includes(score.queue))) return null;
    if (edit.scores.length === 0 || JSON.stringify(rules.scores ?? []) === JSON.stringify(edit.scores)) return null;
    return {
      ...rules,
      scores: edit.scores.map((score) => ({ queue: score.queue, weight: score.weight, terms: [...score.terms] })),
    };
  }
  if (edit.kind === 'addRule') {
    if (rules.rules.some((rule) => rule.id === edit.id)) return null;
    if (rules.queues !== undefined && !rules.queues.includes(edit.queue)) return null;
    const at = edit.before === null ? list.length : resolveReference(rules, edit.before);
    if (at < 0) return null;
    list.splice(at, 0, { id: edit.id, queue: edit.queue, any: [edit.term.trim()], all: [], none: [] });
    return { ...rules, rules: list };
  }
  const index = resolveReference(rules, edit.rule);
  if (index < 0) return null;
  const rule = list[index]!;
  switch (edit.kind) {
    case 'addTerm':
      if (rule.any.some((term) => sameTerm(term, edit.term))) return null;
      return replace(index, { ...rule, any: [...rule.any, edit.term.trim()] });
    case 'addExclusion':
      if (rule.none.some((term) => sameTerm(term, edit.term))) return null;
      return replace(index, { ...rule, none: [...rule.none, edit.term.trim()] });
    case 'removeTerm': {
      const position = rule.any.indexOf(edit.term);
      if (position < 0 || rule.any.length <= 1) return null;
      return replace(index, { ...rule, any: rule.any.filter((_, at) => at !== position) });
    }
    case 'moveRule': {
      const to = resolveReference(rules, edit.before);
      if (to < 0 || to >= index) return null;
      list.splice(index, 1);
      list.splice(to, 0, rule);
      return { ...rules, rules: list };
    }
  }
}

/** The comment written above a `scores` section a `setScores` edit adds (each line is a YAML comment line without its `#`). */
const SCORES_COMMENT = [
  ' When no rule matches: each entry adds its weight to its queue for every one',
  ' of its terms found in the ticket; the highest total wins (format version 2).',
].join('\n');

/**
 * Applies an edit to a rules file's text. The untouched lines keep their
 * text; when the `yaml` library would re-render some of them differently
 * (another flow-list spacing, quotes), the edit's lines are carried onto the
 * original text by a line-based three-way merge.
 *
 * @returns the new text, or null when the text does not parse, the edit does
 *   not apply (see {@link applyEditToRules}) or the edited text would not
 *   read back as exactly the edited rules
 */
export function applyEditToText(text: string, edit: RoutingRuleEdit): string | null {
  const source = sourceOf(text);
  const { parsed, base } = source;
  if (!parsed.ok) return null;
  const expected = applyEditToRules(parsed.rules, edit);
  if (expected === null) return null;
  const document = source.document.clone();
  const sequence = document.get('rules', true);
  if (!isSeq(sequence)) return null;
  if (!editDocument(document, sequence as YAMLSeq<unknown>, parsed.rules, edit)) return null;
  const candidates = renderings(text, document, base);
  for (const candidate of candidates) {
    const reread = safeParseRoutingRules(candidate);
    if (reread.ok && JSON.stringify(reread.rules) === JSON.stringify(expected) && candidate !== text) return candidate;
  }
  return null;
}

/**
 * Applies several edits, in order, to a rules file's text: one parse and one
 * rendering for all of them (what {@link applyEditToText} does edit after
 * edit, for a bundle of many).
 *
 * @returns the new text, or null when the text does not parse, some edit does
 *   not apply to the rules as the edits before it left them, or the edited
 *   text would not read back as exactly the edited rules
 */
export function applyEditsToText(text: string, edits: readonly RoutingRuleEdit[]): string | null {
  const source = sourceOf(text);
  const { parsed, base } = source;
  if (!parsed.ok || edits.length === 0) return null;
  const document = source.document.clone();
  const sequence = document.get('rules', true);
  if (!isSeq(sequence)) return null;
  let rules = parsed.rules;
  for (const edit of edits) {
    const next = applyEditToRules(rules, edit);
    if (next === null || !editDocument(document, sequence as YAMLSeq<unknown>, rules, edit)) return null;
    rules = next;
  }
  for (const candidate of renderings(text, document, base)) {
    const reread = safeParseRoutingRules(candidate);
    if (reread.ok && JSON.stringify(reread.rules) === JSON.stringify(rules) && candidate !== text) return candidate;
  }
  return null;
}

function editDocument(
  document: Document,
  sequence: YAMLSeq<unknown>,
  rules: RoutingRules,
  edit: RoutingRuleEdit,
): boolean {
  const flowList = (items: string[]) => {
    const node = document.createNode(items) as YAMLSeq<unknown>;
    node.flow = true;
    return node;
  };
  if (edit.kind === 'setScores') {
    const list = document.createNode(
      edit.scores.map((score) => ({ queue: score.queue, weight: score.weight })),
    ) as YAMLSeq<YAMLMap<unknown, unknown>>;
    list.items.forEach((entry, index) => entry.set('terms', flowList([...edit.scores[index]!.terms])));
    const existing = document.contents;
    if (!isMap(existing)) return false;
    const pair = existing.items.find((item) => isScalar(item.key) && item.key.value === 'scores');
    if (pair !== undefined) pair.value = list;
    else {
      const key = document.createNode('scores');
      key.spaceBefore = true;
      key.commentBefore = SCORES_COMMENT;
      existing.items.push(document.createPair(key, list));
    }
    return true;
  }
  if (edit.kind === 'addRule') {
    const at = edit.before === null ? sequence.items.length : resolveReference(rules, edit.before);
    const node = document.createNode({ id: edit.id, queue: edit.queue }) as YAMLMap<unknown, unknown>;
    node.set('any', flowList([edit.term.trim()]));
    respaced(sequence, () => sequence.items.splice(at, 0, node));
    return true;
  }
  const index = resolveReference(rules, edit.rule);
  const node = sequence.items[index];
  if (!isMap(node)) return false;
  switch (edit.kind) {
    case 'addTerm':
    case 'addExclusion': {
      const key = edit.kind === 'addTerm' ? 'any' : 'none';
      const list = node.get(key, true);
      if (list === undefined || list === null) {
        node.set(key, flowList([edit.term.trim()]));
        return true;
      }
      if (!isSeq(list)) return false;
      list.items.push(document.createNode(edit.term.trim()));
      return true;
    }
    case 'removeTerm': {
      const list = node.get('any', true);
      if (!isSeq(list)) return false;
      const position = list.items.findIndex(
        (item) => isScalar(item) && typeof item.value === 'string' && item.value.trim() === edit.term,
      );
      if (position < 0) return false;
      list.items.splice(position, 1);
      return true;
    }
    case 'moveRule': {
      const to = resolveReference(rules, edit.before);
      respaced(sequence, () => {
        const [moved] = sequence.items.splice(index, 1);
        sequence.items.splice(to, 0, moved);
      });
      return true;
    }
  }
}

type Spaced = { spaceBefore?: boolean; commentBefore?: string | null };

/**
 * Runs a change of the rule list's order and keeps the file's spacing: the
 * first rule keeps the first rule's blank line (or none), and when the file
 * separates rules by blank lines every later rule gets one.
 */
function respaced(sequence: YAMLSeq<unknown>, change: () => void): void {
  const items = () => sequence.items as Spaced[];
  // A comment just above the first rule is the list's in the parsed document; it stays with that rule.
  const head = sequence.items[0] as { commentBefore?: string | null } | undefined;
  if (head !== undefined && typeof sequence.commentBefore === 'string' && sequence.commentBefore !== '') {
    head.commentBefore = head.commentBefore
      ? `${sequence.commentBefore}\n${head.commentBefore}`
      : sequence.commentBefore;
    sequence.commentBefore = null;
  }
  const first = items()[0]?.spaceBefore === true;
  const separated = items()
    .slice(1)
    .some((item) => item.spaceBefore === true);
  change();
  items().forEach((item, index) => {
    if (index === 0) item.spaceBefore = first;
    else if (separated) item.spaceBefore = true;
  });
}
