/**
 * The state the per-error edit generators share while generating the
 * candidates of one playbook over the optimization examples: the playbook,
 * the examples, the options read once, and the helpers that add a candidate
 * (once per delta; later sources join it) and count, match and rank over the
 * examples. Built by {@link createEditGeneration}; read by entity-edits.ts,
 * extraction-edits.ts and cue-edits.ts.
 *
 * Pure.
 */
import type { EditCandidate, EditKind, ExampleEvidence } from './edit-evidence.ts';
import { goldKeys } from './edit-evidence.ts';
import type { Playbook } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { describePlaybookEdit } from './playbook-edit.ts';

export interface GenerateOptions {
  /** Most cue or alias suggestions drawn from one error of one example. Default 12. */
  maxSuggestionsPerError?: number;
  /**
   * A new app-type, behaviour or view cue must be right this often: among the
   * examples whose goal contains it, the share whose gold has the cue's value.
   * Default 0.5.
   */
  minCuePrecision?: number;
  /**
   * A new cue's precision must also be this many times the value's base rate
   * (its share of all examples): association-rule lift, which keeps common
   * words out of the cue lists of common behaviours. Default 1.5.
   */
  minCueLift?: number;
  /**
   * The study weighs entity precision: every spurious entity suggests edits
   * (a stop word, an attribute term, a lower cap, a higher salience floor, its
   * noun category), not only those that crowd gold entities out of the cap. Default false.
   */
  precision?: boolean;
  /** The study weighs relation recall: quantifier cues rank like relation phrases. Default false. */
  relations?: boolean;
}

/** What every per-error generator reads: see the module comment. */
export interface EditGeneration {
  readonly playbook: Playbook;
  readonly examples: readonly ExampleEvidence[];
  /** `options.precision` (default false). */
  readonly weighsPrecision: boolean;
  /** `options.relations` (default false). */
  readonly weighsRelations: boolean;
  /** Normalised gold entity names (and aliases) of each example. */
  readonly goldEntityKeys: ReadonlyMap<ExampleEvidence, Set<string>>;
  /** The candidates so far, by delta, in the order they were first suggested. */
  readonly candidates: Map<string, EditCandidate>;
  /** Adds `edit` suggested by example `source` (its prior computed once, on the first suggestion). */
  add(edit: PlaybookEdit, kind: EditKind, source: string, preRank: () => number): void;
  /** Whether every word of `phrase` occurs in the example's goal. */
  contains(example: ExampleEvidence, phrase: string): boolean;
  /** Number of examples for which `predicate` holds. */
  count(predicate: (example: ExampleEvidence) => boolean): number;
  /** Whether a new cue is precise enough (`minCuePrecision`) and lifts enough (`minCueLift`) for the value. */
  precise(cue: string, hasValue: (example: ExampleEvidence) => boolean): boolean;
  /** The `maxSuggestionsPerError` best items by `score` (stable among equals). */
  top<T>(items: T[], score: (item: T) => number): T[];
}

/** The shared state of one generation (options' defaults: 12 suggestions per error, precision 0.5, lift 1.5). */
export function createEditGeneration(
  playbook: Playbook,
  examples: readonly ExampleEvidence[],
  options: GenerateOptions,
): EditGeneration {
  const perError = options.maxSuggestionsPerError ?? 12;
  const minPrecision = options.minCuePrecision ?? 0.5;
  const minLift = options.minCueLift ?? 1.5;
  const weighsPrecision = options.precision ?? false;
  const weighsRelations = options.relations ?? false;
  const candidates = new Map<string, EditCandidate>();
  const add = (edit: PlaybookEdit, kind: EditKind, source: string, preRank: () => number): void => {
    const delta = describePlaybookEdit(edit);
    const existing = candidates.get(delta);
    if (existing !== undefined) {
      existing.sources.add(source);
      return;
    }
    candidates.set(delta, { edit, delta, kind, sources: new Set([source]), preRank: preRank() });
  };
  const contains = (example: ExampleEvidence, phrase: string): boolean =>
    phrase.split(' ').every((word) => example.analysis.keySet.has(word));
  const count = (predicate: (example: ExampleEvidence) => boolean): number => examples.filter(predicate).length;
  const goldEntityKeys = new Map(examples.map((example) => [example, goldKeys(example.expected)]));
  /** Share of the examples containing `cue` whose gold has the value (1 when none contains it). */
  const containingCache = new Map<string, ExampleEvidence[]>();
  const containing = (cue: string): ExampleEvidence[] => {
    let found = containingCache.get(cue);
    if (found === undefined) {
      found = examples.filter((example) => contains(example, cue));
      containingCache.set(cue, found);
    }
    return found;
  };
  const precise = (cue: string, hasValue: (example: ExampleEvidence) => boolean): boolean => {
    const found = containing(cue);
    if (found.length === 0) return true;
    const precision = found.filter(hasValue).length / found.length;
    const baseRate = examples.filter(hasValue).length / examples.length;
    return precision >= minPrecision && precision >= Math.min(1, baseRate * minLift);
  };
  const top = <T>(items: T[], score: (item: T) => number): T[] =>
    items
      .map((item) => ({ item, value: score(item) }))
      .sort((a, b) => b.value - a.value)
      .slice(0, perError)
      .map((entry) => entry.item);
  return {
    playbook,
    examples,
    weighsPrecision,
    weighsRelations,
    goldEntityKeys,
    candidates,
    add,
    contains,
    count,
    precise,
    top,
  };
}

/** Whether spurious entities of the example matter: precision is weighed, or they crowd gold entities out of the cap. */
export function isCrowded(generation: EditGeneration, example: ExampleEvidence): boolean {
  return (
    generation.weighsPrecision ||
    (example.diagnostics.missedEntities.length > 0 &&
      example.predictedEntityCount >= generation.playbook.extraction.maxEntities)
  );
}
