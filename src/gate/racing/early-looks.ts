/**
 * Early acceptance in the race: the interim looks of the sequential test
 * (src/gate/sequential.ts) at the end of each complete repeat k, 2 ≤ k < R,
 * of a candidate's optimization plan, and what they leave to the final look.
 *
 * The race says when a look is due ({@link dueLook}: the level it may spend
 * given the looks taken before); the driver (run-race.ts) asks its caller to
 * judge the candidate's first k repeats at that level (the gate's margin and
 * significance check, {@link optimizationLook}) and records the outcome
 * ({@link recordLook}). A look that passes ends the candidate's optimization
 * evaluation: it is complete (`stop: 'early'`) and the gate decides it — on
 * those k repeats at the look's level, its anchors and shadow in full.
 * A candidate whose looks all failed is decided on its full evaluation at
 * the level the looks left ({@link sequentialJudgementOf}).
 *
 * @module
 */
import type { SequentialJudgement, SequentialLook } from '../sequential.ts';
import { finalLevel, interimLevel, type EarlyAcceptanceRule, type EarlyAcceptanceTest } from '../sequential.ts';
import { DEFAULT_EARLY_TEST } from '../gate-defaults.ts';
import type { Race, RaceEntry, RaceEvidence } from './race.ts';

export { DEFAULT_EARLY_TEST };

/** Early acceptance's part of the race evidence. */
export interface EarlyEvidence {
  rule: EarlyAcceptanceRule;
  test: EarlyAcceptanceTest;
  /** The α the looks spent from (the race's: gate.alpha). */
  alpha: number;
  /** The interim looks taken, in order. */
  looks: SequentialLook[];
  /** The level the interim looks spent; the final look is at alpha − spent. */
  spent: number;
}

/** Complete repeats among the plan positions the entry has evaluated (repeat-major plan). */
export function completeRepeats(race: Race, entry: RaceEntry): number {
  let positions = 0;
  for (const batch of race.plan.batches.slice(0, entry.next)) positions += batch.length;
  return race.plan.examples === 0 ? 0 : Math.floor(positions / race.plan.examples);
}

const ruleOf = (race: Race): EarlyAcceptanceRule => race.settings.earlyAcceptance ?? 'off';
const spentOf = (entry: RaceEntry): number => entry.looks.reduce((sum, look) => sum + look.level, 0);

/**
 * The interim look due for the entry after its last batch, or null: early
 * acceptance is on, the entry is still racing (or set aside), it has just
 * completed k repeats with 2 ≤ k < R that it has not looked at, and the look
 * has a level above 0 to spend.
 */
export function dueLook(race: Race, key: string): { repeats: number; of: number; level: number } | null {
  const rule = ruleOf(race);
  const entry = race.entries.find((candidate) => candidate.key === key);
  if (rule === 'off' || entry === undefined) return null;
  if (entry.status !== 'racing' && entry.status !== 'set_aside') return null;
  const of = race.plan.repeats;
  const repeats = completeRepeats(race, entry);
  if (repeats < 2 || repeats >= of || entry.looks.some((look) => look.repeats >= repeats)) return null;
  const level = interimLevel(rule, repeats / of, race.context.alpha, spentOf(entry));
  return level > 0 ? { repeats, of, level } : null;
}

/** Records a look; one that passed makes the entry complete on part of its plan (`early`). */
export function recordLook(race: Race, key: string, look: Omit<SequentialLook, 'spent'>): RaceEntry {
  const entry = race.entries.find((candidate) => candidate.key === key);
  if (entry === undefined) throw new Error(`no candidate ${key} in this race`);
  entry.looks.push({ ...look, spent: spentOf(entry) + look.level });
  if (look.passed) {
    entry.status = 'complete';
    entry.early = true;
    entry.behind = null;
    entry.behindBecause = null;
  }
  return entry;
}

/** `{ early }` for the race evidence when early acceptance is on, else `{}`. */
export function earlyEvidence(race: Race, entry: RaceEntry): { early?: EarlyEvidence } {
  const rule = ruleOf(race);
  if (rule === 'off') return {};
  return {
    early: {
      rule,
      test: race.settings.earlyTest ?? DEFAULT_EARLY_TEST,
      alpha: race.context.alpha,
      looks: entry.looks.map((look) => ({ ...look })),
      spent: spentOf(entry),
    },
  };
}

/**
 * How the gate judges a raced candidate's optimization partition at level
 * `alpha` (the gate's, which a re-trial lowers): undefined when no interim
 * look was taken (as without early acceptance); after an early pass, the
 * last look's level and test; else the final look at what the looks left.
 * The looks are replayed at `alpha`, so a gate at a lower level than the
 * race's spends less at every look (a stricter judgement, never a looser one).
 */
export function sequentialJudgementOf(evidence: RaceEvidence, alpha: number): SequentialJudgement | undefined {
  const early = evidence.early;
  if (early === undefined || early.looks.length === 0) return undefined;
  let spent = 0;
  let last = 0;
  for (const look of early.looks) {
    last = interimLevel(early.rule, look.repeats / look.of, Math.min(alpha, early.alpha), spent);
    spent += last;
  }
  if (evidence.stop === 'early') return { level: last, test: early.test };
  return { level: finalLevel(alpha, spent), test: 'gate' };
}
