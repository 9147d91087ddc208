/**
 * Storage of the corpus lifecycle: members and events of the study database
 * as the lifecycle reads them, over the notebook's corpus store
 * (src/storage/notebook/corpus-store.ts, which holds the SQL). Every change
 * is written in one transaction with its events.
 *
 * Reading the members from a database location, which opens one (and its
 * driver), is lifecycle-file.ts's: the loop, which uses this module with its
 * notebook, reaches no driver.
 */
import { parseStoredEvidence } from '../gate/evidence-schema.ts';
import type {
  CorpusEventRow,
  CorpusHistoryRows,
  CorpusMemberRow,
  CorpusMemberRows,
} from '../storage/notebook/corpus-store.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import { readStoredExample, storedExampleJson } from './stored-example.ts';
import type {
  CorpusEvent,
  CorpusEventKind,
  CorpusMember,
  CorpusMove,
  DecisionRecord,
  MemberPartition,
} from './lifecycle.ts';

/**
 * What the corpus lifecycle reads and writes of the notebook
 * (src/storage/notebook/index.ts): a study's `Notebook`, or one bound to a
 * transaction (`notebook.transaction(…)`), is one.
 */
export type CorpusNotebook = Pick<
  Notebook,
  | 'readCorpusMemberRows'
  | 'readCorpusEventRows'
  | 'writeCorpusMemberRows'
  | 'appendCorpusEventRows'
  | 'incrementShadowExposures'
  | 'readExperimentEvidence'
  | 'lastExperimentId'
> & { transaction<T>(work: (notebook: CorpusNotebook) => Promise<T>): Promise<T> };

function toMember(row: CorpusMemberRow): CorpusMember {
  const member: CorpusMember = {
    exampleId: row.example_id,
    origin: row.origin === 'admitted' ? 'admitted' : 'file',
    source: row.source,
    partition: row.partition as MemberPartition,
    shadowExposures: Number(row.shadow_exposures),
    shadowSince: row.shadow_since,
    admittedAt: row.admitted_at,
    updatedAt: row.updated_at,
  };
  if (row.example !== null) member.example = readStoredExample(row.example, row.example_id);
  return member;
}

function toRow(member: CorpusMember): CorpusMemberRow {
  return {
    example_id: member.exampleId,
    origin: member.origin,
    source: member.source,
    example: member.example === undefined ? null : storedExampleJson(member.example),
    partition: member.partition,
    shadow_exposures: member.shadowExposures,
    shadow_since: member.shadowSince,
    admitted_at: member.admittedAt,
    updated_at: member.updatedAt,
  };
}

