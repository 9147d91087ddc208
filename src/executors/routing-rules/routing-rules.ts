/**
 * The routing-rules artifact: an ordered list of keyword rules that send a
 * text (a support ticket, an email) to one queue, and a default queue.
 *
 * Format (YAML; JSON is accepted, being YAML's flow syntax):
 *
 * ```yaml
 * queues: [billing, technical, account]   # optional: when present, every queue named below must be one of these
 * default: technical                      # the queue of a text no rule matches
 * rules:                                  # in order: the first rule that matches wins
 *   - id: double-charge                   # optional; letters, digits, ".", "_", "-"; unique
 *     queue: billing
 *     any: [invoice, charged twice, refund*]   # at least one of these occurs (required, non-empty)
 *     all: [card]                              # every one of these occurs (optional)
 *     none: [gift card]                        # none of these occurs (optional)
 * scores:                                 # optional (format version 2): consulted only when no rule matches
 *   - queue: billing
 *     weight: 2                           # a number > 0 (at most 1000)
 *     terms: [receipt*, declined]         # each term that occurs adds the weight to the queue (required, non-empty)
 *   - queue: account
 *     weight: 1
 *     terms: [merge, profile]
 * ```
 *
 * `rules` decide: the first rule that matches gives the queue. When none
 * matches and the file has `scores`, every score entry adds its `weight` to
 * its queue once for each of its `terms` that occurs in the text; the queue
 * with the highest total wins (a tie goes to the queue listed first in
 * `queues`, else the queue whose first entry comes first). When no rule
 * matches and no score term occurs, the text goes to `default`. A file with
 * no `scores` routes exactly as in format version 1.
 *
 * A term is a keyword or a phrase, matched case-insensitively on word
 * boundaries (see `route-text.ts`): `card` matches "Card!" but not
 * "cardboard"; the phrase `charged twice` matches "charged  twice" and
 * "charged, twice". A term whose last word ends with `*` matches that word as
 * a prefix: `refund*` matches "refund", "refunds" and "refunded".
 *
 * Unknown keys are errors; so are a queue outside `queues` (in a rule or a
 * score entry), a duplicate rule id or queue, a weight that is not a number
 * above 0, and a term with no word in it. Errors are {@link InputError}s
 * naming the file, the line and the field
 * (`rules.yaml:7: rules[1].queue: ...`).
 *
 * @example
 * ```ts
 * const rules = parseRoutingRules('default: technical\nrules:\n  - queue: billing\n    any: [invoice]\n');
 * rules.rules[0]; // { queue: 'billing', any: ['invoice'], all: [], none: [] }
 * rules.scores; // undefined (the file has no `scores` section)
 * ```
 *
 * @module
 */
import { z } from 'zod';
import { type InputError, isKloopError } from '../../errors.ts';
import { parseLocatedYaml, parseWithSchema } from '../../program/yaml-locations.ts';
import { termWords } from './route-text.ts';

/**
 * Version of the rules format and of its matching semantics; part of the
 * executor id. 1: ordered rules and a default; 2: adds `scores` (a file
 * without them routes as in 1).
 */
export const ROUTING_RULES_FORMAT_VERSION = 2;

/** Most rules a file may hold. */
export const MAX_ROUTING_RULES = 1000;

/** Most score entries a file may hold. */
export const MAX_ROUTING_SCORES = 1000;

/** Largest weight of a score entry. */
export const MAX_SCORE_WEIGHT = 1000;

/** Most terms in one list (`any`, `all` or `none` of a rule, `terms` of a score entry). */
export const MAX_TERMS_PER_LIST = 500;

/** One rule, as parsed: the lists are present (empty when absent in the file), terms as written (trimmed). */
export interface RoutingRule {
  /** The rule's id, when the file gives one. */
  id?: string;
  /** The queue this rule routes to. */
  queue: string;
  /** At least one of these terms occurs. Never empty. */
  any: readonly string[];
  /** Every one of these terms occurs. */
  all: readonly string[];
  /** None of these terms occurs. */
  none: readonly string[];
}

/** One score entry, as parsed: terms as written (trimmed). */
export interface RoutingScore {
  /** The queue the weight goes to. */
  queue: string;
  /** Added to the queue's total once for each term that occurs; a number above 0. */
  weight: number;
  /** The terms. Never empty. */
  terms: readonly string[];
}

/** A parsed routing-rules file. */
export interface RoutingRules {
  /** The declared queues, when the file lists them. */
  queues?: readonly string[];
  /** The queue of a text no rule matches and no score term occurs in. */
  default: string;
  /** The rules, in file order: the first that matches wins. */
  rules: readonly RoutingRule[];
  /** The score entries, in file order, when the file has a `scores` section (consulted only when no rule matches). */
  scores?: readonly RoutingScore[];
}

/** The outcome of {@link safeParseRoutingRules}. */
export type RoutingRulesParseResult = { ok: true; rules: RoutingRules } | { ok: false; error: InputError };

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const queueSchema = z
  .string()
  .trim()
  .min(1, 'a queue name is empty')
  .max(120, 'a queue name is longer than 120 characters');

/** Longest term, in characters. */
const MAX_TERM_CHARACTERS = 200;

// A custom issue (not zod's invalid_type) so that a number where a term belongs is reported as such.
const termSchema = z.unknown().transform((value, context): string => {
  const problem =
    typeof value !== 'string'
      ? `a term is text, not ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value} (quote it: "${String(value)}")`
      : value.length > MAX_TERM_CHARACTERS
        ? `a term is longer than ${MAX_TERM_CHARACTERS} characters`
        : termProblem(value);
  if (problem !== undefined) {
    context.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }
  return (value as string).trim();
});

