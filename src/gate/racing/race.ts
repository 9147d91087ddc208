/**
 * A race: the candidates of a round evaluated against one incumbent, batch
 * by batch on the same plan (`race-plan.ts`), pure state with no I/O.
 *
 * The loop drives it: {@link nextBatch} says which candidates are due for
 * which batch; the loop evaluates that batch for each of them and hands the
 * scores to {@link observe}; {@link verdicts} then applies, to every
 * candidate that just received a batch:
 *
 * - **complete**: its last batch is in: the full evaluation is done and the
 *   gate decides, exactly as without racing;
 * - **futile**: the futility rule (`futility.ts`) stopped it: refused;
 * - **set aside**: behind the *leader* (the candidate with the highest
 *   observed gain), either significantly — the anytime-valid bound (betting
 *   confidence sequence at α) on its paired differences with the leader, on
 *   the example-repeats both have, lies wholly below 0 — or while the leader
 *   is likely to be accepted (its predictive power is at least
 *   {@link LIKELY_LEADER_POWER}): it would then be rebased onto the leader
 *   and evaluated again, so evaluating it now would be paid twice. A
 *   candidate set aside is not refused: kloop rebases, never discards (one
 *   behind a better one may still be a real gain once the better one is
 *   merged). It stops paying until the leader is decided; if the leader is
 *   refused it rejoins the race where it stood, if the leader is accepted the
 *   loop rebases it onto the new incumbent and races it again. Setting aside
 *   changes only the order and the cost of the evaluations, never a
 *   decision's statistics.
 *
 * {@link settle} records the gate's decision on a complete candidate (and a
 * futility refusal) so the candidates set aside behind it rejoin.
 *
 * Source: the racing of F-Race (Birattari, Stützle, Paquete & Varrentrapp
 * 2002), with an anytime-valid comparison in place of Friedman's test.
 *
 * @module
 */
import type { ExampleScoreRecord } from '../../evaluator/partition-score.ts';
import { differenceIsBelow, meanDifferenceBounds } from '../../stats/index.ts';
import type { FutilityAssessment, FutilityContext, FutilityReason, RacingSettings } from './futility.ts';
import { assessFutility, clip } from './futility.ts';
import type { SequentialLook } from '../sequential.ts';
import { earlyEvidence, type EarlyEvidence } from './early-looks.ts';
import type { RacePlan } from './race-plan.ts';
import { slotKey } from './race-plan.ts';

/**
 * A leader at least this likely to pass (predictive power of its final test)
 * sets the candidates behind it aside until it is decided.
 */
export const LIKELY_LEADER_POWER = 0.5;

/** Where a candidate stands in the race. */
export type RaceStatus = 'racing' | 'set_aside' | 'complete' | 'futile' | 'settled';

/** One candidate in the race. */
export interface RaceEntry {
  readonly key: string;
  status: RaceStatus;
  /** Index of the next batch to evaluate (= batches evaluated). */
  next: number;
  /** The candidate's composite of each evaluated example-repeat (null: invalid), by {@link slotKey}. */
  readonly scores: Map<string, number | null>;
  /** Paired differences with the incumbent (examples valid for both), in plan order. */
  differences: number[];
  /** Example-repeats evaluated (valid or not). */
  evaluated: number;
  /** The assessment after the last batch (null before the first). */
  assessment: FutilityAssessment | null;
  /** The leader it was set aside behind (null unless set aside). */
  behind: string | null;
  /** Why it was set aside: significantly behind the leader, or behind a leader likely to be accepted. */
  behindBecause: 'significantly_behind' | 'likely_leader' | null;
  /** Times it was set aside in this race. */
  setAsideCount: number;
  /** The rule that stopped it, when futile. */
  futility: FutilityReason | null;
  /** The interim looks of early acceptance taken (early-looks.ts). */
  looks: SequentialLook[];
  /** True when an interim look passed: complete on part of the plan. */
  early: boolean;
}

/** A race against one incumbent. */
export interface Race {
  readonly plan: RacePlan;
  readonly context: FutilityContext;
  readonly settings: RacingSettings;
  /** The incumbent's mean composite of each example valid for it. */
  readonly incumbentMeans: ReadonlyMap<string, number>;
  readonly entries: RaceEntry[];
  /** Entries that received a batch since the last {@link verdicts}. */
  readonly pending: Set<string>;
}

/** What {@link verdicts} found after a step. */
export interface RaceStep {
  /** Complete entries, best observed gain first: the gate decides them, in this order. */
  complete: RaceEntry[];
  /** Entries stopped for futility (refused). */
  futile: RaceEntry[];
  /** Entries set aside behind the leader in this step. */
  setAside: RaceEntry[];
}

