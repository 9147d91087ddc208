/**
 * Storage of the corpus lifecycle: the `corpus_members` and `corpus_events`
 * tables of the study database (migration `0003_corpus_lifecycle`), through
 * Kysely. Every change is written in one transaction with its events.
 *
 * {@link readCorpusMembersFile} is the one synchronous reader: `loadStudy`
 * (synchronous) uses it to resolve partitions from the SQLite study database
 * before any command runs.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { StorageError } from '../errors.ts';
import { databaseExists, openDatabase } from '../storage/database.ts';
import { isPostgresUrl } from '../storage/location.ts';
import type { CorpusEventTable, CorpusMemberTable, KloopDatabase } from '../storage/schema.ts';
import { readStoredExample, storedExampleJson } from './stored-example.ts';
import type {
  CorpusEvent,
  CorpusEventKind,
  CorpusMember,
  CorpusMove,
  DecisionRecord,
  MemberPartition,
} from './lifecycle.ts';

/** The study database (or a transaction on it). */
export type CorpusDatabase = Kysely<KloopDatabase>;

function toMember(row: CorpusMemberTable): CorpusMember {
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

function toRow(member: CorpusMember): CorpusMemberTable {
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

function toEvent(row: Omit<CorpusEventTable, 'id'> & { id: number }): CorpusEvent {
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

/** The latest move into a partition of each member (who placed it there, and when it entered shadow). */
const LAST_MOVES_SQL = `select e.example_id as example_id, e.kind as kind, e.to_partition as to_partition, e.details as details
  from corpus_events e
  where e.id in (select max(id) from corpus_events where example_id is not null and to_partition is not null group by example_id)`;
/** The latest admission of each admitted member (its line). */
const ADMISSIONS_SQL = `select example_id, details from corpus_events
  where id in (select max(id) from corpus_events where kind = 'admitted' and example_id is not null group by example_id)`;
/** The round in which each member last entered shadow (0: before any experiment), and the last round of the notebook. */
const SHADOW_ENTRY_SQL = `select e.example_id as example_id, coalesce(x.round, 0) as round
  from corpus_events e left join experiments x on x.id = e.experiment_id
  where e.id in (select max(id) from corpus_events where to_partition = 'shadow' and example_id is not null group by example_id)`;
const LAST_ROUND_SQL = 'select coalesce(max(round), 0) as round from experiments';
/** The last reset that kept the corpus history: its id and the rounds it carried over. */
const LAST_RESET_SQL = "select id, details from corpus_events where kind = 'reset' order by id desc limit 1";
/** The id of the event by which each member last entered shadow. */
const SHADOW_ENTRY_EVENT_SQL = `select example_id, max(id) as id from corpus_events where to_partition = 'shadow' and example_id is not null group by example_id`;

interface AnnotationRows {
  lastMoves: Array<{ example_id: string; kind: string; details: string }>;
  admissions: Array<{ example_id: string; details: string }>;
  shadowEntries: Array<{ example_id: string; round: number }>;
  lastRound: number;
  /** Rounds served in shadow before the last reset, for members still in shadow since before it. */
  carriedRounds: Map<string, number>;
}

function parseDetails(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Adds what the history says to each member: its admission line, who promoted it, rounds served in shadow. */
function annotate(members: CorpusMember[], rows: AnnotationRows): CorpusMember[] {
  const lastMove = new Map(rows.lastMoves.map((row) => [row.example_id, row]));
  const admission = new Map(rows.admissions.map((row) => [row.example_id, parseDetails(row.details)]));
  const entry = new Map(rows.shadowEntries.map((row) => [row.example_id, Number(row.round)]));
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
        (rows.carriedRounds.get(member.exampleId) ?? 0) +
        Math.max(0, rows.lastRound - (entry.get(member.exampleId) ?? 0));
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

/** Every member, by id, with what the history says of it (admission line, promotion, rounds in shadow). */
export async function readCorpusMembers(db: CorpusDatabase): Promise<CorpusMember[]> {
  const rows = await db.selectFrom('corpus_members').selectAll().orderBy('example_id').execute();
  const members = rows.map(toMember);
  if (members.length === 0) return members;
  const run = async <Row>(text: string): Promise<Row[]> => (await sql<Row>`${sql.raw(text)}`.execute(db)).rows;
  return annotate(members, {
    lastMoves: await run(LAST_MOVES_SQL),
    admissions: await run(ADMISSIONS_SQL),
    shadowEntries: await run(SHADOW_ENTRY_SQL),
    lastRound: Number((await run<{ round: number }>(LAST_ROUND_SQL))[0]?.round ?? 0),
    carriedRounds: carriedShadowRounds(await run(LAST_RESET_SQL), await run(SHADOW_ENTRY_EVENT_SQL)),
  });
}

/** The fingerprints of the corpus-file refusals already in the history (so a record refused at every run is noted once). */
export async function readRefusalFingerprints(db: CorpusDatabase): Promise<Set<string>> {
  const rows = await db.selectFrom('corpus_events').select('details').where('kind', '=', 'refused').execute();
  const fingerprints = new Set<string>();
  for (const row of rows) {
    const fingerprint = parseDetails(row.details).fingerprint;
    if (typeof fingerprint === 'string') fingerprints.add(fingerprint);
  }
  return fingerprints;
}

/** Every event, oldest first. */
export async function readCorpusEvents(db: CorpusDatabase): Promise<CorpusEvent[]> {
  const rows = await db.selectFrom('corpus_events').selectAll().orderBy('id').execute();
  return rows.map(toEvent);
}

/** Every experiment as the reconstruction reads it (id, and whether the gate consulted shadow). */
export async function readDecisionRecords(db: CorpusDatabase): Promise<DecisionRecord[]> {
  const rows = await db.selectFrom('experiments').select(['id', 'evidence']).orderBy('id').execute();
  return rows.map((row) => {
    let consulted = false;
    try {
      consulted = (JSON.parse(row.evidence) as { shadowConsulted?: unknown }).shadowConsulted === true;
    } catch {
      consulted = false;
    }
    return { id: row.id, shadowConsulted: consulted };
  });
}

/** The id of the last experiment recorded, or null when there is none. */
export async function lastExperimentId(db: CorpusDatabase): Promise<number | null> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.max<number>('id').as('id'))
    .executeTakeFirst();
  return row?.id === null || row?.id === undefined ? null : Number(row.id);
}

/** Writes members (insert or replace). */
export async function writeMembers(db: CorpusDatabase, members: readonly CorpusMember[]): Promise<void> {
  for (const member of members) {
    const row = toRow(member);
    await db
      .insertInto('corpus_members')
      .values(row)
      .onConflict((conflict) => conflict.column('example_id').doUpdateSet({ ...row }))
      .execute();
  }
}

/** Appends moves to the history, stamped with `experimentId` and `at`. */
export async function writeMoves(
  db: CorpusDatabase,
  moves: readonly CorpusMove[],
  experimentId: number | null,
  at: string,
): Promise<void> {
  for (const move of moves) {
    await db
      .insertInto('corpus_events')
      .values({
        example_id: move.exampleId,
        kind: move.kind,
        from_partition: move.from,
        to_partition: move.to,
        reason: move.reason,
        experiment_id: experimentId,
        details: JSON.stringify(move.details ?? {}),
        created_at: at,
      })
      .execute();
  }
}

/**
 * Applies moves decided at a round boundary (graduation or rotation), with
 * their events, in one transaction. Returns the members as they now are.
 */
export async function applyBoundaryMoves(
  db: CorpusDatabase,
  moves: readonly CorpusMove[],
  now: () => Date = () => new Date(),
): Promise<CorpusMember[]> {
  return db.transaction().execute(async (transaction) => {
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
  db: CorpusDatabase,
  shadowIds: readonly string[],
  now: () => Date = () => new Date(),
): Promise<void> {
  if (shadowIds.length === 0) return;
  const at = now().toISOString();
  for (let start = 0; start < shadowIds.length; start += 500) {
    await db
      .updateTable('corpus_members')
      .set((eb) => ({ shadow_exposures: eb('shadow_exposures', '+', 1), updated_at: at }))
      .where('example_id', 'in', shadowIds.slice(start, start + 500))
      .where('partition', '=', 'shadow')
      .execute();
  }
}

/**
 * Reads the members from a study database location (a SQLite file or a
 * PostgreSQL URL: src/storage/location.ts), read-only. Returns an empty list
 * when there is no notebook there yet.
 *
 * @throws StorageError when the notebook exists but cannot be read
 */
export async function readCorpusMembersAt(location: string): Promise<CorpusMember[]> {
  if (!isPostgresUrl(location)) return readCorpusMembersFile(location);
  if (!(await databaseExists(location))) return [];
  const db = await openDatabase(location, { readonly: true });
  try {
    return await readCorpusMembers(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Reads the members from a SQLite study database file, synchronously and
 * read-only. Returns an empty list when the file or the table does not exist
 * yet (a study that has not run since the lifecycle was added).
 *
 * @throws StorageError when the file exists but cannot be read
 */
export function readCorpusMembersFile(file: string): CorpusMember[] {
  if (!existsSync(file)) return [];
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(file, { readonly: true, fileMustExist: true });
    const table = sqlite
      .prepare("select name from sqlite_master where type = 'table' and name = 'corpus_members'")
      .get();
    if (table === undefined) return [];
    const rows = sqlite.prepare('select * from corpus_members order by example_id').all() as CorpusMemberTable[];
    const members = rows.map(toMember);
    if (members.length === 0) return members;
    const all = <Row>(text: string): Row[] => sqlite!.prepare(text).all() as Row[];
    return annotate(members, {
      lastMoves: all(LAST_MOVES_SQL),
      admissions: all(ADMISSIONS_SQL),
      shadowEntries: all(SHADOW_ENTRY_SQL),
      lastRound: Number(all<{ round: number }>(LAST_ROUND_SQL)[0]?.round ?? 0),
      carriedRounds: carriedShadowRounds(all(LAST_RESET_SQL), all(SHADOW_ENTRY_EVENT_SQL)),
    });
  } catch (error) {
    throw new StorageError(`cannot read the corpus lifecycle from ${file}: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  } finally {
    sqlite?.close();
  }
}