function toEvent(row: CorpusEventRow): CorpusEvent {
  return {
    id: row.id,
    exampleId: row.example_id,
    kind: row.kind as CorpusEventKind,
    from: row.from_partition as MemberPartition | null,
    to: row.to_partition as MemberPartition | null,
    reason: row.reason,
    experimentId: row.experiment_id,
    details: JSON.parse(row.details) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** A stored event's details (JSON text), {} when the text is not JSON (as before issue 32). */
function parseDetails(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Adds what the history says to each member: its admission line, who promoted it, rounds served in shadow. */
function annotate(members: CorpusMember[], rows: CorpusHistoryRows): CorpusMember[] {
  const lastMove = new Map(rows.lastMoves.map((row) => [row.example_id, row]));
  const admission = new Map(rows.admissions.map((row) => [row.example_id, parseDetails(row.details)]));
  const entry = new Map(rows.shadowEntries.map((row) => [row.example_id, Number(row.round)]));
  const carriedRounds = carriedShadowRounds(rows.resets, rows.shadowEntryEvents);
  for (const member of members) {
    const line = admission.get(member.exampleId)?.line;
    if (member.origin === 'admitted' && typeof line === 'number') member.line = line;
    const move = lastMove.get(member.exampleId);
    if (move?.kind === 'promoted') {
      const by = parseDetails(move.details).by;
      if (typeof by === 'string') member.promotedBy = by;
    }
    if (member.partition === 'shadow')
      member.shadowRounds =
        (carriedRounds.get(member.exampleId) ?? 0) + Math.max(0, rows.lastRound - (entry.get(member.exampleId) ?? 0));
  }
  return members;
}

/**
 * The rounds a reset with `--keep-corpus-history` carried over: for each
 * member whose last entry into shadow is older than the last reset (so it has
 * stayed in shadow across it), the rounds it had served at the reset.
 */
function carriedShadowRounds(
  resets: Array<{ id: number; details: string }>,
  entries: Array<{ example_id: string; id: number }>,
): Map<string, number> {
  const carried = new Map<string, number>();
  const reset = resets[0];
  if (reset === undefined) return carried;
  const rounds = parseDetails(reset.details).shadowRounds;
  if (rounds === null || typeof rounds !== 'object') return carried;
  const entered = new Map(entries.map((row) => [row.example_id, Number(row.id)]));
  for (const [id, count] of Object.entries(rounds as Record<string, unknown>)) {
    if (typeof count === 'number' && (entered.get(id) ?? 0) < Number(reset.id)) carried.set(id, count);
  }
  return carried;
}

/** The members of stored rows, with what the history says of them. */
export function membersOf(rows: CorpusMemberRows): CorpusMember[] {
  const members = rows.members.map(toMember);
  return rows.history === null ? members : annotate(members, rows.history);
}

/** Every member, by id, with what the history says of it (admission line, promotion, rounds in shadow). */
export async function readCorpusMembers(notebook: CorpusNotebook): Promise<CorpusMember[]> {
  return membersOf(await notebook.readCorpusMemberRows());
}

/** The fingerprints of the corpus-file refusals already in the history (so a record refused at every run is noted once). */
export async function readRefusalFingerprints(notebook: CorpusNotebook): Promise<Set<string>> {
  const rows = await notebook.readCorpusEventRows('refused');
  const fingerprints = new Set<string>();
  for (const row of rows) {
    const fingerprint = parseDetails(row.details).fingerprint;
    if (typeof fingerprint === 'string') fingerprints.add(fingerprint);
  }
  return fingerprints;
}

/** Every event, oldest first. */
export async function readCorpusEvents(notebook: CorpusNotebook): Promise<CorpusEvent[]> {
  return (await notebook.readCorpusEventRows()).map(toEvent);
}

/**
 * Every experiment as the reconstruction reads it (id, and whether the gate consulted shadow).
 *
 * @throws StorageError naming the experiment and the field when an experiment's stored evidence is malformed
 *   (src/gate/evidence-schema.ts): it is never read as "shadow not consulted"
 */
export async function readDecisionRecords(notebook: CorpusNotebook): Promise<DecisionRecord[]> {
  const rows = await notebook.readExperimentEvidence();
  return rows.map((row) => ({
    id: row.id,
    shadowConsulted: parseStoredEvidence(row.evidence, row.id).shadowConsulted,
  }));
}

/** The id of the last experiment recorded, or null when there is none. */
export async function lastExperimentId(notebook: CorpusNotebook): Promise<number | null> {
  return notebook.lastExperimentId();
}

/** Writes members (insert or replace). */
export async function writeMembers(notebook: CorpusNotebook, members: readonly CorpusMember[]): Promise<void> {
  await notebook.writeCorpusMemberRows(members.map(toRow));
}

/** Appends moves to the history, stamped with `experimentId` and `at`. */
export async function writeMoves(
  notebook: CorpusNotebook,
  moves: readonly CorpusMove[],
  experimentId: number | null,
  at: string,
): Promise<void> {
  await notebook.appendCorpusEventRows(
    moves.map((move) => ({
      example_id: move.exampleId,
      kind: move.kind,
      from_partition: move.from,
      to_partition: move.to,
      reason: move.reason,
      experiment_id: experimentId,
      details: JSON.stringify(move.details ?? {}),
      created_at: at,
    })),
  );
}

/**
 * Applies moves decided at a round boundary (graduation or rotation), with
 * their events, in one transaction. Returns the members as they now are.
 */
export async function applyBoundaryMoves(
  notebook: CorpusNotebook,
  moves: readonly CorpusMove[],
  now: () => Date = () => new Date(),
): Promise<CorpusMember[]> {
  return notebook.transaction(async (transaction) => {
    const at = now().toISOString();
    const members = await readCorpusMembers(transaction);
    const byId = new Map(members.map((member) => [member.exampleId, member]));
    const changed: CorpusMember[] = [];
    for (const move of moves) {
      const member = move.exampleId === null ? undefined : byId.get(move.exampleId);
      if (member === undefined || move.to === null || member.partition !== move.from) continue;
      const next: CorpusMember = { ...member, partition: move.to, updatedAt: at };
      byId.set(member.exampleId, next);
      changed.push(next);
    }
    await writeMembers(transaction, changed);
    await writeMoves(
      transaction,
      moves.filter((move) => changed.some((member) => member.exampleId === move.exampleId)),
      await lastExperimentId(transaction),
      at,
    );
    return [...byId.values()];
  });
}

/**
 * Counts one use of the shadow partition by a gate decision: +1 exposure for
 * each of `shadowIds` (the shadow examples the decision evaluated). Call it
 * inside the transaction that records the decision, so a decision is counted
 * exactly once.
 */
export async function recordShadowExposure(
  notebook: CorpusNotebook,
  shadowIds: readonly string[],
  now: () => Date = () => new Date(),
): Promise<void> {
  await notebook.incrementShadowExposures(shadowIds, now);
}
