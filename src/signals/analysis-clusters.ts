/**
 * The per-cluster counters of the Loop D analysis (./analysis.ts): a name
 * counter keeping the most frequent spelling, the state of one cluster and
 * the most recent distinct example goals.
 */
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { CountedName } from './analysis-types.ts';
import type { SignalAssemblyMethod, StoredSignal } from './signal.ts';
import { ASSEMBLY_METHODS } from './signal.ts';

/** Counts signals per name, keeping the most frequent spelling of each normalised name. */
export class NameCounter {
  private readonly counts = new Map<string, { count: number; spellings: Map<string, number> }>();

  /** Adds the names of one signal (each normalised name counted once per signal). */
  addSignal(names: readonly string[], normalize: (name: string) => string): void {
    const seen = new Set<string>();
    for (const name of names) {
      const key = normalize(name);
      if (key === '' || seen.has(key)) continue;
      seen.add(key);
      let entry = this.counts.get(key);
      if (entry === undefined) {
        entry = { count: 0, spellings: new Map() };
        this.counts.set(key, entry);
      }
      entry.count += 1;
      entry.spellings.set(name, (entry.spellings.get(name) ?? 0) + 1);
    }
  }

  has(key: string): boolean {
    return this.counts.has(key);
  }

  /** Entries sorted by count (desc), then name; `share` = count / total. */
  top(total: number, limit = Number.POSITIVE_INFINITY): Array<CountedName & { key: string }> {
    return [...this.counts.entries()]
      .map(([key, entry]) => ({
        key,
        name: mostFrequent(entry.spellings),
        count: entry.count,
        share: total > 0 ? entry.count / total : 0,
      }))
      .sort((left, right) => right.count - left.count || (left.key < right.key ? -1 : left.key > right.key ? 1 : 0))
      .slice(0, limit);
  }
}

function mostFrequent(spellings: Map<string, number>): string {
  let best = '';
  let bestCount = -1;
  for (const [name, count] of spellings) {
    if (count > bestCount || (count === bestCount && name < best)) {
      best = name;
      bestCount = count;
    }
  }
  return best;
}

export const identity = (name: string): string => name;
export const entityKey = (name: string): string => normalizeEntityName(name);

export interface ClusterState {
  appClass: string;
  hasCommitments: boolean;
  bucket: string;
  size: number;
  methods: Record<SignalAssemblyMethod, number>;
  confidenceSum: number;
  entities: NameCounter;
  behaviors: NameCounter;
  patterns: NameCounter;
  versions: NameCounter;
  /** Most recent goals first, at most `exampleGoals`. */
  goals: Array<{ time: string; id: string; goal: string }>;
  firstSeen: string;
  lastSeen: string;
}

export function emptyMethods(): Record<SignalAssemblyMethod, number> {
  return Object.fromEntries(ASSEMBLY_METHODS.map((method) => [method, 0])) as Record<SignalAssemblyMethod, number>;
}

export function keepRecentGoal(goals: ClusterState['goals'], signal: StoredSignal, limit: number): void {
  const goal = signal.goal;
  if (goal === null) return;
  const existing = goals.findIndex((entry) => entry.goal === goal);
  const candidate = { time: signal.time, id: signal.id, goal };
  const newer = (left: typeof candidate, right: typeof candidate): boolean =>
    Date.parse(left.time) > Date.parse(right.time) || (left.time === right.time && left.id < right.id);
  if (existing !== -1) {
    if (newer(candidate, goals[existing]!)) goals.splice(existing, 1);
    else return;
  }
  goals.push(candidate);
  goals.sort((left, right) => (newer(left, right) ? -1 : newer(right, left) ? 1 : 0));
  if (goals.length > limit) goals.length = limit;
}
