/**
 * What the viewer reads of the results store and the corpus history:
 *
 * - `example_results`: one row per (evaluator fingerprint, artifact hash,
 *   example id, repeat), valid or not, with its composite, the full
 *   ExampleScoreRecord (diagnostics) and the usage of that execution. The
 *   fingerprint covers every example's text and gold, so an example id names
 *   one content; no row says which partition it served.
 * - the partitions in force at each decision, reconstructed from the corpus
 *   history (`reconstructPartitions` of src/corpus/lifecycle.ts over
 *   `corpus_events` and the decisions).
 *
 * Read-only; every read tolerates a database without those tables (a notebook
 * written before them and opened read-only, hence not migrated): it then
 * holds nothing.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { CorpusEvent, DecisionRecord } from '../corpus/lifecycle.ts';
import { reconstructPartitions } from '../corpus/lifecycle.ts';
import { readCorpusEvents, readDecisionRecords } from '../corpus/lifecycle-store.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { listTables } from '../storage/study-database.ts';
import type { ExampleScoreRow } from '../storage/notebook/view-results-queries.ts';
import {
  readExampleOutcomes,
  readExampleScores,
  sumExampleResultUsage,
} from '../storage/notebook/view-results-queries.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** The three named partitions, in report order. */
export const VIEW_PARTITIONS = ['optimization', 'anchor', 'shadow'] as const;
export type ViewPartition = (typeof VIEW_PARTITIONS)[number];

/** Executor usage of stored results. */
export interface EvaluationUsage {
  /** Executor calls: example-repeats evaluated. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** One stored example-repeat, without its record. */
export interface ResultOutcome {
  repeat: number;
  valid: boolean;
  /** null when invalid. */
  composite: number | null;
  createdAt: string;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
}

/**
 * The stored record of one example-repeat (ExampleScoreRecord, read
 * defensively). `diagnostics` are the task's own JSON: the keys named here
 * are the intent task's (read when present); `feedback` is every task's.
 */
export interface StoredRecord {
  exampleId: string;
  repeat: number;
  valid: boolean;
  composite: number | null;
  /** The task's feedback text (records stored before tasks had one have none). */
  feedback?: string;
  diagnostics?: {
    missedEntities?: string[];
    spuriousEntities?: string[];
    wrongRoles?: Array<{ entity: string; expected: string; predicted: string }>;
    missingBehaviors?: string[];
    appTypeMismatch?: { expected: string[]; predicted: string };
  };
}

/** Reads of `example_results`, memoised per artifact for the life of the object (one page load). */
export interface ExampleResultStore {
  /** False when the database has no `example_results` table. */
  readonly available: boolean;
  /** Every stored example-repeat of one artifact, by example id, repeats ascending. */
  outcomes(fingerprint: string, artifactHash: string): Promise<ReadonlyMap<string, readonly ResultOutcome[]>>;
  /** The stored records of the given examples, repeats 0..repeats−1, by example id (repeats ascending). */
  records(
    fingerprint: string,
    artifactHash: string,
    exampleIds: readonly string[],
    repeats: number,
  ): Promise<Map<string, StoredRecord[]>>;
  /** Every stored result: calls = rows (one execution each: a stored result is never executed again), tokens and cost summed. */
  total(): Promise<EvaluationUsage>;
}

const ZERO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

function parseUsage(text: string): ResultOutcome['usage'] {
  try {
    const usage = JSON.parse(text) as Record<string, unknown>;
    const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
    return {
      inputTokens: number(usage.inputTokens),
      outputTokens: number(usage.outputTokens),
      costUsd: number(usage.costUsd),
    };
  } catch {
    return ZERO_USAGE;
  }
}

function parseRecord(row: ExampleScoreRow): StoredRecord {
  const fallback: StoredRecord = {
    exampleId: row.exampleId,
    repeat: row.repeat,
    valid: row.valid === 1,
    composite: row.composite,
  };
  try {
    const parsed = JSON.parse(row.score) as Record<string, unknown>;
    const diagnostics = parsed.diagnostics;
    return diagnostics !== null && typeof diagnostics === 'object' && !Array.isArray(diagnostics)
      ? { ...fallback, diagnostics: diagnostics as StoredRecord['diagnostics'] }
      : fallback;
  } catch {
    return fallback;
  }
}

/** True when the database has a table of that name. */
export async function hasTable(db: StudyDatabase, name: string): Promise<boolean> {
  return (await listTables(db)).has(name);
}

/** Every stored example-repeat of one artifact, by example id, repeats ascending. */
async function loadOutcomes(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
): Promise<ReadonlyMap<string, readonly ResultOutcome[]>> {
  const byExample = new Map<string, ResultOutcome[]>();
  for (const row of await readExampleOutcomes(db, fingerprint, artifactHash)) {
    const outcome: ResultOutcome = {
      repeat: row.repeat,
      valid: row.valid === 1,
      composite: row.valid === 1 ? row.composite : null,
      createdAt: row.createdAt,
      usage: parseUsage(row.usage),
    };
    const list = byExample.get(row.exampleId);
    if (list === undefined) byExample.set(row.exampleId, [outcome]);
    else list.push(outcome);
  }
  return byExample;
}

/** The stored records of the given examples, repeats 0..repeats−1, by example id (repeats ascending). */
async function loadRecords(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  exampleIds: readonly string[],
  repeats: number,
): Promise<Map<string, StoredRecord[]>> {
  const result = new Map<string, StoredRecord[]>();
  if (exampleIds.length === 0 || repeats < 1) return result;
  for (const row of await readExampleScores(db, fingerprint, artifactHash, exampleIds, repeats)) {
    const list = result.get(row.exampleId);
    if (list === undefined) result.set(row.exampleId, [parseRecord(row)]);
    else list.push(parseRecord(row));
  }
  return result;
}

/** Opens the reads of `example_results` (src/storage/notebook/view-results-queries.ts). */
export async function openExampleResults(db: StudyDatabase): Promise<ExampleResultStore> {
  const available = await hasTable(db, 'example_results');
  const cache = new Map<string, Promise<ReadonlyMap<string, readonly ResultOutcome[]>>>();
  return {
    available,
    outcomes: (fingerprint, artifactHash) => {
      if (!available) return Promise.resolve(new Map());
      const key = `${fingerprint}\u0000${artifactHash}`;
      let entry = cache.get(key);
      if (entry === undefined) {
        entry = loadOutcomes(db, fingerprint, artifactHash);
        cache.set(key, entry);
      }
      return entry;
    },
    records: async (fingerprint, artifactHash, exampleIds, repeats) =>
      available ? loadRecords(db, fingerprint, artifactHash, exampleIds, repeats) : new Map(),
    total: async () => (available ? sumExampleResultUsage(db) : { calls: 0, ...ZERO_USAGE }),
  };
}

/** A composite computed from stored results, and the repeats it covers. */
export interface StoredComposite {
  /** Mean over the valid example-repeats; null when nothing was valid. */
  composite: number | null;
  /** Repeats 0..repeats−1 of every member were read. */
  repeats: number;
}

/**
 * The composite of one artifact on a membership, from its stored results:
 * the mean over the valid example-repeats of repeats 0..R−1, where R is the
 * largest count up to `maxRepeats` for which every member has each of those
 * repeats stored (valid or not). Null — never 0 — when the membership is
 * empty or some member has no stored repeat 0 (the artifact was not
 * evaluated on it). Repeat-major, members in id order: the same mean a fresh
 * evaluation computes, up to the order of the additions (last bits).
 */
export function compositeFromResults(
  outcomes: ReadonlyMap<string, readonly ResultOutcome[]>,
  members: readonly string[],
  maxRepeats: number,
): StoredComposite | null {
  if (members.length === 0 || !(maxRepeats >= 1)) return null;
  let repeats = maxRepeats;
  for (const id of members) {
    const rows = outcomes.get(id) ?? [];
    let complete = 0;
    while (complete < repeats && complete < rows.length && rows[complete]!.repeat === complete) complete += 1;
    repeats = complete;
    if (repeats === 0) return null;
  }
  let sum = 0;
  let valid = 0;
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    for (const id of members) {
      const outcome = outcomes.get(id)![repeat]!;
      if (outcome.valid && outcome.composite !== null) {
        sum += outcome.composite;
        valid += 1;
      }
    }
  }
  return { composite: valid === 0 ? null : sum / valid, repeats };
}