/** Starts a race of `keys` (candidate keys, e.g. content hashes) against the incumbent. */
export function createRace(options: {
  plan: RacePlan;
  context: FutilityContext;
  settings: RacingSettings;
  incumbentMeans: ReadonlyMap<string, number>;
  keys: readonly string[];
}): Race {
  return {
    plan: options.plan,
    context: options.context,
    settings: options.settings,
    incumbentMeans: options.incumbentMeans,
    entries: [...new Set(options.keys)].map((key) => ({
      key,
      status: 'racing',
      next: 0,
      scores: new Map(),
      differences: [],
      evaluated: 0,
      assessment: null,
      behind: null,
      behindBecause: null,
      setAsideCount: 0,
      futility: null,
      looks: [],
      early: false,
    })),
    pending: new Set(),
  };
}

/** The entry of `key`. @throws Error for a key not in the race */
export function entryOf(race: Race, key: string): RaceEntry {
  const entry = race.entries.find((candidate) => candidate.key === key);
  if (entry === undefined) throw new Error(`no candidate ${key} in this race`);
  return entry;
}

/**
 * The next batch to evaluate and for whom: the racing entries furthest
 * behind (lockstep; an entry that rejoined catches up first), or null when
 * no entry is racing.
 */
export function nextBatch(race: Race): { batch: number; keys: string[] } | null {
  const racing = race.entries.filter((entry) => entry.status === 'racing' && entry.next < race.plan.batches.length);
  if (racing.length === 0) return null;
  const batch = Math.min(...racing.map((entry) => entry.next));
  return { batch, keys: racing.filter((entry) => entry.next === batch).map((entry) => entry.key) };
}

/**
 * Records the scores of `key`'s next batch. Records of example-repeats not in
 * the batch are ignored; one the records lack (a transient failure) counts
 * as not evaluated.
 */
export function observe(
  race: Race,
  key: string,
  records: ReadonlyArray<
    Pick<ExampleScoreRecord, 'exampleId' | 'repeat' | 'valid'> & { composite?: number; transient?: true }
  >,
): void {
  const entry = entryOf(race, key);
  if (entry.status !== 'racing') throw new Error(`candidate ${key} is ${entry.status}, not racing`);
  const batch = race.plan.batches[entry.next];
  if (batch === undefined) throw new Error(`candidate ${key} has no batch left`);
  const bySlot = new Map(records.map((record) => [slotKey(record), record]));
  for (const slot of batch) {
    const record = bySlot.get(slotKey(slot));
    if (record === undefined || record.transient === true) continue;
    entry.scores.set(slotKey(slot), record.valid && typeof record.composite === 'number' ? record.composite : null);
    entry.evaluated += 1;
  }
  entry.next += 1;
  entry.differences = differencesOf(race, entry);
  race.pending.add(key);
}

function differencesOf(race: Race, entry: RaceEntry): number[] {
  const differences: number[] = [];
  for (const batch of race.plan.batches.slice(0, entry.next)) {
    for (const slot of batch) {
      const score = entry.scores.get(slotKey(slot));
      const incumbent = race.incumbentMeans.get(slot.exampleId);
      if (typeof score === 'number' && incumbent !== undefined) differences.push(score - incumbent);
    }
  }
  return differences;
}

/** Example-repeats of the plan not evaluated yet by the entry, of examples valid for the incumbent. */
function remainingOf(race: Race, entry: RaceEntry): number {
  let remaining = 0;
  for (const batch of race.plan.batches.slice(entry.next))
    for (const slot of batch) if (race.incumbentMeans.has(slot.exampleId)) remaining += 1;
  return remaining;
}

/** The observed gain used to rank entries (0 before any pair). */
function gainOf(entry: RaceEntry): number {
  return (
    entry.assessment?.delta ??
    (entry.differences.length === 0
      ? 0
      : entry.differences.reduce((sum, value) => sum + value, 0) / entry.differences.length)
  );
}

/** Best observed gain first (then more pairs, then key). */
export const byStanding = (left: RaceEntry, right: RaceEntry): number =>
  gainOf(right) - gainOf(left) ||
  right.differences.length - left.differences.length ||
  left.key.localeCompare(right.key);

/** Paired differences entry − leader on the example-repeats both have valid scores for. */
function differencesWith(entry: RaceEntry, leader: RaceEntry): number[] {
  const differences: number[] = [];
  for (const [slot, score] of entry.scores) {
    const other = leader.scores.get(slot);
    if (typeof score === 'number' && typeof other === 'number') differences.push(score - other);
  }
  return differences;
}

/**
 * Applies the verdicts to the entries that received a batch since the last
 * call (see the module comment) and returns what changed.
 */