const termListSchema = z.array(termSchema).max(MAX_TERMS_PER_LIST, `a list holds at most ${MAX_TERMS_PER_LIST} terms`);

const ruleSchema = z.strictObject({
  id: z.string().regex(NAME_PATTERN, 'a rule id uses letters, digits, ".", "_" and "-"').max(120).optional(),
  queue: queueSchema,
  any: termListSchema.min(1, 'a rule needs at least one term in "any"'),
  all: termListSchema.default([]),
  none: termListSchema.default([]),
});

const scoreSchema = z.strictObject({
  queue: queueSchema,
  weight: z
    .number({ error: 'a weight is a number above 0' })
    .positive('a weight is a number above 0')
    .max(MAX_SCORE_WEIGHT, `a weight is at most ${MAX_SCORE_WEIGHT}`),
  terms: termListSchema.min(1, 'a score entry needs at least one term in "terms"'),
});

const rulesFileSchema = z
  .strictObject({
    queues: z.array(queueSchema).min(1, 'list at least one queue, or leave "queues" out').optional(),
    default: queueSchema,
    rules: z.array(ruleSchema).max(MAX_ROUTING_RULES, `a file holds at most ${MAX_ROUTING_RULES} rules`),
    scores: z
      .array(scoreSchema)
      .max(MAX_ROUTING_SCORES, `a file holds at most ${MAX_ROUTING_SCORES} score entries`)
      .optional(),
  })
  .superRefine((file, context) => {
    if (file.queues !== undefined) {
      const seen = new Set<string>();
      file.queues.forEach((queue, index) => {
        if (seen.has(queue))
          context.addIssue({ code: 'custom', path: ['queues', index], message: `queue "${queue}" is listed twice` });
        seen.add(queue);
      });
      const declared = `(queues: ${file.queues.join(', ')})`;
      if (!seen.has(file.default)) {
        context.addIssue({
          code: 'custom',
          path: ['default'],
          message: `"${file.default}" is not a declared queue ${declared}`,
        });
      }
      file.rules.forEach((rule, index) => {
        if (!seen.has(rule.queue)) {
          context.addIssue({
            code: 'custom',
            path: ['rules', index, 'queue'],
            message: `"${rule.queue}" is not a declared queue ${declared}`,
          });
        }
      });
      (file.scores ?? []).forEach((score, index) => {
        if (!seen.has(score.queue)) {
          context.addIssue({
            code: 'custom',
            path: ['scores', index, 'queue'],
            message: `"${score.queue}" is not a declared queue ${declared}`,
          });
        }
      });
    }
    const ids = new Map<string, number>();
    file.rules.forEach((rule, index) => {
      if (rule.id === undefined) return;
      const first = ids.get(rule.id);
      if (first !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['rules', index, 'id'],
          message: `rule id "${rule.id}" is already used by rules[${first}]`,
        });
      } else ids.set(rule.id, index);
    });
  });

/** Why `term` is not a usable term, or undefined when it is. */
function termProblem(term: string): string | undefined {
  const trimmed = term.trim();
  if (trimmed === '') return 'a term is empty';
  const body = trimmed.endsWith('*') ? trimmed.slice(0, -1) : trimmed;
  if (body.includes('*')) return `"${trimmed}": "*" is allowed only at the end of a term (a prefix of its last word)`;
  if (/\s$/.test(body)) return `"${trimmed}": "*" must follow a word directly`;
  if (termWords(body).length === 0) return `"${trimmed}" has no letter or digit to match`;
  return undefined;
}

/**
 * Parses a routing-rules file (YAML or JSON).
 *
 * @param text the file's text
 * @param file the name used in error messages (default `rules.yaml`)
 * @returns the rules, lists defaulted to `[]`, terms trimmed
 * @throws InputError `<file>:<line>: <field>: <message>` for malformed YAML,
 *   an unknown key, a missing or mistyped field, a queue outside `queues`, a
 *   duplicate queue or rule id, or a term with no word
 */
export function parseRoutingRules(text: string, file = 'rules.yaml'): RoutingRules {
  const source = { file };
  const located = parseLocatedYaml(text, source);
  const parsed = parseWithSchema(rulesFileSchema, located, source);
  const rules: RoutingRule[] = parsed.rules.map((rule) => ({
    ...(rule.id !== undefined ? { id: rule.id } : {}),
    queue: rule.queue,
    any: rule.any,
    all: rule.all,
    none: rule.none,
  }));
  return {
    ...(parsed.queues !== undefined ? { queues: parsed.queues } : {}),
    default: parsed.default,
    rules,
    ...(parsed.scores !== undefined
      ? { scores: parsed.scores.map((score) => ({ queue: score.queue, weight: score.weight, terms: score.terms })) }
      : {}),
  };
}

/**
 * {@link parseRoutingRules} without the throw: `{ ok: true, rules }`, or
 * `{ ok: false, error }` with the located {@link InputError}.
 *
 * @throws only what is not an input problem (a bug)
 */
export function safeParseRoutingRules(text: string, file = 'rules.yaml'): RoutingRulesParseResult {
  try {
    return { ok: true, rules: parseRoutingRules(text, file) };
  } catch (error) {
    // Every input problem is an InputError (codes `input`, `input.*`); matched by code, not by class.
    if (isKloopError(error) && (error.code === 'input' || error.code.startsWith('input.')))
      return { ok: false, error: error as InputError };
    throw error;
  }
}

/** The queues a rules file can answer: its declared `queues`, else the default, every rule's and every score entry's queue (first use order). */
export function routingQueues(rules: RoutingRules): string[] {
  if (rules.queues !== undefined) return [...rules.queues];
  return [
    ...new Set([
      rules.default,
      ...rules.rules.map((rule) => rule.queue),
      ...(rules.scores ?? []).map((score) => score.queue),
    ]),
  ];
}
