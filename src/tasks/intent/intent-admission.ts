/**
 * The intent task's admission rules (DESIGN §4), beyond the schemas:
 *
 * - `non_trivial_gold`: the gold names at least one entity, and has a known
 *   app type (a vocabulary value other than `other`); the app type may be
 *   waived for partial gold (`requireAppType: false`, CLI `--partial-gold`);
 * - `grounding`: every gold entity is named in the goal text, by its name,
 *   one of its aliases, or a lemma of it ({@link isEntityGrounded}).
 *
 * The corpus admission gate (`src/corpus/admission.ts`) runs these after its
 * task-independent checks (schema, duplicate id, near-duplicate goal).
 *
 * @module
 */
import type { AdmissionProblem } from '../task.ts';
import type { ExpectedEntity, ExpectedIntent } from './intent.ts';
import { acceptedAppTypes } from './intent.ts';
import { normalizeEntityName, singularizeWord } from './names.ts';
import { analyzeGoal } from './offline/goal-analysis.ts';

/** Longest run of goal words a multi-word entity name is matched against. */
const MAX_NAME_WORDS = 4;

/** The intent admission rules' reasons. */
export type IntentAdmissionReason = 'non_trivial_gold' | 'grounding';

/** One problem found by {@link intentAdmissionProblems}. */
export interface IntentAdmissionProblem extends AdmissionProblem {
  reason: IntentAdmissionReason;
  field: string;
}

/** Options of the intent admission rules. */
export interface IntentAdmissionOptions {
  /** Refuse gold without a known app type. Default true. */
  requireAppType?: boolean;
}

/**
 * Every normalised key a goal text offers for entity names: each run of 1 to
 * 4 words (lower case, punctuation dropped), normalised with
 * `normalizeEntityName` as spaced words and run together, plus every word's
 * lemma and surface forms from `analyzeGoal`.
 */
export function groundingKeys(goal: string): Set<string> {
  const keys = windowKeys(goal);
  for (const key of lemmaKeys(goal)) keys.add(key);
  keys.delete('');
  return keys;
}

/** The word-run keys of {@link groundingKeys} (no parse). */
function windowKeys(goal: string): Set<string> {
  const words = goal
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== '');
  const keys = new Set<string>();
  // The words are lower case letters and digits already: normalizeEntityName of a run is the run
  // with its last word singular (spaced), or the run together singular (joined).
  for (let start = 0; start < words.length; start += 1) {
    for (let size = 1; size <= MAX_NAME_WORDS && start + size <= words.length; size += 1) {
      const window = words.slice(start, start + size);
      const head = window.slice(0, -1);
      keys.add([...head, singularizeWord(window.at(-1)!)].join(' '));
      if (size > 1) keys.add(singularizeWord(window.join('')));
    }
  }
  keys.delete('');
  return keys;
}

/** The lemma and surface-form keys of {@link groundingKeys} (a full parse of the goal: the costly part). */
function lemmaKeys(goal: string): Set<string> {
  const keys = new Set<string>();
  for (const word of analyzeGoal(goal).words) for (const key of word.keys) keys.add(normalizeEntityName(key));
  keys.delete('');
  return keys;
}

/**
 * The entities of `entities` (by position) that are not grounded in the goal:
 * the same verdicts as {@link isEntityGrounded} over {@link groundingKeys},
 * with the parse done only when the word runs leave an entity ungrounded.
 */
export function ungroundedEntities(goal: string, entities: readonly ExpectedEntity[]): number[] {
  const windows = windowKeys(goal);
  const missing = entities.flatMap((entity, position) => (isEntityGrounded(entity, windows) ? [] : [position]));
  if (missing.length === 0) return missing;
  const keys = groundingKeys(goal);
  return missing.filter((position) => !isEntityGrounded(entities[position]!, keys));
}

export function isEntityGrounded(entity: ExpectedEntity, keys: ReadonlySet<string>): boolean {
  return [entity.name, ...(entity.aliases ?? [])].some((name) => {
    const normal = normalizeEntityName(name);
    return normal !== '' && (keys.has(normal) || keys.has(normal.replace(/ /g, '')));
  });
}

/**
 * The intent admission problems of one record (pure), in this order: no
 * entity, no known app type, then each ungrounded entity in gold order.
 * Empty when the record passes.
 *
 * @param goal the example's goal text (its input)
 * @param expected its gold intent (already valid against the schema)
 *
 * @example
 * ```ts
 * intentAdmissionProblems('Patients book sessions.', { appType: 'booking', entities: [{ name: 'Invoice' }] });
 * // [{ reason: 'grounding', field: 'expected.entities[0].name', message: 'gold entity "Invoice" does not appear in the goal text, by name, alias or lemma' }]
 * ```
 */
export function intentAdmissionProblems(
  goal: string,
  expected: ExpectedIntent,
  options: IntentAdmissionOptions = {},
): IntentAdmissionProblem[] {
  const problems: IntentAdmissionProblem[] = [];
  const entities = expected.entities ?? [];
  if (entities.length === 0)
    problems.push({ reason: 'non_trivial_gold', field: 'expected.entities', message: 'the gold names no entity' });
  const appTypes = acceptedAppTypes(expected);
  if ((options.requireAppType ?? true) && !appTypes.some((type) => type !== 'other')) {
    problems.push({
      reason: 'non_trivial_gold',
      field: 'expected.appType',
      message:
        appTypes.length === 0
          ? 'the gold has no app type (use --partial-gold, or corpusPolicy.partialGold for corpus files, to admit partial gold)'
          : 'the gold app type is only "other", which is not a known app type',
    });
  }
  for (const position of ungroundedEntities(goal, entities)) {
    const entity = entities[position]!;
    problems.push({
      reason: 'grounding',
      field: `expected.entities[${position}].name`,
      message: `gold entity "${entity.name}"${entity.aliases?.length ? ` (aliases ${entity.aliases.join(', ')})` : ''} does not appear in the goal text, by name, alias or lemma`,
    });
  }
  return problems;
}