/** Member ids per partition (sorted), null when the history does not know them. */
export type Memberships = Record<ViewPartition, readonly string[] | null>;

/** The partitions in force at each decision, replayed from the corpus history. */
export interface MembershipHistory {
  /**
   * The partitions decision `experimentId` saw (every move recorded before it);
   * `experimentId` one past the last decision gives the partitions now. All
   * null for a decision made before the lifecycle was first recorded.
   */
  at(experimentId: number): Memberships;
}

const UNKNOWN_MEMBERSHIPS: Readonly<Memberships> = Object.freeze({ optimization: null, anchor: null, shadow: null });

const membershipKeys = new WeakMap<readonly string[], string>();

/** An identifier of one membership (SHA-256 of the sorted ids, 16 hex characters); memoised per array. */
export function membershipKey(members: readonly string[]): string {
  let key = membershipKeys.get(members);
  if (key === undefined) {
    key = contentHash([...members].sort().join('\n')).slice(0, 16);
    membershipKeys.set(members, key);
  }
  return key;
}

/** Loads the corpus history once; the partitions at a decision are replayed once per stretch between moves. */
export async function loadMembershipHistory(db: StudyDatabase): Promise<MembershipHistory> {
  let events: CorpusEvent[] = [];
  let decisions: DecisionRecord[] = [];
  try {
    events = await readCorpusEvents(openNotebook(db));
    decisions = await readDecisionRecords(openNotebook(db));
  } catch {
    events = []; // a database without the corpus lifecycle
  }
  // Decisions between the same moves saw the same partitions: replay once per stretch.
  const boundaries = [...new Set(events.map((event) => event.experimentId ?? 0))].sort((left, right) => left - right);
  const stretches = new Map<number, Memberships>();
  return {
    at: (experimentId) => {
      if (events.length === 0) return UNKNOWN_MEMBERSHIPS;
      const stretch = boundaries.filter((boundary) => boundary < experimentId).length;
      let memberships = stretches.get(stretch);
      if (memberships === undefined) {
        const replayed = reconstructPartitions(events, decisions, experimentId);
        memberships = replayed.beforeLifecycle
          ? UNKNOWN_MEMBERSHIPS
          : {
              optimization: replayed.partitions.optimization,
              anchor: replayed.partitions.anchor,
              shadow: replayed.partitions.shadow,
            };
        stretches.set(stretch, memberships);
      }
      return memberships;
    },
  };
}