export function verdicts(race: Race): RaceStep {
  const step: RaceStep = { complete: [], futile: [], setAside: [] };
  for (const key of race.pending) {
    const entry = entryOf(race, key);
    if (entry.status !== 'racing') continue;
    const remaining = remainingOf(race, entry);
    entry.assessment = assessFutility(entry.differences, remaining, race.context, race.settings);
    if (entry.next >= race.plan.batches.length) {
      entry.status = 'complete';
      step.complete.push(entry);
    } else if (entry.assessment.futile !== null) {
      entry.status = 'futile';
      entry.futility = entry.assessment.futile;
      step.futile.push(entry);
    }
  }
  race.pending.clear();
  const contenders = race.entries.filter((entry) => entry.status === 'racing' || entry.status === 'complete');
  const leader = [...contenders].sort(byStanding)[0];
  if (leader !== undefined) {
    const likely = leader.status === 'complete' || (leader.assessment?.predictivePower ?? 0) >= LIKELY_LEADER_POWER;
    for (const entry of race.entries) {
      if (entry.status !== 'racing' || entry === leader) continue;
      let because: RaceEntry['behindBecause'] = null;
      const behind = differencesWith(entry, leader);
      if (behind.length >= 2 && differenceIsBelow(clip(behind), 0, { alpha: race.context.alpha }))
        because = 'significantly_behind';
      else if (likely && entry.next > 0) because = 'likely_leader';
      if (because !== null) {
        entry.status = 'set_aside';
        entry.behind = leader.key;
        entry.behindBecause = because;
        entry.setAsideCount += 1;
        step.setAside.push(entry);
      }
    }
  }
  step.complete.sort(byStanding);
  return step;
}

/**
 * Records the decision on a complete or futile entry. A refusal brings the
 * entries set aside behind it back into the race (where they stood); after an
 * acceptance the loop starts a new race against the new incumbent.
 */
export function settle(race: Race, key: string, outcome: 'accepted' | 'refused'): void {
  const entry = entryOf(race, key);
  entry.status = 'settled';
  if (outcome === 'accepted') return;
  for (const other of race.entries) {
    if (other.status === 'set_aside' && other.behind === key) {
      other.status = 'racing';
      other.behind = null;
      other.behindBecause = null;
    }
  }
}

/** True when no entry can move: none racing (the loop then decides the complete ones, or stops). */
export function isIdle(race: Race): boolean {
  return nextBatch(race) === null;
}

/**
 * The race evidence of an entry, as stored with its decision: what was
 * evaluated, why it stopped, the predictive power and the anytime-valid
 * bound on its gain.
 */
export function raceEvidence(race: Race, key: string, stop: RaceEvidence['stop']): RaceEvidence {
  const entry = entryOf(race, key);
  const examples = new Set<string>();
  const repeats = new Set<number>();
  for (const batch of race.plan.batches.slice(0, entry.next)) {
    for (const slot of batch) {
      if (!entry.scores.has(slotKey(slot))) continue;
      examples.add(slot.exampleId);
      repeats.add(slot.repeat);
    }
  }
  const assessment = entry.assessment;
  const bound =
    entry.differences.length === 0
      ? { lower: -1, upper: 1 }
      : meanDifferenceBounds(clip(entry.differences), { alpha: race.context.alpha, tolerance: 1e-6 });
  return {
    stop,
    ...(entry.futility !== null ? { rule: entry.futility } : {}),
    batches: entry.next,
    of: race.plan.batches.length,
    batchSize: race.plan.batchSize,
    evaluated: entry.evaluated,
    planned: race.plan.total,
    examples: examples.size,
    repeats: repeats.size,
    pairs: entry.differences.length,
    delta: assessment?.delta ?? 0,
    critical: assessment?.critical ?? race.context.margin,
    predictivePower: assessment?.predictivePower ?? 1,
    futilityLevel: race.settings.futilityLevel,
    bound: { alpha: race.context.alpha, lower: bound.lower, upper: bound.upper },
    margin: race.context.margin,
    setAside: entry.setAsideCount,
    seed: race.plan.seed,
    ...earlyEvidence(race, entry),
  };
}

/** The race evidence of a decision (stored under `racing` in the experiment's evidence). */
export interface RaceEvidence {
  /** `futility`: stopped early and refused; `complete`: every batch evaluated, the gate decided; `early`: an interim look of early acceptance passed, the gate decided on the repeats so far. */
  stop: 'futility' | 'complete' | 'early';
  /** The futility rule that stopped it: `predictive_power` or `bound`. */
  rule?: FutilityReason;
  /** Batches evaluated, of the plan's. */
  batches: number;
  of: number;
  batchSize: number;
  /** Example-repeats evaluated, of the plan's n × R. */
  evaluated: number;
  planned: number;
  /** Distinct examples and repeats among the evaluated example-repeats. */
  examples: number;
  repeats: number;
  /** Paired differences with the incumbent (valid for both). */
  pairs: number;
  /** Mean paired difference, composite units. */
  delta: number;
  /** The gain the final gate is estimated to need. */
  critical: number;
  /** Predictive power of the final test at the last look. */
  predictivePower: number;
  futilityLevel: number;
  /** The anytime-valid bound on the mean paired difference (betting confidence sequence at α). */
  bound: { alpha: number; lower: number; upper: number };
  margin: number;
  /** Times it was set aside behind a leader. */
  setAside: number;
  /** The plan's seed. */
  seed: number;
  /** Early acceptance (when on): its rule, test, looks and the level they spent. */
  early?: EarlyEvidence;
}
